/** Public option, record and event types of the Discord fake (what a test passes and reads). */
import type { IncomingMessage } from 'node:http';
import type { CallbackRecord, FakeInteraction, FakeMessage, FakeUser, Pings } from './model.ts';

/** A JSON object as it travels on the wire. */
export type Json = Record<string, unknown>;

/** Options of {@link FakeDiscord.start}; every one has Discord's real value as its default. */
export interface FakeDiscordOptions {
  /** The bot token accepted (REST `Bot <token>` and gateway IDENTIFY). Default {@link DEFAULT_TOKEN}. */
  token?: string;
  /** The application id (= the bot user's id), a snowflake. Default {@link DEFAULT_APPLICATION_ID}. */
  applicationId?: string;
  /** The bot's username. Default `genbot`. */
  botUsername?: string;
  /**
   * The guild the bot is in: id, the names of its text channels (default `general`), and its
   * language (`preferredLocale`: GUILD_CREATE's `preferred_locale` and interactions' `guild_locale`, default `en-US`).
   */
  guild?: { id?: string; name?: string; channels?: string[]; preferredLocale?: string };
  /** HELLO's `heartbeat_interval`, in ms. Default 41,250 (Discord's). */
  heartbeatIntervalMs?: number;
  /** Time from dispatch to the first interaction response, in ms. Default 3,000. */
  responseWindowMs?: number;
  /** Lifetime of an interaction token on webhook routes, in ms. Default 15 minutes. */
  tokenTtlMs?: number;
  /**
   * Creates + edits allowed per channel per window. Default 5 per 5,000 ms. In `shared` mode
   * every write in the channel counts; in `documented` mode only bot-token writes do.
   */
  messageBudget?: MessageBudget;
  /** `documented` mode: writes per interaction token (its webhook routes) per window. Default 5 per 2,000 ms. */
  webhookBudget?: MessageBudget;
  /**
   * Which rate limits the fake enforces (see limits.ts): `shared`, one budget per channel for
   * every write (default); `documented`, a bucket per interaction token and one per channel for
   * bot-token writes.
   */
  rateLimitMode?: RateLimitMode;
  /** Largest file accepted, in bytes (also the interaction's `attachment_size_limit`). Default 10 MiB. */
  maxFileBytes?: number;
  /**
   * Privileged intents the application is approved for in the Developer Portal (bitfield:
   * 1<<1 members, 1<<8 presences, 1<<15 message content). A session may IDENTIFY only with
   * these (else 4014), and REST reads of messages show other users' content only with 1<<15.
   * Default 0.
   */
  privilegedIntents?: number;
  /** `session_start_limit.remaining` of `/gateway/bot`; each IDENTIFY uses one. Default 1000. */
  sessionStartRemaining?: number;
  /**
   * Discord's global rate limit: requests with the bot token (`Authorization: Bot …`) per
   * window, interaction callbacks and webhook routes exempt (global-limit.ts). Default 50 per
   * 1,000 ms.
   */
  globalRateLimit?: MessageBudget;
  /**
   * Hands each INTERACTION_CREATE and MESSAGE_CREATE to one of the sessions that would get it,
   * in turn, instead of to all of them. Not what Discord's gateway does (every session of a
   * shard gets its events): it stands for several bot processes behind one ingress (an
   * Interactions Endpoint URL behind a load balancer), so that one channel's commands reach
   * several processes. Default false.
   */
  spreadEvents?: boolean;
}

/**
 * `shared`: one budget per channel for every write (interaction webhooks included);
 * `documented`: per interaction token and, for bot-token writes, per channel.
 */
export type RateLimitMode = 'documented' | 'shared';

/** A rate limit on message creates and edits (per channel, or per interaction token). */
export interface MessageBudget {
  /** Writes per window. */
  limit: number;
  /** Window length in ms; the window starts with its first write. */
  windowMs: number;
}

/** An accepted create or edit of a message (the deferral's loading message is not one). */
export interface FakeWrite {
  seq: number;
  at: number;
  kind: 'create' | 'edit';
  /** `callback` (type 4), `webhook` (interaction token), `channel` (bot token). */
  via: 'callback' | 'webhook' | 'channel';
  channelId: string;
  messageId: string;
  interactionId: string | undefined;
  allowedMentions: unknown;
  content: string;
  pinged: Pings;
}

/** One REST request and the status it got. */
export interface FakeRequestRecord {
  seq: number;
  at: number;
  method: string;
  /** Path with `%40original` decoded, without the query. */
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** JSON body (`payload_json` for multipart). */
  body: unknown;
  /** Names and sizes of uploaded files. */
  files: Array<{ field: string; filename: string; size: number }>;
  status: number;
  /** Discord error code of a refusal. */
  code: number | undefined;
}

/** A 429 the fake served. */
export interface RateLimitRecord {
  at: number;
  channelId: string;
  method: string;
  path: string;
  /** What `retry-after` said, in ms (before rounding up to whole seconds). */
  retryAfterMs: number;
  /**
   * The budget that refused: `shared` (the channel's, every write; shared mode), `channel`
   * (bot-token writes of the channel), `webhook` (the interaction token's; documented mode) or
   * `global` (the bot token's requests, any route but interactions' and webhooks'; `channelId` empty).
   */
  bucket: 'shared' | 'channel' | 'webhook' | 'global';
}

/** A scripted failure of matching REST requests (see {@link FakeDiscord.failNext}). */
export interface Fault {
  /** HTTP method to match; any when absent. */
  method?: string;
  /** Matched against the decoded path, e.g. `/messages\/@original$/`. */
  path: RegExp;
  status: number;
  /** Answer body; default `{ message: '<status>: …', code: 0 }`. */
  body?: Json;
  /** How many matching requests fail. Default 1. */
  times?: number;
}

/** A registered application command, as Discord answers it. */
export type FakeCommand = Json & { id: string; name: string; type: number };

/** Events of {@link FakeDiscord.events}, emitted after the fake has decided its answer. */
export interface FakeDiscordEvents {
  request: [FakeRequestRecord];
  callback: [FakeInteraction, CallbackRecord];
  write: [FakeWrite];
  rateLimited: [RateLimitRecord];
  /** An IDENTIFY was accepted (READY sent); `shard` is `[id, count]`. */
  identify: [{ sessionId: string; intents: number; shard: [number, number] }];
  /** A RESUME was accepted (RESUMED sent). */
  resume: [{ sessionId: string; shard: [number, number] }];
  /** A user's message was posted (after its MESSAGE_CREATE went out). */
  userMessage: [FakeMessage];
  typing: [FakeTyping];
  /** A CDN download ended: completed, or cut short by the client. */
  download: [FakeDownload];
}

/** A `POST /channels/:id/typing` the bot sent. */
export interface FakeTyping {
  channelId: string;
  /** `Date.now()` when received. */
  at: number;
}

/** One CDN download of an attachment, updated when the response ends or its socket closes. */
export interface FakeDownload {
  attachmentId: string;
  filename: string;
  /** `/attachments/…` or the media proxy's `/media/attachments/…`. */
  via: 'cdn' | 'media';
  /** `Date.now()` when the response started. */
  at: number;
  /** Bytes handed to the socket so far. */
  bytesSent: number;
  /** Every byte was sent and the response ended. */
  completed: boolean;
  /** The client went away (aborted or closed the socket) before the end. */
  aborted: boolean;
}

/** A file on a user's message (see {@link PostUserMessageOptions.attachments}). */
export interface UserAttachmentOptions {
  filename: string;
  /** Default: from the extension (png, jpg, gif, webp, txt, json), else none. */
  contentType?: string;
  /** The bytes, held in memory. Exactly one of `data` and `stream`. */
  data?: Buffer;
  /**
   * Bytes generated on each download in 64 KiB chunks (a repeating ASCII pattern), never
   * held in memory: a 50 MB file costs nothing until downloaded, and only what is read then.
   */
  stream?: { bytes: number };
  /** The `size` advertised in the message (default the real length): lets a test make it lie. */
  declaredSize?: number;
  /** The CDN answers without `Content-Length` (chunked transfer encoding). */
  chunked?: boolean;
  /** Pixel size, as given (not read from the bytes). */
  width?: number;
  height?: number;
  /** Alt text. */
  description?: string;
}

/** Options of {@link FakeDiscord.postUserMessage}. */
export interface PostUserMessageOptions {
  /** A guild text channel, a thread or a DM channel. */
  channelId: string;
  /** Default ''. Mentions are parsed from it: `<@id>`/`<@!id>`, `<@&role>`, `@everyone`/`@here`. */
  content?: string;
  /**
   * The author. Default: the DM's recipient in a DM, else {@link DEFAULT_USER}. `bot: true`
   * for another bot. A known `id` alone reuses that user.
   */
  author?: Partial<FakeUser>;
  /** A webhook's message: its id (the author is then the webhook, with no member). */
  webhookId?: string;
  /** Message type: default 0, or 19 with `replyTo`; system types (e.g. 7, member join) for tests. */
  type?: number;
  attachments?: UserAttachmentOptions[];
  /** The id of a message in the same channel this one replies to. */
  replyTo?: string;
  /** With `replyTo`: whether the reply pings the replied author (then in `mentions`). Default true, as Discord's client does. */
  pingRepliedAuthor?: boolean;
  /**
   * When the message was sent, ms since 1970 (default now): its id is a snowflake of that time,
   * as Discord's are. A test may backdate a message (e.g. one sent before a catch-up's age bound).
   */
  at?: number;
}

/** Options of {@link FakeDiscord.dispatchInteraction}. */
export interface DispatchInteractionOptions {
  /** The slash command's name, e.g. `chat`. */
  command: string;
  /**
   * Option values by name. Types come from the registered command when there is one
   * (unknown or missing required options then throw, as Discord's client would not send
   * them); otherwise string → 3, boolean → 5, integer → 4, other number → 10.
   *
   * A file (an object: `{ filename, contentType?, data, width?, height? }`, as
   * {@link UserAttachmentOptions}) is an attachment option (type 11): the upload goes in
   * `data.resolved.attachments` (with `ephemeral: true`) and the option's value is its id. It
   * is served by the fake's signed CDN like a message's file, for the token's lifetime.
   */
  options?: Record<string, OptionValue>;
  /** Default: the guild's first channel. */
  channelId?: string;
  /** The invoking user; default a fixed non-bot user. */
  user?: InvokingUser;
  /** Member with the Administrator permission. Default false. */
  admin?: boolean;
  /** The member's permission bitfield (decimal string); wins over `admin`. */
  permissions?: string;
  /** The user's client language (the interaction's `locale`); default `en-US`. */
  locale?: string;
  /** The guild's language as the interaction carries it (`guild_locale`); default the guild's `preferredLocale`. */
  guildLocale?: string;
  /**
   * Sends the payload with neither `member` nor `user`, which Discord never does (it always says
   * who invoked), to test a client's guard against a malformed interaction. The interaction is
   * stored as usual: its token and callback work.
   */
  withoutInvoker?: boolean;
}

/** The user who invokes an interaction (a fresh id when `id` is absent). */
export interface InvokingUser {
  id?: string;
  username?: string;
  globalName?: string;
}

/** A value of an interaction option: text, number, boolean, or a file (attachment option). */
export type OptionValue = string | number | boolean | UserAttachmentOptions;

/** Options of {@link FakeDiscord.dispatchAutocomplete}. */
export interface DispatchAutocompleteOptions {
  /** The slash command's name, e.g. `chat`. */
  command: string;
  /**
   * What the user has filled in so far, by name (required options may be missing: the user
   * is still typing). The focused option's value is what was typed in it (default '').
   */
  options?: Record<string, string | number | boolean>;
  /**
   * The option being typed in (sent with `focused: true`). When the command is registered,
   * it must be one of its options with `autocomplete: true` (else Discord's client would not ask).
   */
  focused: string;
  channelId?: string;
  user?: InvokingUser;
  admin?: boolean;
  permissions?: string;
  /** The user's client language (the interaction's `locale`); default `en-US`. */
  locale?: string;
  /** The guild's language as the interaction carries it (`guild_locale`); default the guild's `preferredLocale`. */
  guildLocale?: string;
}

/** One autocomplete choice as the bot answered it (callback type 8, `data.choices`). */
export interface AutocompleteChoice {
  name: string;
  value: string | number;
  name_localizations?: Record<string, string> | null;
}

/**
 * How an autocomplete ended: the choices of the accepted answer (type 8), or `expired` when
 * none was accepted within `responseWindowMs` (Discord then shows "Loading options failed").
 */
export type AutocompleteOutcome =
  | { expired: false; choices: AutocompleteChoice[]; elapsedMs: number }
  | { expired: true; elapsedMs: number };

/** Options of {@link FakeDiscord.pressButton}. */
export interface PressButtonOptions {
  /** A message of the bot that carries the button (in a guild channel or thread). */
  messageId: string;
  /** The button's `custom_id`. */
  customId: string;
  /**
   * Who presses; default {@link DEFAULT_USER}. On an ephemeral message only the user it was
   * shown to can press (anyone else would not see it: throws).
   */
  user?: InvokingUser;
  admin?: boolean;
  permissions?: string;
  /** The user's client language (the interaction's `locale`); default `en-US`. */
  locale?: string;
  /** The guild's language as the interaction carries it (`guild_locale`); default the guild's `preferredLocale`. */
  guildLocale?: string;
}
