/**
 * A local fake of Slack for tests: the Web API (native text streaming and AI loading statuses
 * included), the file upload URL, users' files and their downloads, `response_url`s, and what
 * Slack sends to an app — signed slash commands, Events API events and button presses
 * (`block_actions`) over HTTP, and the same over Socket Mode. @slack/bolt, @slack/web-api (its
 * `chatStream` helper too) and @slack/socket-mode run unmodified against it.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port), split by protocol area under
 * test/fakes/slack/ so that a failing test's cause is one short file away:
 *
 * | file | what |
 * |---|---|
 * | fake.ts | {@link FakeSlack}: what Slack sends to the app (slash commands, events, button presses), event builders, streaming settings |
 * | agent-facade.ts | its AI-app and App Home part: the tabs' and agent's events, suggested prompts, titles, Home tab views |
 * | core.ts | its base: start/close, HTTP routing, setup (channels, DMs, users, files, scopes), inspection |
 * | types.ts, inbound-types.ts | public record types; what goes to the app and comes back |
 * | stream-types.ts, interaction-types.ts | streaming settings, streams, loading statuses; button presses |
 * | workspace.ts | the shared state: identity, channels, users, messages, files, ts values |
 * | web-api.ts | `POST|GET /api/<method>`: parameters, token, scope, dispatch, `{ ok, error }` / 429, scripted hangs |
 * | chat.ts, files.ts, conversations.ts, identity.ts | the Web API methods, by family |
 * | file-shares.ts | where a file is shared (files.info's `channels` / `groups` / `ims` / `shares`), as the bot token sees it |
 * | streaming.ts | `chat.startStream` / `appendStream` / `stopStream`: stream state, expiry, chunks, refusals |
 * | assistant.ts | `assistant.threads.setStatus`: loading statuses and when users stop seeing them |
 * | agent.ts | the agent / assistant views: which events Slack sends, their builders, `setSuggestedPrompts`, `setTitle` |
 * | home.ts | `views.publish`: Home tab views checked as Slack does (100 blocks, Block Kit limits, 250 kB) |
 * | home-actions.ts | presses of a Home tab's buttons: `block_actions` with `container.type: 'view'`, no `response_url` |
 * | scopes.ts | the one table of method scopes; event subscriptions and their scopes |
 * | blocks.ts | Block Kit validation (`invalid_blocks`, `invalid_blocks_format`) |
 * | limits.ts | rate limits: tier 3 `chat.update`, per-channel `chat.postMessage`, tier 2/4 streaming, tier 4 `users.info`, tier 2 `users.list` |
 * | pressure.ts | scripted 429s of any method, by channel or parameters (e.g. `Retry-After: 3600` on one channel's posts) |
 * | upload.ts | `POST /upload/<file_id>`: the bytes of `filesUploadV2` |
 * | downloads.ts | users' files; `url_private` / `url_private_download` (or Slack's sign-in redirect) |
 * | response-url.ts | `POST /response/<id>`: 5 uses in 30 minutes; a press's `replace_original` / `delete_original` |
 * | inbound.ts | signing; slash commands POSTed to the app |
 * | events.ts | builders of the events people write (app_mention, DM messages, edits, deletions…) |
 * | events-api.ts | `event_callback` POSTed to the app; subscriptions; retries; url_verification |
 * | uninstall.ts | the workspace removing the app: `app_uninstalled`, `tokens_revoked`, the bot token refused `token_revoked` |
 * | interactivity.ts | `block_actions` payloads POSTed to the app (or in `interactive` envelopes) |
 * | shortcuts.ts | `message_action` payloads (message shortcuts) POSTed to the app |
 * | views.ts | trigger_ids, `views.open` (modals checked as Slack does) and `view_submission` payloads |
 * | socket-mode.ts | `apps.connections.open` and the WebSocket: hello, envelopes, acks, pings |
 * | oauth.ts | the OAuth install: the authorize page's approval (`oauth.approve`), `oauth.v2.access` (codes, rotation, refresh), several workspaces' tokens |
 * | wire.ts | escaping, mentions, ts format, parameter helpers |
 *
 * Routes:
 * - `POST|GET /api/<method>`: bodies `application/x-www-form-urlencoded` (what @slack/web-api
 *   sends; nested values such as `blocks` or `files` arrive as JSON strings), `application/json`
 *   or `multipart/form-data`; query parameters are read too. The token comes as
 *   `Authorization: Bearer <token>`, or as a `token` field of a form body (as on Slack, a token
 *   inside a JSON body is not read). Answers are HTTP 200 `{ ok: true, … }` / `{ ok: false, error }`
 *   (`not_authed`, `invalid_auth`, `missing_scope`, `unknown_method`, `invalid_arguments`, …),
 *   except rate limits: HTTP 429 with a `Retry-After` header in whole seconds and
 *   `{ ok: false, error: 'ratelimited' }`, which is what @slack/web-api reads (it waits
 *   `Retry-After`, then retries). Methods: api.test, auth.test, apps.connections.open,
 *   chat.postMessage / update / delete / postEphemeral, chat.startStream / appendStream /
 *   stopStream, assistant.threads.setStatus / setSuggestedPrompts / setTitle,
 *   files.getUploadURLExternal / completeUploadExternal / info, users.info / list,
 *   conversations.info / history / replies / members, views.open / publish, oauth.v2.access (no token).
 * - `POST /upload/<file_id>`: the `upload_url` that `files.getUploadURLExternal` hands out. Takes
 *   the raw bytes, or a multipart form with one file part (what @slack/web-api's `filesUploadV2`
 *   sends: a part named `body`); the byte count must equal the declared `length` (HTTP 400
 *   otherwise). No token needed (the URL is the secret), as on Slack.
 * - `GET|HEAD /files-pri/<team>-<file>/[download/]<name>`: a file's bytes, to the bot token with
 *   `files:read`; otherwise HTTP 302 to Slack's sign-in page (`GET /`, HTTP 200 `text/html`).
 *   `GET /files/<user>/<file>/<name>` (a permalink) is a web page, never the bytes.
 * - `POST /response/<id>`: the `response_url` of one slash command or button press: JSON
 *   `{ text, blocks, response_type }`; at most 5 uses within 30 minutes (then HTTP 404
 *   `used_url` / `expired_url`). A press's URL also takes `replace_original: true` (replaces the
 *   pressed message, stored or ephemeral) and `delete_original: true` (deletes it).
 * - Slack → app: slash commands (form), Events API events (JSON) and button presses (form with
 *   one `payload` field holding the `block_actions` JSON: `type`, `user`, `api_app_id`, `token`,
 *   `container`, `trigger_id`, `team`, `enterprise`, `is_enterprise_install`, `channel`,
 *   `message` (not for an ephemeral message), `state`, `response_url`, `actions: [{ action_id,
 *   block_id, text, value, style, type: 'button', action_ts }]`) and message shortcuts (the
 *   same form, `message_action` JSON: shortcuts.ts), signed with
 *   `x-slack-request-timestamp` / `x-slack-signature`, POSTed to `<botUrl>/slack/events`.
 * - Socket Mode: `apps.connections.open` takes only the app-level token (`xapp-…`; the bot token
 *   is `not_allowed_token_type`, as is the app token on any other method) and answers
 *   `{ ok: true, url: 'ws://127.0.0.1:PORT/socket-mode?ticket=…&app_id=…' }`. That URL is a
 *   WebSocket endpoint (the `ws` package) speaking what @slack/socket-mode expects: a `hello`
 *   message on connect; envelopes `{ envelope_id, type: 'slash_commands' | 'events_api' |
 *   'interactive', payload, accepts_response_payload, … }`; acks `{ envelope_id, payload? }` from the app;
 *   protocol-level pings every `socketPingIntervalMs` (and a pong for every ping of the app);
 *   `disconnect` messages on request ({@link FakeSlack.sendSocketDisconnect}). Each URL's ticket
 *   works once; an unknown or used ticket is refused at the upgrade with HTTP 401 (the fake's
 *   choice: Slack documents no status for it).
 *
 * Several workspaces (oauth.ts): `addTeam` adds a workspace's channels and users; a workspace
 * installed through `oauth.approve` + `oauth.v2.access` gets a bot token of its own, and every
 * Web API call acts in its token's workspace (`calls[].token`, `calls[].team`): another
 * workspace's channel is `channel_not_found`, its user `user_not_found`, an unknown or revoked
 * token `invalid_auth`, an expired one `token_expired`; `auth.test` names the token's workspace;
 * events, slash commands and presses carry the workspace of their channel.
 *
 * What Slack enforces, the fake enforces (docs/platform-limits.md):
 * - scopes: every Web API method needs its bot scope (scopes.ts; `scopes` option, `setScopes`),
 *   else HTTP 200 `{ ok: false, error: 'missing_scope', needed, provided }` and nothing done;
 *   answers to the bot token carry `X-OAuth-Scopes`. `chat:write.public` lets chat.postMessage
 *   post in public channels without the bot. File bytes need `files:read`.
 * - `text` longer than `maxTextChars` (default 4,000) → `msg_too_long`. Slack documents a
 *   40,000-character truncation, but `msg_too_long` shows up near 4,000 in practice; the fake
 *   takes the strict line and counts UTF-16 code units of the text AS SENT (so `&amp;` counts 5),
 *   which is never more lenient than Slack.
 * - `blocks`: not JSON / not an array → `invalid_blocks_format`; more than 50 blocks, a section
 *   text of 3,001+ characters, a header over 150, an image without `alt_text`, an unknown block
 *   type… → `invalid_blocks` with `response_metadata.messages` naming the JSON pointer.
 * - rate limits: `chat.update` at most 50 calls per 60 s per workspace (tier 3; a sliding
 *   window), `chat.postMessage` about 1 a second per channel with a burst of 3 (a token bucket),
 *   `chat.startStream` and `chat.stopStream` 20 per 60 s (tier 2), `chat.appendStream` 100 per
 *   60 s (tier 4), each per workspace; all configurable (`rateLimits`, `setRateLimits`);
 *   `rateLimitNext` scripts one-shot 429s.
 * - silence: `hangNext(method, count)` leaves the next `count` calls of a method (Infinity:
 *   all until `stopHanging`) unanswered, recorded with `status: 0` and nothing done, until the
 *   client gives up or the fake closes.
 * - refusals: `failNext(method, error, { count, when })` answers the next `count` calls of a
 *   method whose parameters `when` accepts `{ ok: false, error }` (after the token and scope
 *   checks), nothing done, until `stopFailing`: Slack refusing what the fake would take.
 * - `channel_not_found` for channels it does not know, `not_in_channel` where the bot is not a
 *   member; `message_not_found` for a wrong `ts`; `cant_update_message` / `cant_delete_message`
 *   for messages the bot did not post; `invalid_thread_ts` / `thread_not_found` for bad threads.
 * - streaming (streaming.ts; options and {@link FakeSlack.setStreaming}, stream-types.ts): scope
 *   `chat:write`; `thread_ts` required (`streamTopLevel` allows top-level streams outside DMs);
 *   outside DMs `recipient_team_id` then `recipient_user_id` required
 *   (`missing_recipient_team_id` / `missing_recipient_user_id`); `markdown_text` (at most 12,000
 *   characters, else `invalid_arguments`: the fake's choice) or `chunks` (`markdown_text`,
 *   `task_update`, `plan_update`, `blocks`; else `invalid_chunks`), never both
 *   (`cannot_provide_both_markdown_text_and_chunks`), always the stream's form
 *   (`streaming_mode_mismatch`); appends need one (`markdown_text_or_chunks_required`). A stream
 *   is closed by chat.stopStream, by Slack after `streamExpiryMs` (default 5 minutes, appends or
 *   not; optional `streamIdleExpiryMs`), or by its user ({@link FakeSlack.stopStreamByUser});
 *   then append / stop are `message_not_in_streaming_state` (`stopped_by_user` for the user's
 *   stop), and chat.update works again. While it streams, chat.update is
 *   `streaming_state_conflict` and chat.delete `cant_delete_message` (measured by others against
 *   the live API; undocumented). `streaming: false` refuses all three with `streamingRefusal`
 *   (default `unknown_method`, e.g. `feature_not_enabled`); conversation types outside
 *   `streamingChannelTypes`, or a channel's `streaming: false`, are `channel_type_not_supported`
 *   (a channel's `streaming: '<error>'` gives that error, e.g. `restricted_action_thread_locked`).
 * - assistant.threads.setStatus (assistant.ts): scope `chat:write` or `assistant:write`;
 *   `invalid_thread_ts`, `method_not_supported_for_channel_type` (`assistantStatusChannelTypes`,
 *   a channel's `assistantStatus: false`); a status shows until the bot posts in the thread, it
 *   is cleared (`''`) or 2 minutes pass ({@link FakeSlack.assistantStatus}).
 * - AI apps (agent.ts; `appView` option, {@link FakeSlack.setAgent}): `app_context_changed` only
 *   to agent-view apps, `assistant_thread_*` only to assistant-view ones; setSuggestedPrompts
 *   takes 1 to 4 prompts, and with `thread_ts` in the agent view "silently fails" (ok, shown
 *   nowhere); setTitle a non-empty title of an existing thread; both scope `assistant:write`.
 * - views.publish (home.ts): a `home` view of 1 to 100 blocks within Block Kit's limits, at most
 *   250 kB; `not_enabled` when the app's Home tab is off (`homeTab`).
 * - the ack deadline: 3 s for slash commands, events and button presses, over HTTP (status 200)
 *   or the socket (an ack carrying the `envelope_id`); anything else is a platform failure.
 * - button presses (interactivity.ts): only of a `button` (in an `actions` block or a section's
 *   accessory) that the message has, by a user who can see it (a channel member; the DM's user;
 *   an ephemeral message's one user); anything else throws, since no user could press it.
 * - events: only the event types the app subscribes to (`botEvents`, `setBotEvents`), only with
 *   the subscription's scope, only from channels the bot is in, never an app_mention in a DM —
 *   otherwise the sender or builder throws, since Slack would never send such an event. A retry
 *   of an event is a new request (later timestamp, new signature) with `X-Slack-Retry-Num`.
 *
 * It keeps what a test wants to read: every message (channel, ts, thread_ts, current text,
 * every revision with its time, blocks, files, the mentions Slack would render — users'
 * messages written through the event builders too; a streamed message's `stream`: state,
 * recipient, every start / append / stop with its text and time, task chunks, stop blocks),
 * every file the bot uploaded (`files`: bytes, name, title, alt text) and every user's file
 * (`userFiles`), every download of a file's bytes (`downloads`: authorized, bytes sent,
 * completed, aborted), ephemeral messages (with their ts), `response_url` posts, every API
 * call, every event delivery (`eventDeliveries`), every loading status (`assistantStatuses`),
 * every button press with its ack (`blockActions`), the platform failures Slack would show a
 * user (a slash command, event or button press not acked within 3 s, over HTTP or over the
 * socket), and every Socket Mode connection and envelope with its ack.
 *
 * Not modelled: Slack retrying events by itself (a test sends the retry), the `message.*`
 * echo of the bot's own messages (send {@link FakeSlack.ownMessageEvent}), thumbnails,
 * each workspace's own bot user id (one serves every installed workspace), files, DMs and
 * subscriptions per workspace (shared); how Slack renders `markdown_text` (kept as sent), a limit on a
 * streamed message's total length, `task_display_mode` / `metadata` / `session_status` / icons
 * of streams (accepted, ignored), streams in MPIMs; the rate limits of
 * assistant.threads.setStatus and the rotation of `loading_messages`; interactive elements
 * other than buttons (selects, overflow menus, inputs), modals, global shortcuts, message
 * shortcuts over Socket Mode, and `view_*` payloads;
 * what a press's `response_url` does without `replace_original` beyond posting a new message.
 *
 * Error names the Slack documentation does not give are the fake's choice and say so where
 * they are produced.
 */

export type { AgentSettings, SuggestedPromptsRecord, ThreadTitleRecord } from './slack/agent.ts';
export { DOWNLOAD_CHUNK_BYTES, generatedBytes } from './slack/downloads.ts';
export { FakeSlack } from './slack/fake.ts';
export type { PublishedHome } from './slack/home.ts';
export type { HomeActionInput, HomeActionResult } from './slack/home-actions.ts';
export { signSlackRequest } from './slack/inbound.ts';
export type * from './slack/inbound-types.ts';
export type * from './slack/interaction-types.ts';
export type { RateLimitScope } from './slack/pressure.ts';
export { RESPONSE_URL_MAX_USES, RESPONSE_URL_TTL_MS } from './slack/response-url.ts';
export { DEFAULT_BOT_EVENTS, DEFAULT_BOT_SCOPES, SUBSCRIPTION_SCOPES } from './slack/scopes.ts';
export type {
  MessageShortcutInput,
  MessageShortcutResult,
  SocketMessageShortcutResult,
} from './slack/shortcuts.ts';
export type * from './slack/stream-types.ts';
export { DEFAULT_STREAMING } from './slack/streaming.ts';
export type * from './slack/types.ts';
export type { UninstallEvents } from './slack/uninstall.ts';
export type { FakeSlackView, ViewSubmissionInput, ViewSubmissionResult } from './slack/views.ts';
export { escapeSlack, mentionsIn, unescapeSlack } from './slack/wire.ts';
export { DEFAULT_CHANNELS, DEFAULT_USERS } from './slack/workspace.ts';
