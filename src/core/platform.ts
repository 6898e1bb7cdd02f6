/**
 * The seam between the platform-neutral core and the platform adapters (Discord, Slack).
 * Nothing here, in the core, or under commands/ imports discord.js or @slack/bolt: adapters
 * implement these interfaces with their platform's API.
 */
import type { Logger } from '../log.ts';

/** A file to post with a message (e.g. a generated image). */
export interface OutgoingFile {
  /** File name shown to users, e.g. `image.png`. */
  name: string;
  data: Buffer;
  mimeType: string;
  /** Alt text / description. */
  description?: string;
}

/** A message the core asks a platform to show. `content` is Markdown. */
export interface OutgoingMessage {
  content: string;
  files?: OutgoingFile[];
  /** Images shown by URL (Discord embeds, Slack image blocks); at most 10. */
  imageLinks?: Array<{ url: string; alt: string }>;
}

/** A message the bot has posted and may edit. */
export interface MessageHandle {
  /** Replaces the message's text (files stay). Paced by the core; never called concurrently. */
  edit(message: OutgoingMessage): Promise<void>;
}

/** What a platform allows when a message is streamed into by edits. */
export interface ReplyLimits {
  /** Longest message text, e.g. 2000 for Discord. */
  maxChars: number;
  /** Shortest time between two edits of one streamed reply, in ms. */
  minEditIntervalMs: number;
  /** Counts text as the platform does (e.g. after escaping); `String.length` when absent. */
  measure?: (text: string) => number;
}

/**
 * Where a command's answer goes. Discord: the interaction's reply (deferred) and its follow-ups.
 * Slack: a message posted in the channel and replies in its thread.
 */
export interface ReplyChannel {
  readonly limits: ReplyLimits;
  /**
   * Tells the platform that an answer is coming (Discord `deferReply`; Slack has acked already).
   * Idempotent. Called by the core before any service call.
   */
  defer(): Promise<void>;
  /**
   * Posts a message for everyone in the conversation. The first call fills the deferred reply;
   * later calls post follow-ups (continuations of a long answer).
   */
  send(message: OutgoingMessage): Promise<MessageHandle>;
  /** Tells only the invoking user (ephemeral where the platform allows). Never throws. */
  sendEphemeral(text: string): Promise<void>;
}

/** A user's file attached to a command or mention. */
export interface Attachment {
  name: string;
  /** e.g. `image/png`; as the platform reports it (may be wrong: check the bytes). */
  mimeType: string | undefined;
  /** Size in bytes as the platform reports it (may be wrong: the download is capped anyway). */
  size: number;
  /** `message`: attached to the user's own message; `replied`: to the message it replies to. */
  origin?: 'message' | 'replied';
  /**
   * Downloads the bytes (with the platform's auth where needed), streaming, refusing more
   * than `maxBytes`.
   * @throws DownloadError (media/download.ts) for a download that failed or passed the cap;
   *   AttachmentAccessError when the platform will not let the bot read files at all.
   */
  fetch(options: { maxBytes: number; signal: AbortSignal }): Promise<Uint8Array>;
}

/**
 * The platform refuses the bot access to users' files (e.g. Slack without the `files:read`
 * scope). `message` is the one sentence for the user, naming what an admin must change; it
 * is said once per answer, however many files it concerns.
 */
export class AttachmentAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttachmentAccessError';
  }
}

/** One invocation of a command, platform-neutral. */
export interface CommandContext {
  platform: 'discord' | 'slack';
  /**
   * Key of the conversation whose history this belongs to:
   * `discord:<guild|dm>:<channel or thread>` or `slack:<team>:<channel>[:<thread_ts>]`.
   */
  conversationId: string;
  user: { id: string; name: string; isAdmin: boolean };
  /** Option values by option name, already typed by the adapter. */
  options: Record<string, string | number | boolean | undefined>;
  attachments: Attachment[];
  /** Fires when the invocation is cancelled (shutdown, Stop button later). */
  signal: AbortSignal;
  log: Logger;
  reply: ReplyChannel;
}
