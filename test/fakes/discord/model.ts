/**
 * What the Discord fake holds and shows a test: users, channels, messages with their
 * revisions and files, and interactions with their callbacks. The classes are filled in by
 * the fake as the bot acts; tests read them.
 */
import { buttonsIn, componentsText } from './components-v2.ts';
import type { AutocompleteChoice, AutocompleteOutcome, Json } from './types.ts';

/** Channel types the fake serves (Discord's values). */
export const ChannelType = { GuildText: 0, DM: 1, PublicThread: 11 } as const;

/** A guild text channel, a DM with the bot, or a public thread. */
export interface FakeChannel {
  id: string;
  /** 0 guild text channel, 1 DM, 11 public thread. */
  type: 0 | 1 | 11;
  /** The guild; undefined for a DM. */
  guildId: string | undefined;
  /** The channel's or thread's name; for a DM, its recipient's username (Discord sends none). */
  name: string;
  /** A thread's parent channel. */
  parentId?: string;
  /** A thread's creator (`owner_id`): the bot for a thread it started; the guild's owner by default. */
  ownerId?: string;
  /** A DM's other user (the one who is not the bot). */
  recipient?: FakeUser;
  /** `Date.now()` at creation. */
  createdAt: number;
}

/** A user as the fake knows it (wire shape of a Discord user). */
export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: string | null;
  bot?: boolean;
}

/** Whom a message revision pings, as Discord resolves `allowed_mentions` against the content. */
export interface Pings {
  everyone: boolean;
  users: string[];
  roles: string[];
}

/**
 * One file of a message: uploaded by the bot (bytes kept), or attached by a test to a user's
 * message (bytes given, or generated on download and never held: see attachments.ts).
 */
export interface FakeAttachment {
  id: string;
  filename: string;
  /** The `size` Discord advertises, in bytes (a test may make it lie with `declaredSize`). */
  size: number;
  /** Bytes the CDN actually serves. */
  byteLength: number;
  contentType: string | undefined;
  /** Pixel size for images (read with sharp for uploads; as given for user attachments). */
  width: number | undefined;
  height: number | undefined;
  description: string | undefined;
  /**
   * The exact bytes. For a generated (`stream`) attachment they are produced on each read:
   * prefer {@link chunks} for large ones.
   */
  readonly data: Buffer;
  /** The bytes in chunks of at most 64 KiB, produced lazily. */
  chunks(): Iterable<Buffer>;
  /** The CDN answers without `Content-Length` (chunked transfer encoding). */
  chunked: boolean;
  /** Signed CDN URL: `http://127.0.0.1:PORT/attachments/<channel>/<id>/<filename>?ex=…&is=…&hm=…&`. */
  url: string;
  /** The same file through the media proxy (`/media/attachments/…`, same signature). */
  proxyUrl: string;
}

/** The message a message replies to (`message_reference`, type 0). */
export interface MessageReference {
  messageId: string;
  channelId: string;
  guildId: string | undefined;
}

/** One state of a message: after its creation, or after an edit. */
export interface MessageRevision {
  /** Order among everything the fake recorded. */
  seq: number;
  /** `Date.now()` when accepted. */
  at: number;
  /** `defer`: the loading message of a type-5 callback; `create`; `edit`. */
  via: 'defer' | 'create' | 'edit';
  content: string;
  embeds: Json[];
  attachmentIds: string[];
  flags: number;
  /** `allowed_mentions` of the request exactly as sent; `undefined` when absent. */
  allowedMentions: unknown;
  /** Whom it pings: for the bot's writes as `allowed_mentions` allow; for a user's message, its mentions. */
  pinged: Pings;
  /** The message it replies to, if any. */
  reference: { messageId: string } | undefined;
  /** The message's components (action rows of buttons) after this revision. */
  components?: Json[];
}

/** Message flags the fake knows. */
export const MessageFlag = {
  SuppressEmbeds: 4,
  Ephemeral: 64,
  Loading: 128,
  SuppressNotifications: 4096,
  IsComponentsV2: 32768,
} as const;

/** Whether a message carries the Components V2 flag (its text and media are in `components`). */
export const isV2 = (message: { flags: number }) => (message.flags & MessageFlag.IsComponentsV2) !== 0;

/** A message with its whole history. */
export class FakeMessage {
  content = '';
  embeds: Json[] = [];
  attachments: FakeAttachment[] = [];
  /**
   * Components as sent, validated: action rows of buttons; with the Components V2 flag, the
   * tree as Discord stores it (ids given, `attachment://` media resolved: components-v2.ts).
   */
  components: Json[] = [];
  flags = 0;
  deleted = false;
  editedAt: number | undefined;
  /** Discord's message type: 0 default, 19 reply, 20 chat input command, 7 member join, … */
  type: number;
  /** The message this one replies to (`message_reference`), if any. */
  reference: MessageReference | undefined;
  /** For a user-kind message posted by a webhook: the webhook's id. */
  webhookId: string | undefined;
  readonly revisions: MessageRevision[] = [];

  constructor(
    readonly id: string,
    readonly channelId: string,
    readonly guildId: string | undefined,
    /**
     * `original`: an interaction's response; `followup`; `channel`: posted with the bot
     * token; `user`: posted by a user, another bot or a webhook (see `postUserMessage`).
     */
    readonly kind: 'original' | 'followup' | 'channel' | 'user',
    /** `Date.now()` at creation. */
    readonly createdAt: number,
    readonly interaction: FakeInteraction | undefined,
    /** Who wrote it: the bot for every kind but `user`. */
    readonly author: FakeUser,
  ) {
    this.type = kind === 'original' ? 20 : 0;
  }

  get ephemeral(): boolean {
    return (this.flags & MessageFlag.Ephemeral) !== 0;
  }

  /** What a reader sees as its text: `content`, or a Components V2 message's Text Displays, joined by newlines. */
  get text(): string {
    return isV2(this) ? componentsText(this.components) : this.content;
  }

  /** Its buttons, wherever its components hold them (action rows, in Containers too; Section accessories). */
  get buttons(): Json[] {
    return buttonsIn(this.components);
  }

  /** True while a deferred response still shows "is thinking…". */
  get loading(): boolean {
    return (this.flags & MessageFlag.Loading) !== 0;
  }

  /** Whom the current revision pings. */
  get pinged(): Pings {
    return this.revisions.at(-1)?.pinged ?? { everyone: false, users: [], roles: [] };
  }
}

/** One interaction callback attempt (also refused ones). */
export interface CallbackRecord {
  seq: number;
  at: number;
  /** The response type sent (4 reply, 5 deferred, …); `undefined` if the body had none. */
  type: number | undefined;
  flags: number;
  /** HTTP status the fake answered. */
  status: number;
  /** Discord error code when refused. */
  code: number | undefined;
  /** An autocomplete answer's choices (type 8), as sent. */
  choices?: unknown;
}

/** Interaction types the fake dispatches: 2 application command, 3 message component, 4 autocomplete, 5 modal submit. */
export type InteractionType = 2 | 3 | 4 | 5;

/**
 * An interaction dispatched by the fake (an application command unless `type` says otherwise),
 * with everything the bot did with it.
 */
export class FakeInteraction {
  /** Every callback attempt, oldest first. */
  readonly callbacks: CallbackRecord[] = [];
  /** The accepted initial response. */
  response: CallbackRecord | undefined;
  /**
   * The message of the initial response (a loading message after a deferral). For a button
   * press answered with type 6 or 7 it is the message that carries the button (what
   * `@original` then edits).
   */
  original: FakeMessage | undefined;
  readonly followUps: FakeMessage[] = [];
  /** 2 application command (chat input or message command), 3 message component (button), 4 autocomplete, 5 modal submit. */
  type: InteractionType = 2;
  /** A button press: the button's `custom_id`; a modal submit: the modal's. */
  customId: string | undefined;
  /** A button press (or a modal submit of a modal shown for one): the message that carries the button. */
  componentMessage: FakeMessage | undefined;
  /** A message command: the message it was used on. */
  targetMessage: FakeMessage | undefined;
  /** The modal the app answered this interaction with (callback type 9's `data`), once accepted. */
  modal: Json | undefined;
  /** Whether the user submitted {@link modal} (modals.ts `submitModal`). */
  modalSubmitted = false;
  /** A modal submit: the interaction that showed the modal. */
  modalOf: FakeInteraction | undefined;

  constructor(
    readonly id: string,
    readonly token: string,
    readonly commandName: string,
    readonly guildId: string,
    readonly channelId: string,
    readonly user: FakeUser,
    /** The INTERACTION_CREATE payload as dispatched. */
    readonly payload: Json,
    /** `Date.now()` when dispatched. */
    readonly dispatchedAt: number,
    /** `Date.now()` after which the token is refused. */
    readonly tokenExpiresAt: number,
  ) {}

  /** The original and the follow-ups, in the order they were created. */
  get messages(): FakeMessage[] {
    return [...(this.original ? [this.original] : []), ...this.followUps];
  }
}

/**
 * An autocomplete interaction (type 4): `outcome` resolves with the choices once the bot's
 * answer (callback type 8) is accepted, or as expired when none was within the response window.
 */
export class FakeAutocomplete extends FakeInteraction {
  /** The choices of the accepted answer. */
  choices: AutocompleteChoice[] | undefined;
  /** No accepted answer within the response window. */
  expired = false;
  /** Resolves once answered or expired (never rejects). */
  readonly outcome: Promise<AutocompleteOutcome>;
  private settle!: (outcome: AutocompleteOutcome) => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** The focused option's name. */
    readonly focused: string,
    windowMs: number,
    ...rest: ConstructorParameters<typeof FakeInteraction>
  ) {
    super(...rest);
    this.type = 4;
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    this.timer = setTimeout(() => {
      if (this.choices) return;
      this.expired = true;
      this.settle({ expired: true, elapsedMs: Date.now() - this.dispatchedAt });
    }, windowMs + 1);
    this.timer.unref();
  }

  /** Records the accepted answer (called by the callback route). */
  answered(choices: AutocompleteChoice[], at: number): void {
    if (this.expired || this.choices) return;
    clearTimeout(this.timer);
    this.choices = choices;
    this.settle({ expired: false, choices, elapsedMs: at - this.dispatchedAt });
  }
}
