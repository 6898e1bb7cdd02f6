/**
 * The reply of a Discord message action (message-actions.ts): the answer itself is a reply to the
 * chosen message, as a mention's is (messages.ts MessageReply); the interaction's own ephemeral
 * reply (the responder's) carries what only the user may read: its "thinking…", then a pointer
 * to the answer, or why there is none.
 */
import type { Message } from 'discord.js';
import { english, type Sentence, type Words } from '../../core/i18n/words.ts';
import type { BucketId } from '../../core/keys.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { explainDiscordError, isUnknownMessage } from './errors.ts';
import { MessageReply } from './messages.ts';
import { channelBucket } from './rate-limits.ts';
import type { InteractionResponder } from './responder.ts';
import { DISCORD_MESSAGE_LIMITS } from './rest.ts';

/**
 * The reply of a message action: the answer is a reply to the chosen message (MessageReply:
 * typing, then a message replying to it, edited as tokens arrive); what only the user may read
 * goes to the interaction's ephemeral reply (the responder). Once the answer's first message is
 * posted, the ephemeral "thinking…" says where it is.
 */
export class ActionReply implements ReplyChannel {
  readonly limits = DISCORD_MESSAGE_LIMITS;
  /** Discord leaves a message's components as they are when an edit names none. */
  readonly editsKeepButtons = true;
  private made: MessageReply | undefined;
  private pointed = false;

  /**
   * @param target the chosen message, once read (the core reads it before it writes anything public).
   * @param channelId the interaction's channel (the chosen message's).
   */
  constructor(
    private readonly target: () => Message | undefined,
    private readonly channelId: string,
    private readonly responder: InteractionResponder,
    private readonly log: Logger,
    /** The words of the ephemeral pointer to the answer: the user's. */
    private readonly words: Promise<Words> = Promise.resolve(english),
  ) {}

  /** The reply to the chosen message. @throws Error before the message was read (a core bug). */
  private get answer(): MessageReply {
    const message = this.target();
    if (!message) throw new Error('a message action wrote before its message was read');
    this.made ??= new MessageReply(message, this.log);
    return this.made;
  }

  async defer(): Promise<void> {
    await Promise.all([this.responder.defer('ephemeral'), this.answer.defer()]);
  }

  async send(message: OutgoingMessage): Promise<MessageHandle> {
    const handle = await this.answer.send(message);
    if (!this.pointed) {
      this.pointed = true;
      const url = this.answer.firstUrl;
      void Promise.all([this.words, this.responder.defer('ephemeral')])
        .then(([words]) =>
          this.responder.editEphemeral({
            content: url
              ? words.t('discord.actions.answered_here', { url })
              : words.t('discord.actions.answered_in_channel'),
          }),
        )
        .catch((error: unknown) => this.log.warn({ err: error }, 'could not point to the answer'));
    }
    return handle;
  }

  sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    return this.responder.sendEphemeral(message);
  }

  explain(error: unknown): Sentence | undefined {
    return explainDiscordError(error);
  }

  /** Discord's 10008 Unknown Message: the message written to was deleted. */
  isDeleted(error: unknown): boolean {
    return isUnknownMessage(error);
  }

  /** Bot-token writes spend the channel's budget (as a mention's reply). */
  buckets(): BucketId[] {
    return [channelBucket(this.channelId)];
  }

  /** Stops the typing indicator. */
  dispose(): void {
    this.made?.dispose();
  }
}
