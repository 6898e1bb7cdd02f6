/**
 * The seam between the platform-neutral core and the platform adapters (Discord, Slack).
 * Nothing here, in the core, or under commands/ imports discord.js or @slack/bolt: adapters
 * implement these interfaces with their platform's API.
 */

import type { Logger } from '../log.ts';
import type { NamedWait } from './delivery/bucket.ts';
import type { PageBreaks } from './delivery/page-breaks.ts';
import type { InvocationLocale } from './i18n/languages.ts';
import { english, type Sentence } from './i18n/words.ts';
import type { BucketId } from './keys.ts';
import type { ByteRange } from './media/download-range.ts';
import type { Card, CardLimits } from './platform-cards.ts';
import type { Button, TextForm } from './platform-controls.ts';

export type { Button, TextForm } from './platform-controls.ts';

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
  /** Structured lists (model lists, settings). */
  cards?: Card[];
  /** Buttons in one row (at most 5). */
  buttons?: Button[];
  /**
   * The one user this message mentions and notifies (a platform user id): the adapter writes
   * their mention before `content` and lets it notify them alone (Discord: `allowed_mentions`
   * `{ parse: [], users: [id] }`; Slack: `<@id>` left unescaped, the message posted, never
   * streamed). The one exception to "nothing the bot writes pings": only for a message of the
   * bot's own words (a long answer's notice, features/answer-notice.ts), never with model text.
   */
  mentionUser?: string;
  /**
   * Shows the message's images together as one gallery, `content` as their caption and the
   * buttons under them: the images are `files` (each an image) then `imageLinks`, 1–10 in all.
   * Discord: one Components V2 message (a Container of a Text Display, a Media Gallery and an
   * action row; platforms/discord/components-v2.ts), or as without it where that cannot be
   * used (docs/platform-limits.md, "Components V2"); Slack: as without it (files uploaded with
   * the caption, image links as image blocks). Not for a message edited into text later:
   * Discord cannot turn a gallery back into a plain message.
   */
  gallery?: boolean;
}

/** A message the bot has posted and may edit. */
export interface MessageHandle {
  /**
   * Replaces the message's text (files stay unless `files` is given, where the channel
   * `editsFiles`; buttons stay unless `buttons` is given). Paced by the core; never called concurrently.
   * @param final true for the last write of this message (a natively streamed message ends then).
   */
  edit(message: OutgoingMessage, final?: boolean): Promise<void>;
  /** Ends the message's writing where the platform needs it (a natively streamed Slack message); idempotent. */
  close?(): Promise<void>;
  /** Where the message is (keys.ts `messageRef`), where the adapter names it (a mention's answer: edits re-answer there). */
  readonly ref?: string;
  /**
   * References (keys.ts `postedImageRef`) of the files the message carries, in the order sent,
   * where the platform names them when they are posted (Slack: the uploaded files' ids), for
   * {@link ComponentContext.postedImage}; absent elsewhere (on Discord a press finds the image
   * of its own message: {@link ComponentContext.pressedImage}).
   */
  readonly fileRefs?: readonly string[];
  /**
   * The rate-limit buckets an edit of this message spends, where they differ from its reply's
   * ({@link ReplyChannel.buckets}): a message written over that another write path posted
   * (Discord: an earlier page edited with the bot token from a button press's reply).
   */
  readonly buckets?: readonly BucketId[];
}

/**
 * An image found again on its platform for a button press: one the bot posted (/imagine's
 * Upscale and Vary), or one a user sent with a question (Regenerate, an edited mention).
 */
export interface PostedImage {
  /**
   * Where it is (keys.ts `postedImageRef`, under 60 characters): what the store keeps to find
   * it again with {@link ComponentContext.postedImage}.
   */
  ref: string;
  /** The file, downloaded again on `fetch` (capped; with the platform's auth where needed). */
  file: Attachment;
}

/**
 * Finds an image by its reference (keys.ts `postedImageRef`): {@link ComponentContext.postedImage},
 * or an adapter's own for an edited mention.
 * @returns undefined when it is gone (deleted, not found), or the reference is another platform's.
 * @throws as {@link ComponentContext.postedImage}.
 */
export type ImageFinder = (ref: string) => Promise<PostedImage | undefined>;

/** What a platform allows when a message is streamed into by edits. */
export interface ReplyLimits {
  /** Longest message text, e.g. 2000 for Discord. */
  maxChars: number;
  /** Shortest time between two edits of one streamed reply, in ms. */
  minEditIntervalMs: number;
  /** Counts text as the platform does (e.g. after escaping); `String.length` when absent. */
  measure?: (text: string) => number;
  /**
   * Where an answer's pages end, where the platform renders Markdown per message (Slack: at the
   * end of a Markdown block, a table going on with its header; core/markdown/page-breaks.ts);
   * the splitter's own cuts when absent (a line break, code fences closed and reopened).
   */
  pageBreaks?: PageBreaks;
  /** What one message may carry of cards. */
  cards: CardLimits;
  /** Largest file one message may carry, in bytes (Discord: the interaction's `attachment_size_limit`); no limit when absent. */
  maxFileBytes?: number;
  /**
   * Longest answer this reply shows in messages, in characters, where the platform bounds the
   * messages one reply may post (Discord: five follow-ups for an app that is not a member where it
   * answers); the smaller of it and `MAX_ANSWER_CHARS` applies, the whole answer coming as a file.
   * No bound of the reply's own when absent.
   */
  maxAnswerChars?: number;
  /**
   * How the platform shows an answer's Markdown where it differs from Markdown itself (Discord:
   * tables, which it does not render); absent: the Markdown is shown as written.
   */
  rendering?: MarkdownRendering;
}

/**
 * An answer's Markdown rewritten for a platform before it is split into pages (issue 39): every
 * page of a streamed answer (delivery/answer-pages.ts) is cut from its renderer's `render` of its
 * whole text, at each write while it streams and at its final write; the history keeps the
 * model's Markdown.
 */
export interface MarkdownRendering {
  /**
   * Whether text holding `delta` may render differently from itself. Until one of an answer's
   * deltas does, its text is shown as written and no renderer is made (nor the text copied: a
   * streamed answer's text is a rope of its reads). O(delta).
   */
  touches(delta: string): boolean;
  /** A renderer for one answer's text, which grows at each write (it may keep what no later text changes). */
  renderer(): MarkdownRenderer;
}

/** Renders one answer's text as it grows ({@link MarkdownRendering.renderer}). */
export interface MarkdownRenderer {
  /**
   * The text as the platform should receive it, from the whole of it (a construct may end
   * anywhere later); the same string when nothing changes. Called about once a write, on at most
   * what the answer shows (`MAX_ANSWER_CHARS` and its notes): bounded, about linear time. Never throws.
   */
  render(markdown: string): string;
}

/**
 * Where a command's answer goes. Discord: the interaction's reply (deferred) and its follow-ups.
 * Slack: a message posted in the channel and replies in its thread.
 */
export interface ReplyChannel {
  readonly limits: ReplyLimits;
  /** Whether `MessageHandle.edit` can put files into a posted message (Discord yes, Slack no). */
  readonly editsFiles?: boolean;
  /**
   * Whether an edit that names no buttons leaves the message's buttons as they are (Discord: a
   * field left out of an edit is unchanged). Slack's chat.update rewrites the blocks that carry
   * the text, so an edit there names its buttons every time. Where true, a streamed answer's
   * edits name the buttons only when they change (the Stop button is sent once, not with every
   * edit: smaller writes, and smaller gateway events of them).
   */
  readonly editsKeepButtons?: boolean;
  /**
   * Tells the platform that an answer is coming (Discord `deferReply`; Slack, acked already,
   * posts a /chat's question and shows "is thinking…" in the answer's thread). Idempotent: later
   * calls wait for the same. Called by the core before any service call.
   * @throws what the platform threw when the answer cannot go anywhere (the interaction is
   *   gone; the question could not be posted).
   */
  defer(): Promise<void>;
  /**
   * Posts a message for everyone in the conversation. The first call fills the deferred reply;
   * later calls post follow-ups (continuations of a long answer).
   */
  send(message: OutgoingMessage): Promise<MessageHandle>;
  /**
   * Tells only the invoking user (ephemeral where the platform allows; a plain reply where it
   * does not, as for a Discord mention). A string is a text message. Never throws.
   */
  sendEphemeral(message: string | OutgoingMessage): Promise<void>;
  /**
   * The sentence for a platform's refusal (a missing permission, an archived channel, a
   * revoked token…), not yet in words (the caller renders it in its reader's language), or
   * undefined when the error is not one the platform explains.
   */
  explain?(error: unknown): Sentence | undefined;
  /**
   * Whether a write failed because the message it wrote to was deleted (Discord 10008 Unknown
   * Message, Slack `message_not_found`): someone chose to remove the answer. The answer then
   * stops without a sentence of failure (command.ts `runInvocation`).
   */
  isDeleted?(error: unknown): boolean;
  /**
   * The rate-limit buckets a write spends (delivery/scheduler.ts), e.g. an interaction token's
   * `webhook` bucket for an interaction's message, the workspace's `update` bucket for a Slack edit.
   * @param kind `send` for a new message, `edit` for a change of one.
   * @param index which message of the answer (0: the first).
   * @param message the message, when known (a one-off send: delivery/one-off.ts); a message with
   *   files or cards may spend other buckets than streamed text (Slack: posted, not streamed).
   */
  buckets?(kind: 'send' | 'edit', index: number, message?: OutgoingMessage): BucketId[];
  /**
   * Registers what to do when the user stops the answer with the platform's own control
   * (Slack's stop of a natively streaming message: `stopped_by_user`), as a press of Stop would.
   */
  onUserStop?(stop: () => void): void;
  /**
   * Registers what to call when a write of the reply that is not one of its answer's own (a Slack
   * /chat's question) was held back for a wait the platform named beyond MAX_HOLD_MS
   * (delivery/bucket.ts), at once when one was already: the answer then says so.
   */
  onHeld?(listener: (wait: NamedWait) => void): void;
  /**
   * A message of the bot's that this reply may write over (Regenerate, an edited mention's
   * re-answer), by its keys.ts `messageRef`: a handle whose edits rewrite it (Discord: a pressed
   * message through the press's interaction, any other with the bot token; Slack: chat.update).
   * Once this reply has handed out a handle, its sends post new messages only (never rewrite).
   * @returns undefined when the reply cannot write there (another platform or channel, a channel
   *   the bot's token may not see).
   */
  messageAt?(ref: string): MessageHandle | undefined;
}

/**
 * A press of one of the bot's buttons, platform-neutral: who pressed it, where, and how to
 * answer (replace the message that carries the button, or tell only the presser).
 */
export interface ComponentContext {
  platform: 'discord' | 'slack';
  /** The language tags the platform gave with the press (i18n/languages.ts); absent: none known. */
  locale?: InvocationLocale;
  /** The conversation and channel of the message that carries the button. */
  conversationId: string;
  channelKey: string;
  user: InvocationUser;
  /** The button id's parts after the command name (`models:2:1` → `['2', '1']`). */
  args: string[];
  /** Short reference id of the press, shown with any error. */
  ref: string;
  /**
   * Posts new public messages in the conversation of the pressed message (e.g. /imagine's
   * Reroll result): Discord, the press's own reply (`defer` shows "thinking…") and follow-ups;
   * Slack, messages in the channel (in the pressed message's thread when it is in one).
   */
  reply: ReplyChannel;
  /** What the platform's messages may carry. */
  limits: ReplyLimits;
  signal: AbortSignal;
  log: Logger;
  /** Replaces the message that carries the button (within the platform's 3 s). */
  update(message: OutgoingMessage): Promise<void>;
  /**
   * A reply whose first `send` replaces the pressed message (its text and buttons; Discord: after
   * {@link acknowledge}, the interaction's `@original`), later sends following it (Discord:
   * follow-ups; Slack: in the pressed message's thread): Regenerate writes the new answer there.
   * Its `messageAt` gives the answer's other messages to write over (then sends only follow).
   */
  replyInPlace?(): ReplyChannel;
  /**
   * Acknowledges the press without changing the message now (Discord: DEFERRED_UPDATE_MESSAGE;
   * Slack acked already). Never throws.
   */
  acknowledge(): Promise<void>;
  /** Tells only the presser. Never throws. */
  sendEphemeral(message: string | OutgoingMessage): Promise<void>;
  /**
   * Opens a form for the presser alone, as the press's first answer (Discord: a modal, within
   * its 3 s; Slack: views.open with the press's trigger); its submit comes back to the adapter
   * by `form.id`. @throws the platform's refusal (the press already answered, a trigger gone).
   */
  openForm?(form: TextForm): Promise<void>;
  /**
   * The first image of the message that carries the button, with its reference. Discord: an
   * attachment of the press's own message (as the interaction carries it), downloaded from the
   * CDN with the core's capped Downloader. Absent where a message with buttons carries no file
   * (Slack: see {@link postedImage}).
   * @returns undefined when the message has no image.
   */
  pressedImage?(): Promise<PostedImage | undefined>;
  /**
   * An image on the platform, by its reference: one the bot posted ({@link MessageHandle.fileRefs},
   * {@link PostedImage.ref}) or a user's ({@link Attachment.ref}). Discord: the message fetched
   * again with the bot token (its first image, or the attachment the reference names); Slack:
   * files.info with the bot token, the file then downloaded from Slack's file hosts only.
   * @returns undefined when it is gone (the message or file deleted or not found), is not an
   *   image, or the reference is another platform's.
   * @throws the platform's error for any other failure (a network failure, a refused call);
   *   AttachmentAccessError when the platform will not let the bot read files at all.
   */
  postedImage?(ref: string): Promise<PostedImage | undefined>;
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
   * Where the platform keeps the file (keys.ts `postedImageRef`: a Discord message's attachment,
   * a Slack file), to find it again later with an {@link ImageFinder} (Regenerate keeps this, not
   * the bytes); absent where it has no lasting place (a Discord slash command's upload, a link).
   */
  ref?: string;
  /**
   * Downloads the bytes (with the platform's auth where needed), streaming, refusing more
   * than `maxBytes`; with `range`, only those bytes (at most `maxBytes` of them, never refused
   * for the file's size: media/download.ts `range`), for a reader that needs only a file's start.
   * @throws DownloadError (media/download.ts) for a download that failed or passed the cap;
   *   AttachmentAccessError when the platform will not let the bot read files at all.
   */
  fetch(options: AttachmentFetch): Promise<Uint8Array>;
}

/** How much of an {@link Attachment} to download: a byte cap, the command's signal, and optionally a byte range. */
export interface AttachmentFetch {
  maxBytes: number;
  signal: AbortSignal;
  /** Bytes [start, start + length) only. */
  range?: ByteRange;
}

/**
 * The platform refuses the bot access to users' files (e.g. Slack without the `files:read`
 * scope). `message` is the one sentence for the user, naming what an admin must change; it
 * is said once per answer, however many files it concerns.
 */
export class AttachmentAccessError extends Error {
  /** What the user is told, not yet in words (rendered in the reader's language); `message` is its English. */
  readonly sentence: Sentence;

  constructor(said: Sentence) {
    super(english.say(said));
    this.sentence = said;
    this.name = 'AttachmentAccessError';
  }
}

/**
 * Who invoked: platform user id, display name, and what they may do. The rights are asked
 * for only when needed (on Slack each answer may cost a `users.info` call).
 */
export interface InvocationUser {
  id: string;
  name: string;
  /**
   * Discord: Administrator or Manage Server in the guild, or listed in ADMIN_USER_IDS /
   * ADMIN_ROLE_IDS; Slack: a workspace admin or owner, or listed in ADMIN_USER_IDS.
   * Rejects when the platform could not tell (Slack: users.info failed), with an error whose
   * sentence says so: a right that could not be checked is never read as "no" (nor as "yes").
   */
  isAdmin(): Promise<boolean>;
  /** May clear a channel's history (/forget): admins, and Discord members with Manage Messages. Rejects as {@link isAdmin}. */
  canManageMessages(): Promise<boolean>;
  /**
   * May post in the conversation themselves, so that the bot may post there for them (a button
   * press whose result is a new public message or rewrites one, a message action's answer):
   * Discord, Send Messages (in a thread, Send Messages in Threads) as the interaction says.
   * Absent where the platform lets everyone who can invoke the bot post there (Slack).
   */
  canPost?(): Promise<boolean>;
}

/** One invocation of a command, platform-neutral. */
export interface CommandContext {
  platform: 'discord' | 'slack';
  /**
   * The language tags the platform gave with the invocation (i18n/languages.ts): the user's
   * (Discord's interaction `locale`, Slack's `users.info` locale) and the place's (Discord's
   * `guild_locale`); absent: none known (DEFAULT_LOCALE applies).
   */
  locale?: InvocationLocale;
  /**
   * Key of the conversation whose history this belongs to:
   * `discord:<guild|dm>:<channel or thread>` or `slack:<team>:<channel>[:<thread_ts>]`.
   */
  conversationId: string;
  /**
   * Key of the channel whose settings apply (/settings): `discord:<guild|dm>:<channel>` (a
   * thread uses its parent channel's) or `slack:<team>:<channel>`.
   */
  channelKey: string;
  /** Whether this is a direct message with the bot (anyone may /forget there). */
  isDirectMessage: boolean;
  user: InvocationUser;
  /** Option values by option name, already typed by the adapter. */
  options: Record<string, string | number | boolean | undefined>;
  /** Files given to attachment options, by option name (Discord uploads; Slack URLs or file links). */
  files: Readonly<Record<string, Attachment>>;
  /** Fires when the invocation is cancelled (shutdown, Stop button later). */
  signal: AbortSignal;
  /** Logger whose lines carry `ref`. */
  log: Logger;
  /** Short reference id of the invocation (log.ts `newReference`), shown with any error so a report can be found in the log. */
  ref: string;
  /**
   * When the user asked (the invocation arrived: a command, a mention, a press), in
   * `performance.now()` ms; a long answer's notice counts its time from it
   * (features/answer-notice.ts). Absent: from when the answer began (delivery/answer-session.ts).
   */
  startedAt?: number;
  reply: ReplyChannel;
  /**
   * Posts a message in the invoker's direct message with the bot, where the platform has no
   * ephemeral message that carries files (Slack: conversations.open, then the files uploaded
   * there with the text as their comment; scope `im:write`). Absent where `reply.sendEphemeral`
   * carries files itself (Discord).
   * @throws InputError with a sentence when the platform refuses for a reason the user or an admin
   *   can act on (a missing scope); the platform's other errors.
   */
  sendDirect?(message: OutgoingMessage): Promise<void>;
  /** Lines from the adapter shown under a chat's answer (e.g. why no thread was opened), not stored. */
  notices?: readonly Sentence[];
  /**
   * Other conversations the exchange also joins, read when it is stored (Slack: the thread
   * that shows a /chat's question and answer, so that a mention there carries it).
   */
  linkedConversations?: () => readonly string[];
}
