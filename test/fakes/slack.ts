/**
 * A local fake of Slack for tests: the Web API, the file upload URL, users' files and their
 * downloads, `response_url`s, and what Slack sends to an app — signed slash commands and
 * Events API events over HTTP, and the same over Socket Mode. @slack/bolt, @slack/web-api and
 * @slack/socket-mode run unmodified against it.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port), split by protocol area under
 * test/fakes/slack/ so that a failing test's cause is one short file away:
 *
 * | file | what |
 * |---|---|
 * | fake.ts | {@link FakeSlack}: what Slack sends to the app (slash commands, events), event builders |
 * | core.ts | its base: start/close, HTTP routing, setup (channels, DMs, users, files, scopes), inspection |
 * | types.ts, inbound-types.ts | public record types; what goes to the app and comes back |
 * | workspace.ts | the shared state: identity, channels, users, messages, files, ts values |
 * | web-api.ts | `POST|GET /api/<method>`: parameters, token, scope, dispatch, `{ ok, error }` / 429 |
 * | chat.ts, files.ts, conversations.ts, identity.ts | the Web API methods, by family |
 * | scopes.ts | the one table of method scopes; event subscriptions and their scopes |
 * | blocks.ts | Block Kit validation (`invalid_blocks`, `invalid_blocks_format`) |
 * | limits.ts | rate limits: tier 3 `chat.update`, per-channel `chat.postMessage`, scripted 429s |
 * | upload.ts | `POST /upload/<file_id>`: the bytes of `filesUploadV2` |
 * | downloads.ts | users' files; `url_private` / `url_private_download` (or Slack's sign-in redirect) |
 * | response-url.ts | `POST /response/<id>`: 5 uses in 30 minutes |
 * | inbound.ts | signing; slash commands POSTed to the app |
 * | events.ts | builders of the events people write (app_mention, DM messages, edits, deletions…) |
 * | events-api.ts | `event_callback` POSTed to the app; subscriptions; retries; url_verification |
 * | socket-mode.ts | `apps.connections.open` and the WebSocket: hello, envelopes, acks, pings |
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
 *   chat.postMessage / update / delete / postEphemeral, files.getUploadURLExternal /
 *   completeUploadExternal / info, users.info, conversations.info / history / replies.
 * - `POST /upload/<file_id>`: the `upload_url` that `files.getUploadURLExternal` hands out. Takes
 *   the raw bytes, or a multipart form with one file part (what @slack/web-api's `filesUploadV2`
 *   sends: a part named `body`); the byte count must equal the declared `length` (HTTP 400
 *   otherwise). No token needed (the URL is the secret), as on Slack.
 * - `GET|HEAD /files-pri/<team>-<file>/[download/]<name>`: a file's bytes, to the bot token with
 *   `files:read`; otherwise HTTP 302 to Slack's sign-in page (`GET /`, HTTP 200 `text/html`).
 *   `GET /files/<user>/<file>/<name>` (a permalink) is a web page, never the bytes.
 * - `POST /response/<id>`: the `response_url` of one slash command: JSON `{ text, blocks,
 *   response_type }`; at most 5 uses within 30 minutes (then HTTP 404 `used_url` / `expired_url`).
 * - Socket Mode: `apps.connections.open` takes only the app-level token (`xapp-…`; the bot token
 *   is `not_allowed_token_type`, as is the app token on any other method) and answers
 *   `{ ok: true, url: 'ws://127.0.0.1:PORT/socket-mode?ticket=…&app_id=…' }`. That URL is a
 *   WebSocket endpoint (the `ws` package) speaking what @slack/socket-mode expects: a `hello`
 *   message on connect; envelopes `{ envelope_id, type: 'slash_commands' | 'events_api',
 *   payload, accepts_response_payload, … }`; acks `{ envelope_id, payload? }` from the app;
 *   protocol-level pings every `socketPingIntervalMs` (and a pong for every ping of the app);
 *   `disconnect` messages on request ({@link FakeSlack.sendSocketDisconnect}). Each URL's ticket
 *   works once; an unknown or used ticket is refused at the upgrade with HTTP 401 (the fake's
 *   choice: Slack documents no status for it).
 *
 * What Slack enforces, the fake enforces (shared/PLATFORM-LIMITS.md):
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
 *   window), `chat.postMessage` about 1 a second per channel with a burst of 3 (a token bucket);
 *   both configurable (`rateLimits`, `setRateLimits`); `rateLimitNext` scripts one-shot 429s.
 * - `channel_not_found` for channels it does not know, `not_in_channel` where the bot is not a
 *   member; `message_not_found` for a wrong `ts`; `cant_update_message` / `cant_delete_message`
 *   for messages the bot did not post; `invalid_thread_ts` / `thread_not_found` for bad threads.
 * - the ack deadline: 3 s for slash commands and events, over HTTP (status 200) or the socket
 *   (an ack carrying the `envelope_id`); anything else is a platform failure.
 * - events: only the event types the app subscribes to (`botEvents`, `setBotEvents`), only with
 *   the subscription's scope, only from channels the bot is in, never an app_mention in a DM —
 *   otherwise the sender or builder throws, since Slack would never send such an event. A retry
 *   of an event is a new request (later timestamp, new signature) with `X-Slack-Retry-Num`.
 *
 * It keeps what a test wants to read: every message (channel, ts, thread_ts, current text,
 * every revision with its time, blocks, files, the mentions Slack would render — users'
 * messages written through the event builders too), every file the bot uploaded (`files`:
 * bytes, name, title, alt text) and every user's file (`userFiles`), every download of a file's
 * bytes (`downloads`: authorized, bytes sent, completed, aborted), ephemeral messages,
 * `response_url` posts, every API call, every event delivery (`eventDeliveries`), the platform
 * failures Slack would show a user (a slash command or event not acked within 3 s, over HTTP or
 * over the socket), and every Socket Mode connection and envelope with its ack.
 *
 * Not modelled: Slack retrying events by itself (a test sends the retry), the `message.*`
 * echo of the bot's own messages (send {@link FakeSlack.ownMessageEvent}), thumbnails,
 * streaming methods (`chat.startStream` …: unknown_method), multi-workspace installs.
 *
 * Error names the Slack documentation does not give are the fake's choice and say so where
 * they are produced.
 */
export { FakeSlack } from './slack/fake.ts';
export { DEFAULT_CHANNELS, DEFAULT_USERS } from './slack/workspace.ts';
export { RESPONSE_URL_MAX_USES, RESPONSE_URL_TTL_MS } from './slack/response-url.ts';
export { signSlackRequest } from './slack/inbound.ts';
export { escapeSlack, mentionsIn, unescapeSlack } from './slack/wire.ts';
export { DEFAULT_BOT_EVENTS, DEFAULT_BOT_SCOPES, SUBSCRIPTION_SCOPES } from './slack/scopes.ts';
export { DOWNLOAD_CHUNK_BYTES, generatedBytes } from './slack/downloads.ts';
export type * from './slack/types.ts';
export type * from './slack/inbound-types.ts';
