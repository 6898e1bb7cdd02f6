/**
 * One Discord interaction's answer (a slash command, a button press, a message command, a modal's submit): the deferral
 * and its timer, answers only the user sees, a modal, the update of a pressed message, and the reply's writes, with the
 * bot's token once the interaction's has expired. Discord's "Receiving and Responding" (docs/platform-limits.md).
 */
import { type APIModalInteractionResponseCallbackData, type InteractionReplyOptions, MessageFlags } from 'discord.js';
import type { OutgoingMessage } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { inSpan } from '../../ops/tracing.ts';
import { type OneOffBudget, UNBUDGETED } from './budget.ts';
import { type AnswerableInteraction, ChannelWrites, editWithToken } from './channel-writes.ts';
import { isExpiredToken, isUnknownMessage } from './errors.ts';
import { editPayloadOf, fittedMessage, payloadOf } from './rest.ts';
import { FollowUpAllowance, onlyUserInstall } from './user-install.ts';

/** The note under a message finished with the bot's token; defined with the writes that add it. */
export { EXPIRED_NOTE } from './channel-writes.ts';

/** An interaction neither answered nor deferred after this many ms is deferred: Discord allows 3 s for the first response. */
export const AUTO_DEFER_MS = 2_000;

/**
 * How an interaction is deferred. `reply`: deferReply (callback type 5), a new reply showing "is thinking…" to everyone
 * until it is filled. `ephemeral`: the same shown to the user alone (flag 64; a message action, whose answer is a reply
 * to the chosen message). `update`: deferUpdate (type 6, button presses only), the pressed message kept as it is.
 */
export type DeferralKind = 'reply' | 'ephemeral' | 'update';

/**
 * The one owner of an interaction's answer. Made at the top of the interaction's handler: from then on, an interaction
 * not answered after {@link AUTO_DEFER_MS} is deferred with the pending {@link DeferralKind}. Every write goes through
 * {@link withToken}: when Discord says the interaction's token has expired (50027, after 15 minutes), the answer goes
 * on with the bot's own token: the (non-ephemeral) reply is edited in the channel and follow-ups are channel messages,
 * with {@link EXPIRED_NOTE} saying why; where the bot is not a member (user-install.ts), it does not, and sends at most
 * five follow-ups.
 */
export class InteractionResponder {
  private deferring: Promise<unknown> | undefined;
  /** What this responder's deferral was (undefined when none was made). */
  private deferredAs: DeferralKind | undefined;
  private readonly timer: NodeJS.Timeout;
  /** Whether a public message has been shown in the reply (the deferred reply filled). */
  private shown = false;
  /**
   * The reply's message id, for edits with the bot token after the token expired: from the reply's first write, else
   * looked up (findOriginal); the deferral is a 204 without `?with_response` (a burst's first text comes sooner).
   */
  private originalId: string | undefined;
  /** Set once the token was refused: writes go through the channel. */
  private tokenExpired = false;
  /** The answer's writes with the bot's token, in the channel (none where the bot is not a member). */
  readonly inChannel: ChannelWrites;
  /** The follow-ups left: five where only a user install authorized the interaction (user-install.ts). */
  private readonly followUps: FollowUpAllowance;

  /**
   * Starts the automatic deferral's timer ({@link AUTO_DEFER_MS}).
   * @param autoDeferral how the timer defers: `reply` for a command, `update` for a button press.
   * @param budget where its one-off writes wait for room (budget.ts); interaction callbacks never wait.
   */
  constructor(
    /** A slash command, a press of one of the bot's buttons, a message command or a modal's submit. */
    readonly interaction: AnswerableInteraction,
    /** The interaction's logger (its lines carry the reference). */
    readonly log: Logger,
    private autoDeferral: DeferralKind,
    private readonly budget: OneOffBudget = UNBUDGETED,
  ) {
    this.timer = setTimeout(() => this.start(), AUTO_DEFER_MS);
    this.timer.unref();
    this.inChannel = new ChannelWrites(interaction, log);
    this.followUps = new FollowUpAllowance(onlyUserInstall(interaction));
  }

  /** Whether Discord has had a first response (a deferral or a reply). */
  get answered(): boolean {
    return this.interaction.deferred || this.interaction.replied;
  }

  /** Whether a public message fills the reply (later public messages are follow-ups). */
  get filled(): boolean {
    return this.shown;
  }

  /** Whether Discord refused the interaction's token (50027): writes now use the bot's token. */
  get expired(): boolean {
    return this.tokenExpired;
  }

  /** A button handler posts new messages (Reroll): a deferral not yet made will be a deferReply. */
  repliesWithMessages(): void {
    this.autoDeferral = 'reply';
  }

  /** Starts the deferral without waiting for it (its failure is left to whoever awaits {@link defer}). */
  start(): void {
    this.defer().catch(() => undefined);
  }

  /**
   * Defers the interaction (Discord's deferReply or deferUpdate), once: later calls wait for the same deferral; nothing
   * is sent when the interaction was answered already. Stops the timer.
   * @param kind `update` only means something for a button press (a command is deferred with a reply).
   * @throws DiscordAPIError when Discord refuses the deferral (10062: the 3 s were over).
   */
  defer(kind: DeferralKind = this.autoDeferral): Promise<void> {
    clearTimeout(this.timer);
    if (this.answered) return Promise.resolve();
    if (!this.deferring) {
      const button = kind === 'update' && this.interaction.isButton() ? this.interaction : undefined;
      this.deferredAs = button ? 'update' : kind === 'ephemeral' ? 'ephemeral' : 'reply';
      const flags = this.deferredAs === 'ephemeral' ? MessageFlags.Ephemeral : undefined;
      this.deferring = inSpan('discord.defer', { 'genbot.deferral': this.deferredAs }, () =>
        button ? button.deferUpdate() : this.interaction.deferReply(flags ? { flags } : {}),
      );
      if (button) this.originalId = button.message.id; // after deferUpdate, `@original` is the pressed message
    }
    return this.deferring.then(() => undefined);
  }

  /**
   * Tells the invoking user alone (an ephemeral message of at most 2,000 characters): the interaction's reply when it
   * has none yet, else a follow-up. A deferred reply showing "is thinking…" to everyone is removed first; when it
   * cannot be removed, the sentence is written into it instead (never "thinking" forever); when it is gone already
   * (10008 Unknown Message: deleted by someone), the sentence is an ephemeral follow-up. When Discord refuses that
   * follow-up, it is posted in the channel naming the user, pinging nobody (ChannelWrites.tellUser; not where the bot
   * is not a member: only logged); a message with files (/export) never goes to the channel: only logged. Never throws.
   */
  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    clearTimeout(this.timer);
    const fitted = fittedMessage(message);
    const payload = { ...payloadOf(fitted), flags: MessageFlags.Ephemeral as const };
    try {
      await this.deferring?.catch(() => undefined);
      if (!this.answered) {
        await this.interaction.reply(payload);
        return;
      }
      // An ephemeral deferral not written into yet takes the sentence itself.
      if (this.deferredAs === 'ephemeral' && !this.shown) return await this.editEphemeral(fitted);
      if (this.deferredAs === 'reply' && !this.shown && !(await this.removeThinking(fitted))) return;
      await this.withToken(
        () => this.ephemeralFollowUp(payload, fitted),
        () =>
          fitted.files?.length
            ? Promise.reject(new Error('private files stay out of the channel'))
            : this.budget.channelWrite(() => this.inChannel.send(payloadOf(fitted))),
      );
    } catch (error) {
      this.log.warn({ err: error }, 'could not send an ephemeral message on Discord');
    }
  }

  /**
   * An ephemeral follow-up ("Create Followup Message"); when Discord refuses it (other than for an expired token, which
   * the caller's {@link withToken} handles), the sentence in the channel, naming the user.
   * @throws DiscordAPIError 50027 from the follow-up; what the channel message throws.
   */
  private async ephemeralFollowUp(payload: InteractionReplyOptions, message: OutgoingMessage): Promise<unknown> {
    try {
      return await this.budget.interactionWrite(() => this.followUps.spend(() => this.interaction.followUp(payload)));
    } catch (error) {
      if (isExpiredToken(error) || message.files?.length) throw error;
      this.log.warn({ err: error }, 'could not send an ephemeral follow-up; telling the user in the channel');
      return this.budget.channelWrite(() => this.inChannel.tellUser(message));
    }
  }

  /**
   * Removes the deferred reply ("is thinking…"); when Discord will not, fills it with `message`.
   * @returns whether it was removed or is gone already (10008: the message still has to be sent).
   * @throws DiscordAPIError when it can be neither removed nor filled (other than 10008).
   */
  private async removeThinking(message: OutgoingMessage): Promise<boolean> {
    const removed = await this.budget
      .interactionWrite(() => this.interaction.deleteReply())
      .then(
        () => true,
        (error: unknown) => {
          if (isUnknownMessage(error)) return this.gone(error);
          this.log.warn({ err: error }, 'could not remove the deferred reply; writing the sentence into it');
          return false;
        },
      );
    if (removed) return true;
    try {
      await this.withToken(
        () => this.budget.interactionWrite(() => this.interaction.editReply(payloadOf(message))),
        async () => {
          const id = this.originalId ?? (await this.inChannel.findOriginal());
          return this.budget.channelWrite(() => this.inChannel.edit(id, payloadOf(message)));
        },
      );
    } catch (error) {
      if (isUnknownMessage(error)) return this.gone(error);
      throw error;
    }
    this.shown = true;
    return false;
  }

  /** Notes that the deferred reply no longer exists (Discord said 10008). @returns true: nothing is left to remove. */
  private gone(error: unknown): true {
    this.log.info({ err: error }, 'the deferred reply is gone already; the sentence follows in a follow-up');
    return true;
  }

  /**
   * Replaces the pressed message (UPDATE_MESSAGE, type 7), or edits it once the press was deferred.
   * @throws Error for a slash command (it has no pressed message); DiscordAPIError as discord.js does.
   */
  async update(message: OutgoingMessage): Promise<void> {
    clearTimeout(this.timer);
    await this.deferring?.catch(() => undefined);
    if (!this.interaction.isButton()) throw new Error('only a button press has a message to update');
    // After a deferral, an edit with the token (in its budgets); as the first response, a callback (never waits).
    if (this.answered) await this.budget.interactionWrite(() => this.interaction.editReply(editPayloadOf(message)));
    else await this.interaction.update(editPayloadOf(message));
  }

  /**
   * Answers with a modal (callback 9, MODAL), as the first response (never to a modal's submit).
   * @throws Error when answered already or for a modal's submit; DiscordAPIError (50035: a modal Discord refuses).
   */
  async showModal(modal: APIModalInteractionResponseCallbackData): Promise<void> {
    clearTimeout(this.timer);
    if (this.interaction.isModalSubmit() || this.answered || this.deferring !== undefined)
      throw new Error('a modal comes first');
    await this.interaction.showModal(modal);
  }

  /**
   * Writes into the ephemeral deferral (the interaction's token only: an ephemeral message is out of the bot
   * token's reach). @throws DiscordAPIError as discord.js does (50027 once the token expired).
   */
  async editEphemeral(message: OutgoingMessage): Promise<void> {
    await this.budget.interactionWrite(() => this.interaction.editReply(payloadOf(message)));
    this.shown = true;
  }

  /** Acknowledges a button press without changing its message now (deferUpdate). Never throws. */
  async acknowledge(): Promise<void> {
    await this.defer('update').catch((error: unknown) =>
      this.log.warn({ err: error }, 'could not acknowledge a button press'),
    );
  }

  /**
   * Fills the deferred reply with the first public message (all of it: no embeds or buttons when it has none). With the
   * token gone before any text (an answer that waited 15 minutes for its first word), the deferred reply is found in
   * the channel and filled with the bot's token, or, when it cannot be found, the message is posted in the channel.
   * @returns the reply's message id (undefined when Discord's answer named none).
   * @throws DiscordAPIError as discord.js does; the reply counts as filled only once Discord took it.
   */
  async fill(message: OutgoingMessage): Promise<string | undefined> {
    const filled = (await this.withToken(
      () => editWithToken(this.interaction, '@original', message, true),
      async () => {
        const id = await this.inChannel.findOriginal();
        return id ? this.inChannel.edit(id, payloadOf(message)) : this.inChannel.send(payloadOf(message));
      },
    )) as { id?: string } | undefined;
    this.originalId = filled?.id;
    this.shown = true;
    return this.originalId;
  }

  /** Posts a public follow-up. @returns its message id. @throws DiscordAPIError as discord.js does. */
  async followUp(message: OutgoingMessage): Promise<string> {
    const payload = payloadOf(message);
    const sent = await this.withToken(
      () => this.followUps.spend(() => this.interaction.followUp(payload)),
      () => this.inChannel.send(payload),
    );
    return sent.id;
  }

  /**
   * Edits one of the interaction's public messages: `@original` (the filled reply) or a follow-up's id.
   * @throws DiscordAPIError as discord.js does.
   */
  async edit(messageId: string, message: OutgoingMessage): Promise<void> {
    await this.withToken(
      () => editWithToken(this.interaction, messageId, message),
      () => this.inChannel.edit(messageId === '@original' ? this.originalId : messageId, editPayloadOf(message)),
    );
  }

  /** Stops the automatic deferral's timer (when the handler is over). */
  dispose(): void {
    clearTimeout(this.timer);
  }

  /** Runs a write with the interaction's token; once Discord refuses the token (50027), with the bot's. */
  private async withToken<T>(write: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (this.tokenExpired) return fallback();
    try {
      return await write();
    } catch (error) {
      if (!isExpiredToken(error)) throw error;
      this.tokenExpired = true;
      this.log.info('interaction token expired: continuing with the bot token');
      return fallback();
    }
  }
}
