/**
 * An interaction's answer written with the bot's own token in the interaction's channel, for
 * when the interaction's own routes no longer serve: after its token expired (50027, after 15
 * minutes: "Receiving and Responding", docs/platform-limits.md), and to tell the user a sentence
 * that could reach them no other way; and the edit of one of the interaction's own messages with
 * its token (editWithToken). Used by the interaction's responder (responder.ts). A new message
 * with the bot token is posted only for an invoker who may post in the channel themselves
 * (members.ts): the interaction's own messages are Discord's to allow, the bot's are not.
 * Where the bot is not a member (a user install's interaction: user-install.ts), none of these
 * is attempted: Discord would refuse each (403, 50001), and an answer goes through its
 * interaction alone.
 */

import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Message,
  type MessageContextMenuCommandInteraction,
  type ModalSubmitInteraction,
  type REST,
  Routes,
  type SendableChannels,
} from 'discord.js';
import { ForbiddenError, InputError } from '../../core/errors.ts';
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { resolveLocale, SOURCE_LOCALE } from '../../core/i18n/locales.ts';
import { type Words, wordsOf } from '../../core/i18n/words.ts';
import { type BucketId, type MessageLocation, messageRef } from '../../core/keys.ts';
import type { MessageHandle, OutgoingMessage } from '../../core/platform.ts';
import { MAY_NOT_POST_HERE } from '../../core/rights.ts';
import type { Logger } from '../../log.ts';
import { isComponentsV2, withTextDisplay } from './components-v2.ts';
import { mayPost } from './members.ts';
import {
  DISCORD_MESSAGE_LIMITS,
  type EditPayload,
  editBodyOf,
  editPayloadOf,
  fittedMessage,
  payloadOf,
} from './rest.ts';
import { isUserInstalledOnly, NOT_A_MEMBER } from './user-install.ts';

/**
 * Added to a message the bot finished with its own token after the interaction's 15 minutes (a
 * public line: in the place's language, the interaction's `guild_locale`, else its `locale`).
 */
export const EXPIRED_NOTE: MessageKey = 'discord.expired_note';

/** The interactions the bot answers (responder.ts): a slash command, a button press, a message command, a modal's submit. */
export type AnswerableInteraction =
  | ChatInputCommandInteraction
  | ButtonInteraction
  | MessageContextMenuCommandInteraction
  | ModalSubmitInteraction;

/**
 * The bot-token writes of one interaction's answer: each reads the interaction's channel (from
 * discord.js's cache, else fetched) and writes there with the bot's token, pinging nobody.
 */
export class ChannelWrites {
  /** Whether the bot is a member where the interaction runs (not a user install's alone): else nothing is written here. */
  private readonly member: boolean;
  /** {@link EXPIRED_NOTE} in the place's words (the guild's locale until {@link useWords} is told the place's). */
  private note: Promise<string>;

  constructor(
    /** The interaction whose answer these writes continue. */
    private readonly interaction: AnswerableInteraction,
    private readonly log: Logger,
  ) {
    this.member = !isUserInstalledOnly(interaction);
    const place = interaction.guildLocale ?? interaction.locale;
    this.note = Promise.resolve(wordsOf(resolveLocale(place, SOURCE_LOCALE)).t(EXPIRED_NOTE));
  }

  /**
   * Writes {@link EXPIRED_NOTE} in `words`: the place's (i18n/languages.ts `forPlace`, which reads
   * the channel's `/settings locale`). A lookup that fails leaves the guild's locale's note.
   */
  useWords(words: Promise<Words>): void {
    const before = this.note;
    this.note = words.then(
      (w) => w.t(EXPIRED_NOTE),
      () => before,
    );
  }

  /**
   * The deferred reply's message id, looked up with the bot token among the channel's latest 50
   * messages by the interaction it answers (`interaction_metadata.id`), for when the token
   * expired before any write told it. Undefined when it is not there or cannot be read.
   */
  async findOriginal(): Promise<string | undefined> {
    if (!this.member) return undefined;
    try {
      const recent = await (await this.channel()).messages.fetch({ limit: 50 });
      return recent.find((m) => m.interactionMetadata?.id === this.interaction.id)?.id;
    } catch (error) {
      this.log.debug({ err: error }, 'could not look for the deferred reply in the channel');
      return undefined;
    }
  }

  /**
   * Edits a message with the bot token ("Edit Message"), adding {@link EXPIRED_NOTE} when it fits.
   * @param id the message's id; undefined when it is not known (then nothing is sent).
   * @throws InputError ({@link NOT_A_MEMBER}) where the bot is not a member; Error when `id` is
   *   undefined or the channel takes no messages; DiscordAPIError as discord.js does.
   */
  async edit(id: string | undefined, payload: EditPayload): Promise<Message> {
    this.ensureMember();
    if (!id) throw new Error("the reply's message id is unknown: it cannot be edited without the interaction");
    const channel = await this.channel();
    return channel.messages.edit(id, withExpiryNote(payload, await this.note));
  }

  /**
   * Posts a message with the bot token ("Create Message"), with {@link EXPIRED_NOTE} when it fits:
   * only for an invoker who may post there themselves (members.ts `mayPost`, from the
   * interaction's `member.permissions`).
   * @throws ForbiddenError ({@link MAY_NOT_POST_HERE}) for an invoker who may not; InputError
   *   ({@link NOT_A_MEMBER}) where the bot is not a member; Error when the channel takes no
   *   messages; DiscordAPIError as discord.js does.
   */
  async send(payload: ReturnType<typeof payloadOf>): Promise<Message> {
    this.ensureMember();
    this.ensureInvokerPosts();
    const note = await this.note;
    return (await this.channel()).send(withExpiryNote(payload, note));
  }

  /**
   * Tells the invoking user a sentence in the channel, for everyone to read, when no answer only
   * they see could be sent: the message starts with their mention (`<@id>`), which pings nobody
   * (`allowed_mentions` with nothing to parse); the whole text is cut to 2,000 characters.
   * Only for an invoker who may post there themselves.
   * @throws ForbiddenError for an invoker who may not; InputError where the bot is not a member;
   *   Error when the channel takes no messages; DiscordAPIError as discord.js does.
   */
  async tellUser(message: OutgoingMessage): Promise<Message> {
    this.ensureMember();
    this.ensureInvokerPosts();
    const named = fittedMessage({ ...message, content: `<@${this.interaction.user.id}> ${message.content}` });
    return (await this.channel()).send(payloadOf(named));
  }

  /** @throws InputError ({@link NOT_A_MEMBER}) where the bot is not a member: its token would be refused (50001). */
  private ensureMember(): void {
    if (!this.member) throw new InputError(NOT_A_MEMBER);
  }

  /** @throws ForbiddenError ({@link MAY_NOT_POST_HERE}) when the invoker may not post in the interaction's channel. */
  private ensureInvokerPosts(): void {
    const { interaction } = this;
    if (!mayPost(interaction.memberPermissions, interaction.channel?.isThread() ?? false))
      throw new ForbiddenError(MAY_NOT_POST_HERE);
  }

  /** The interaction's channel, fetched when not cached. @throws Error when it cannot be had or takes no messages. */
  private async channel(): Promise<SendableChannels> {
    const { channelId } = this.interaction;
    const channel =
      this.interaction.channel ?? (channelId ? await this.interaction.client.channels.fetch(channelId) : null);
    if (!channel?.isSendable()) throw new Error("the interaction's channel takes no messages");
    return channel;
  }
}

/**
 * A message of the bot's written over with the bot's token (Regenerate's earlier pages, an
 * edited mention's answer): each edit is one "Edit Message" (PATCH
 * /channels/{channel}/messages/{message}) of its text and named buttons, pinging nobody.
 * Discord lets the bot edit the messages it authored, an interaction's public reply and
 * follow-ups included, in a channel it can see (403 50001 Missing Access otherwise; an
 * ephemeral message is out of the bot token's reach: 10008).
 * @param buckets what an edit spends, when it is not the reply's own budget (a press's reply).
 */
export function botMessageHandle(
  rest: REST,
  at: Extract<MessageLocation, { platform: 'discord' }>,
  buckets?: readonly BucketId[],
): MessageHandle {
  return {
    edit: async (m) => {
      await rest.patch(Routes.channelMessage(at.channel, at.message), { body: editBodyOf(m) });
    },
    ref: messageRef(at),
    ...(buckets ? { buckets } : {}),
  };
}

/**
 * The payload with {@link EXPIRED_NOTE} under its content, when that stays within 2,000
 * characters; under a Components V2 message's components as a Text Display (components-v2.ts
 * `withTextDisplay`: such a message takes no `content`).
 */
function withExpiryNote<P extends { content?: string | null; flags?: number; components?: unknown }>(
  payload: P,
  note: string,
): P {
  if (isComponentsV2(payload.flags) && Array.isArray(payload.components))
    return { ...payload, components: withTextDisplay(payload.components, note) };
  const content = payload.content ?? '';
  if (content.includes(note) || content.length + note.length + 2 > DISCORD_MESSAGE_LIMITS.maxChars) return payload;
  return { ...payload, content: content ? `${content}\n\n${note}` : note };
}

/**
 * Edits one of an interaction's messages (`@original`, or a follow-up's id) with its token: a text edit is one PATCH
 * ("Edit Original Interaction Response" / "Edit Followup Message") without a discord.js Message (a thousand streamed
 * answers spent a fifth of their CPU on Messages nobody read); with files, editReply (multipart upload).
 * @param whole the first write of a deferred reply: embeds are sent even when empty.
 * @throws DiscordAPIError as discord.js's REST client does (50027 once the token expired).
 */
export async function editWithToken(
  interaction: AnswerableInteraction,
  messageId: string,
  message: OutgoingMessage,
  whole = false,
): Promise<unknown> {
  if (message.files?.length) {
    const payload = whole ? payloadOf(message) : editPayloadOf(message);
    return interaction.editReply(messageId === '@original' ? payload : { message: messageId, ...payload });
  }
  const route = Routes.webhookMessage(interaction.applicationId, interaction.token, messageId);
  return interaction.client.rest.patch(route, { body: editBodyOf(message, whole), auth: false });
}
