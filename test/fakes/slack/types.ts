/**
 * The public record types of the fake Slack: what a test configures (channels, users, options)
 * and what the fake records (messages, files, downloads, calls, failures). What goes to the app
 * (slash commands, events, Socket Mode) is in inbound-types.ts. Re-exported by
 * test/fakes/slack.ts.
 */
import type { FakeSlackStream, StreamingSettings } from './stream-types.ts';

/** A conversation the fake knows. */
export interface FakeSlackChannel {
  /** e.g. `C0GENERAL`. */
  id: string;
  /** Without `#`, e.g. `general`; `directmessage` for a DM (what slash commands say as `channel_name`). */
  name: string;
  isPrivate?: boolean;
  /** User ids in the channel; every known user when absent. */
  members?: string[];
  /** False: the bot is not in the channel (`not_in_channel` on posts). Default true. */
  botIsMember?: boolean;
  /** A direct message between {@link imUser} and the bot (id `D…`; see {@link FakeSlack.openIm}). */
  isIm?: boolean;
  /** The user of a DM. */
  imUser?: string;
  /**
   * False: chat.startStream here is `channel_type_not_supported`; a string: that error instead
   * (e.g. `restricted_action_thread_locked`, `messages_tab_disabled`). Default: streaming works.
   */
  streaming?: false | string;
  /** False: assistant.threads.setStatus here is `method_not_supported_for_channel_type`. */
  assistantStatus?: false;
  /** The workspace it belongs to (another installed workspace's `T…`); default the fake's `teamId`. */
  team?: string;
}

/** A user of the workspace. */
export interface FakeSlackUser {
  /** e.g. `U0ALICE`. */
  id: string;
  name: string;
  /** True: an admin of every workspace the user is in; a list: of those workspaces only (Enterprise Grid). */
  isAdmin?: boolean | string[];
  /** The workspace the user belongs to; default the fake's `teamId`. */
  team?: string;
  /** Further workspaces the same user is in (an Enterprise Grid user: one id in several workspaces). */
  alsoIn?: string[];
  /** The user's language, as users.info gives it with `include_locale` (default `en-US`). */
  locale?: string;
}

/** Rate limits the fake applies; see {@link FakeSlackOptions.rateLimits}. */
export interface RateLimitRules {
  /** `chat.update` per workspace: at most `limit` calls in any `windowMs` (sliding window). Default 50 / 60,000 ms (tier 3). */
  chatUpdate: { limit: number; windowMs: number };
  /** `chat.postMessage` per channel: a token bucket refilled with `perSecond` tokens a second, holding at most `burst`. Default 1/s, burst 3. */
  postMessage: { perSecond: number; burst: number };
  /** `chat.startStream` per workspace (tier 2, 20+ a minute). Default 20 / 60,000 ms. */
  startStream: { limit: number; windowMs: number };
  /** `chat.appendStream` per workspace (tier 4, 100+ a minute). Default 100 / 60,000 ms. */
  appendStream: { limit: number; windowMs: number };
  /** `chat.stopStream` per workspace (tier 2). Default 20 / 60,000 ms. */
  stopStream: { limit: number; windowMs: number };
  /** `users.info` per workspace (tier 4, 100+ a minute). Default 100 / 60,000 ms. */
  usersInfo: { limit: number; windowMs: number };
  /** `users.list` per workspace (tier 2, 20+ a minute). Default 20 / 60,000 ms. */
  usersList: { limit: number; windowMs: number };
}

/** Options of {@link FakeSlack.start}; the streaming ones are documented on {@link StreamingSettings}. */
export interface FakeSlackOptions extends Partial<StreamingSettings> {
  /** The OAuth app's credentials (oauth.ts; default random). */
  oauth?: { clientId?: string; clientSecret?: string };
  /** The one bot token accepted besides installed workspaces' (oauth.ts). Default a random `xoxb-fake-…`. */
  botToken?: string;
  /** The one app-level token accepted (only by `apps.connections.open`). Default a random `xapp-1-<appId>-…`. */
  appToken?: string;
  /** Interval of the fake's WebSocket pings to each Socket Mode connection, in ms; 0 = never. Default 10,000 (Slack's own interval is undocumented). */
  socketPingIntervalMs?: number;
  /** Secret slash commands are signed with. Default random. */
  signingSecret?: string;
  /** The (deprecated) verification token sent as `token` in slash-command bodies. */
  verificationToken?: string;
  teamId?: string;
  teamDomain?: string;
  botUserId?: string;
  botId?: string;
  appId?: string;
  /** Default: {@link DEFAULT_CHANNELS}. */
  channels?: FakeSlackChannel[];
  /** Default: {@link DEFAULT_USERS}. */
  users?: FakeSlackUser[];
  rateLimits?: Partial<RateLimitRules>;
  /** Longest accepted `text`, in UTF-16 code units as sent. Default 4,000. */
  maxTextChars?: number;
  /** Slack's ack deadline for slash commands, in ms. Default 3,000. */
  ackTimeoutMs?: number;
  /** Slack-side clock (ms since the epoch): message ts, rate-limit windows, response_url expiry. Default `Date.now`. */
  now?: () => number;
  /**
   * The bot token's scopes. Every Web API method checks the scope it needs (missing:
   * `{ ok: false, error: 'missing_scope', needed, provided }`), file downloads need
   * `files:read`, and an event subscription needs its scope. Default
   * {@link DEFAULT_BOT_SCOPES}: every scope a method of the fake needs (not `chat:write.public`).
   */
  scopes?: string[];
  /**
   * The app's bot event subscriptions, as named in a manifest: `app_mention`, `message.im`,
   * `message.channels`, `message.groups`, `message.mpim`. Sending an event of another type throws.
   * Default {@link DEFAULT_BOT_EVENTS}: all of them.
   */
  botEvents?: string[];
  /**
   * The app's experience for AI apps (agent.ts): `agent` (`features.agent_view`, the default),
   * `assistant` (`features.assistant_view`) or `none`; it decides which AI-app events Slack sends.
   */
  appView?: 'agent' | 'assistant' | 'none';
  /** Whether the app's Home tab is on (`features.app_home.home_tab_enabled`); default true. */
  homeTab?: boolean;
}

/** One state of a message: as posted, then after each `chat.update` (and each write of a stream: start, append, stop). */
export interface MessageRevision {
  /** The text as sent (Slack-escaped). */
  text: string;
  blocks: unknown[] | undefined;
  /** Fake-clock ms when it was stored. */
  at: number;
  method: string;
}

/** A message in a channel. */
export interface FakeSlackMessage {
  channel: string;
  ts: string;
  /** The parent's ts for a reply in a thread. */
  threadTs: string | undefined;
  /** Author user id (the bot's user id for the bot's messages). */
  user: string;
  botId: string | undefined;
  /** Current text as sent (Slack-escaped: `&amp;`, `&lt;`, `&gt;`); {@link unescapeSlack} shows what users read. */
  text: string;
  blocks: unknown[] | undefined;
  /** File ids shared with the message. */
  files: string[];
  /** Every state, oldest first; `revisions[0]` is the post. */
  revisions: MessageRevision[];
  deleted: boolean;
  /** How it got there: the bot's methods, a user (postUserMessage, the event builders), or another app (botMessageEvent). */
  via:
    | 'chat.postMessage'
    | 'chat.startStream'
    | 'files.completeUploadExternal'
    | 'response_url'
    | 'user'
    | 'other_app'
    /** The root Slack makes of an assistant thread (agent.ts), the app's. */
    | 'assistant_thread';
  /** For a message made by chat.startStream: its stream (state, every write with its time); otherwise undefined. */
  stream: FakeSlackStream | undefined;
  /** Mentions Slack would render from the current text and blocks (each once), e.g. `<!channel>`, `<@U123>`. */
  mentions: string[];
}

/**
 * A file: announced by the bot with `files.getUploadURLExternal` (`origin: 'upload'`), or
 * shared by a user ({@link FakeSlack.addUserFile}, `origin: 'user'`). Both are served at
 * {@link urlPrivate} / {@link urlPrivateDownload} to a bot token with `files:read`.
 */
export interface FakeSlackFile {
  /** `F` and 10 characters of [0-9A-F]. */
  id: string;
  origin: 'upload' | 'user';
  /** The file name (Slack's `name`). */
  filename: string;
  /** Real size in bytes: declared by the upload, or of the user file's bytes. */
  length: number;
  /** The `size` Slack reports in file objects; equals {@link length} unless a test made it lie. */
  size: number;
  altText: string | undefined;
  title: string | undefined;
  /** The bytes (received at the upload URL, or given); undefined for a generated ({@link streamBytes}) file or before the upload. */
  data: Buffer | undefined;
  /** A user file whose {@link length} bytes are generated on each download, 64 KiB at a time, never held in memory (see {@link generatedBytes}). */
  streamBytes: number | undefined;
  /** Content type (the upload's multipart part or request type; a user file's `mimetype`). */
  contentType: string | undefined;
  /** Slack's `filetype`, e.g. `png`, `jpg`, `gif`, `pdf`, `text`, `binary`. */
  filetype: string;
  /** Who shared it: the bot's user id for uploads. */
  user: string;
  /** Seconds since the epoch (Slack-side clock). */
  created: number;
  /** `<baseUrl>/files-pri/<team>-<id>/<name>`. */
  urlPrivate: string;
  /** `<baseUrl>/files-pri/<team>-<id>/download/<name>`. */
  urlPrivateDownload: string;
  /** `<baseUrl>/files/<user>/<id>/<name>`: a link users paste (a web page, not the bytes). */
  permalink: string;
  completed: boolean;
  /** Where it was last shared (`files.completeUploadExternal`, or the user's message). */
  channel: string | undefined;
  threadTs: string | undefined;
  messageTs: string | undefined;
  /**
   * Every message that shares it, oldest first: what files.info's `channels` / `groups` / `ims`
   * and `shares` are made of (file-shares.ts). A user's file in none is private to its owner.
   */
  shares: FileShare[];
}

/** One message sharing a file: its conversation, its ts, and its thread's when it is a reply. */
export interface FileShare {
  channel: string;
  ts: string;
  threadTs: string | undefined;
}

/** One GET (or HEAD) of a file's `url_private` / `url_private_download`. */
export interface FileDownload {
  /** The file id in the URL (also for unknown files). */
  fileId: string;
  /** The request path. */
  path: string;
  /** The bot token with `files:read` came as `Authorization: Bearer`: the bytes were served. Otherwise Slack's login redirect. */
  authorized: boolean;
  /** HTTP status answered: 200, 302 (to the login page), 404 (no such file). */
  status: number;
  /** Bytes of the file written to the response so far. */
  bytesSent: number;
  /** The whole body was sent. */
  completed: boolean;
  /** The client closed the connection before the body was complete. */
  aborted: boolean;
  /** Fake-clock ms. */
  at: number;
}

/** A message only one user sees. */
export interface FakeSlackEphemeral {
  channel: string;
  user: string;
  /** Its `message_ts` (what chat.postEphemeral answers; a button press on it names it). */
  ts: string;
  /** The `thread_ts` it was posted with, if any. */
  threadTs: string | undefined;
  /** As sent (Slack-escaped). */
  text: string;
  blocks: unknown[] | undefined;
  at: number;
  via: 'chat.postEphemeral' | 'response_url';
  /** False once a response_url deleted or replaced it (a replacement is a new record with the same ts). */
  shown: boolean;
}

/** One POST to a `response_url` (also refused ones). */
export interface ResponseUrlPost {
  /** HTTP status the fake answered: 200, 400 (bad payload) or 404 (used, expired, unknown). */
  status: number;
  /** Slack's error for a refused post, e.g. `used_url`. */
  error: string | undefined;
  /** `ephemeral` unless the body said `in_channel` (Slack's default). */
  responseType: 'ephemeral' | 'in_channel';
  /** As sent (Slack-escaped). */
  text: string;
  body: Record<string, unknown>;
  at: number;
}

/** A `response_url` issued for one slash command or button press. */
export interface ResponseUrl {
  id: string;
  url: string;
  /** The slash command, or `block_actions` for a button press. */
  command: string;
  /** For a button press: the ts of the pressed message (`replace_original` / `delete_original` act on it). */
  messageTs?: string;
  /** For a button press: the pressed message is an ephemeral one. */
  ephemeral?: boolean;
  channel: string;
  user: string;
  issuedAt: number;
  posts: ResponseUrlPost[];
}

/** One Web API call as received. */
export interface SlackApiCall {
  method: string;
  /** Parameters (form values are strings; `token` removed). */
  params: Record<string, unknown>;
  /** Where the token came from. */
  auth: 'header' | 'body' | 'none';
  /** Which token it was: a bot token (the fake's, or an installed workspace's), the app-level token, another one, or none. */
  tokenType: 'bot' | 'app' | 'unknown' | 'none';
  /** The token itself, as sent (to tell which workspace's token a call used). */
  token?: string | undefined;
  /** The workspace a bot token acts in (the fake's `teamId`, or the installed workspace's; undefined for an org-wide token). */
  team?: string | undefined;
  /** HTTP status answered (200, or 429 when rate limited); 0 for a call left unanswered (`hangNext`). */
  status: number;
  ok: boolean;
  error: string | undefined;
  at: number;
  /** Position among all calls and uploads (shared counter with {@link FakeSlack.uploads}). */
  seq: number;
}

/** Something Slack itself would show a user as a failure of the app. */
export interface PlatformFailure {
  /**
   * `operation_timeout`: no ack within 3 s (HTTP, or an ack by envelope_id over the socket);
   * `http_error`: the ack was not HTTP 200; `dispatch_failed`: the app could not be reached
   * (no HTTP connection, or no open Socket Mode connection); `invalid_response`: an ack Slack
   * could not use (a `response_action: 'update'` whose view Slack refuses).
   */
  kind: 'operation_timeout' | 'http_error' | 'dispatch_failed' | 'invalid_response';
  /** The slash command (`/chat`), for an event its type (`app_mention`, `message`), for a button press `block_actions`. */
  command: string;
  detail: string;
  /** The event's `event_id`, for an event. */
  eventId?: string;
}
