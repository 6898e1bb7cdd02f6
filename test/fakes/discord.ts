/**
 * A local fake of Discord (REST API v10 + gateway + attachment CDN), for tests. discord.js
 * runs unmodified against it: give the client `rest: { api: fake.apiUrl }` and log in with
 * `fake.token` (with `Partials.Channel`, or discord.js drops DMs).
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port) with a WebSocket gateway
 * (`ws`) at `/gateway`, and it enforces what Discord enforces, answering with Discord's
 * status codes and error shapes (`{ message, code, errors? }`):
 *
 * - bot routes need `Authorization: Bot <token>` (401, code 0); interaction callbacks and
 *   interaction webhooks are authenticated by the interaction token in the path instead;
 * - the first interaction response must come within `responseWindowMs` (3 s) of the dispatch
 *   (else 404, code 10062 Unknown interaction), only once (400, code 40060); the interaction
 *   token works on webhook routes for `tokenTtlMs` (15 min), then 401 code 50027;
 * - message bodies: `content` ≤ 2000 code points, ≤ 10 embeds within Discord's embed limits
 *   (≤ 25 fields each, ≤ 6000 characters in all), components (≤ 5 action rows of ≤ 5 buttons,
 *   `custom_id` ≤ 100 and unique, label ≤ 80),
 *   ≤ 10 files of at most `maxFileBytes` each (413, code 40005), no empty messages (50006),
 *   `allowed_mentions` well formed (`replied_user` a boolean); form errors are 400 code 50035
 *   "Invalid Form Body" with the nested `errors` tree;
 * - Components V2 (flag `1 << 15`, discord/components-v2.ts): no `content` or `embeds` with it
 *   (50035 `MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2`), set by an edit only with them
 *   reset and never removed, the tree's types and limits (40 components, 4,000 characters of
 *   Text Displays, 1–10 gallery items), `attachment://` names matched to the message's files;
 *   stored with ids and media resolved to the files' CDN URLs, which `attachments` then leaves
 *   out (`FakeMessage.text` and `.buttons` read such a message);
 * - replies (`message_reference`): the referenced message must be in the same channel (50035
 *   `MESSAGE_REFERENCE_UNKNOWN_MESSAGE`) unless `fail_if_not_exists: false`; the replied author
 *   is pinged without `allowed_mentions`, else only with `replied_user: true`; the bot edits
 *   only its own messages (403, 50005) and deletes no one else's (403, 50013);
 * - creates and edits of messages count against rate limits in one of two modes
 *   (`rateLimitMode`, `setRateLimitMode`): `shared` (default), one hidden budget per channel
 *   (`messageBudget`, 5 per 5 s; DMs and threads too) spent by every write, interaction
 *   webhooks included; `documented`, a bucket per interaction token for its webhook routes
 *   (`webhookBudget`, 5 per 2 s) and one per channel for bot-token writes (5 per 5 s). Over a
 *   budget, 429 with `retry-after`, `x-ratelimit-scope: user` and `x-ratelimit-*` headers (the
 *   headers of accepted writes report the same bucket, `x-ratelimit-bucket` one hash per kind
 *   of bucket), which discord.js waits out and retries; `rateLimits` records each 429;
 * - application command JSON (`PUT /applications/:app[/guilds/:guild]/commands`) is validated
 *   like Discord does (names, lengths, option counts and order, choices; message and user
 *   commands: any case and spaces, no description or options, at most 15 of each type);
 * - gateway intents: IDENTIFY with a privileged intent the app is not approved for
 *   (`privilegedIntents`) is closed with 4014; channel and thread events need GUILDS, message
 *   events GUILD_MESSAGES (guild channels, threads) or DIRECT_MESSAGES (DMs); without
 *   MESSAGE_CONTENT a message's `content`, `embeds`, `attachments` and `components` arrive
 *   empty unless it is in a DM, is the bot's own or mentions the bot (a pinging reply does),
 *   the nested `referenced_message` judged on its own; REST reads follow the same rule by the
 *   app's approval;
 * - the CDN serves attachment URLs only with their exact signature (`?ex=&is=&hm=&`, else 404
 *   "This content is no longer available."), streams them in 64 KiB chunks with backpressure,
 *   stops when the client goes away, and states the real length in `Content-Length`.
 *
 * - interactions: a command's file options arrive as attachment options (type 11,
 *   `data.resolved.attachments`, served by the CDN); an autocomplete (type 4) takes only a
 *   type-8 answer of ≤ 25 choices (names 1–100, values ≤ 100 characters) within the window; a
 *   button press (type 3) takes 4, 5, 6 (deferred update) or 7 (update of the message with
 *   the button), and after 6/7 `@original` is that message; a message command (type 2, `data.type`
 *   3: `dispatchMessageCommand`) carries its target in `data.resolved.messages`, content
 *   included whatever the intents; a command or a press may be answered with a modal (9),
 *   checked like Discord does (title ≤ 45, 1–5 Labels or Action Rows of Text Inputs), which
 *   `submitModal` submits as Discord's client does (required inputs, lengths) as a MODAL_SUBMIT
 *   (type 5) that takes only 4 or 5 (6/7 for a press's modal);
 *   a registered command with `default_member_permissions` exists only for members who hold
 *   every one of those permissions (Administrator holds all) or whom an override a server
 *   admin set under Integrations allows (`setCommandPermissions`): Discord's client neither
 *   lists nor sends it for anyone else, so `dispatchInteraction` throws for them;
 * - members' permissions: a guild channel's overwrites (`setPermissionOverwrites`, announced as
 *   CHANNEL_UPDATE and sent as `permission_overwrites`) apply to the @everyone role's and the
 *   member's roles' permissions as Discord computes them (a thread takes its parent's); an
 *   interaction carries the result as `member.permissions` (unless a test gives them), and a
 *   user's message needs Send Messages (Send Messages in Threads in a thread), or Discord's
 *   client would not send it; `GET /guilds/:id/members/:user` answers a member (10007 for none);
 *
 * - gateway: IDENTIFY with `shard: [id, count]`; a guild's events go to shard
 *   `(guild_id >> 22) % count` only, DMs to shard 0; RESUME continues a closed session with its
 *   intents and shard;
 *
 * Tests script gateway faults: `dropGateway` (an outage: sessions closed with a resumable code
 * or cut, new connections refused with 503 or held without HELLO) and `restoreGateway`;
 * `closeGatewaySessions(code)` (4004 when the token was reset); and read `gatewayIdentifies`,
 * `gatewayResumes`, `gatewaySessions`, `refusedGatewayConnections`.
 *
 * Tests script users: `postUserMessage` (a user's, another bot's or a webhook's message, with
 * mentions, files, as a reply), `openDm`, `addThread`, `addChannel`, `dispatchInteraction`
 * (with file options; `withoutInvoker` for a malformed one with neither `member` nor `user`),
 * `dispatchAutocomplete` (its `outcome` resolves with the choices or as expired), `pressButton`
 * (a button of one of the bot's messages, by `custom_id`).
 *
 * It records what a test needs: every REST request (`requests`), every accepted create/edit
 * with its `allowed_mentions` and whom it would have pinged (`writes`), every message with
 * its revisions (reply reference included) and attachments, every interaction with its
 * callbacks, its original response and its follow-ups, every typing indicator (`typing`) and
 * every CDN download, completed or cut short (`downloads`). `events` announces requests,
 * callbacks, writes, 429s, identifies, user messages, typing and downloads.
 *
 * The code is split by protocol area under `discord/` (a failing test's cause is one short
 * file away): `fake.ts` the facade; `state.ts` the world it holds; `model.ts` and `types.ts`
 * the public records; `wire.ts` the JSON shapes Discord sends; `gateway.ts` sessions, intents
 * and dispatches; `http.ts` request plumbing; `routes/*.ts` the REST areas (identity and DMs,
 * commands, interactions, channels, CDN); `writes.ts` the bot's creates and edits;
 * `user-actions.ts` what users do; `interaction-payload.ts` commands and autocomplete;
 * `components.ts` button presses; `modals.ts` message commands and modals; `command-permissions.ts` who sees a command;
 * `member-permissions.ts` members' permissions in a channel (overwrites); `routes/members.ts` a guild's members; `attachments.ts` files and signed URLs; `validation.ts`
 * and `command-validation.ts` Discord's form checks; `limits.ts` the rate-limit buckets and their modes;
 * `pressure.ts` scripted long waits (a 429 naming an hour, headers announcing a far reset, a global 429).
 */

export type { CommandPermission } from './discord/command-permissions.ts';
export { DEFAULT_APPLICATION_ID, DEFAULT_GUILD_ID, DEFAULT_TOKEN, DEFAULT_USER } from './discord/constants.ts';
export { FakeDiscord } from './discord/fake.ts';
export type {
  DropGatewayOptions,
  GatewayIdentify,
  GatewayOutageMode,
  GatewayResume,
  GatewaySessionInfo,
} from './discord/gateway.ts';
export { shardOfGuild } from './discord/gateway.ts';
export type { PermissionOverwrite } from './discord/member-permissions.ts';
export type { MessageCommandOptions, SubmitModalOptions } from './discord/modals.ts';
export type {
  CallbackRecord,
  FakeAttachment,
  FakeChannel,
  FakeUser,
  InteractionType,
  MessageReference,
  MessageRevision,
  Pings,
} from './discord/model.ts';
export { ChannelType, FakeAutocomplete, FakeInteraction, FakeMessage, MessageFlag } from './discord/model.ts';
export type { ChannelPressure, GlobalPressure } from './discord/pressure.ts';
export type {
  AutocompleteChoice,
  AutocompleteOutcome,
  DispatchAutocompleteOptions,
  DispatchInteractionOptions,
  FakeCommand,
  FakeDiscordEvents,
  FakeDiscordOptions,
  FakeDownload,
  FakeRequestRecord,
  FakeTyping,
  FakeWrite,
  Fault,
  InvokingUser,
  Json,
  MessageBudget,
  OptionValue,
  PostUserMessageOptions,
  PressButtonOptions,
  RateLimitMode,
  RateLimitRecord,
  UserAttachmentOptions,
} from './discord/types.ts';
export { snowflake } from './discord/util.ts';
