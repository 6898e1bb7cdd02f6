/**
 * Message actions on Discord (core/message-action.ts): message commands (type 3, Apps → <name>
 * in a message's menu, registered by deploy-commands from commands/) and the modal of an action
 * that asks a question first.
 *
 * - An action without a question is acknowledged at once with an ephemeral deferral ("is
 *   thinking…", shown to the user alone), and runs.
 * - The answer is posted with the bot's token for the user: a member who may not post in the
 *   channel (Send Messages; in a thread, Send Messages in Threads, as the interaction's
 *   `member.permissions` say) is refused in a sentence only they see, before the modal, and
 *   again at the submit (core/rights.ts, through runMessageAction).
 * - An action with a question answers the command with a modal (callback 9, within Discord's
 *   3 s; its `custom_id` is keys.ts `buttonId(<action id>, <message id>)`); the chosen message is
 *   kept in this process ({@link PendingTargets}) until the modal is submitted, since a message
 *   fetched again may come without its content (no Message Content intent). The submit is
 *   acknowledged at once the same way, and the action runs with the question.
 *
 * The chosen message is read from the interaction (`resolved.messages`), which carries its
 * content whatever the bot's intents (Discord, "Message Content Intent": content "of the message
 * a message context menu command is used on"). The answer goes where a mention's would: a reply
 * to the chosen message, posted with the bot's token and streamed by editing it (MessageReply),
 * its exchange joining the channel's (or thread's) conversation. The ephemeral "thinking…" then
 * becomes a pointer to the answer (what a user who picked an old message needs to find it); a
 * failure is told there, to the user alone.
 *
 * Where the bot is not a member (a user install's action: user-install.ts), the answer is the
 * interaction's own public reply instead (deferred publicly, streamed by its edits and follow-ups,
 * InteractionReply), in that install's conversation; the message is read from the interaction
 * alone, never fetched, and its files are kept whole for Regenerate.
 */

import type {
  APIModalInteractionResponseCallbackData,
  Interaction,
  Message,
  MessageContextMenuCommandInteraction,
  ModalSubmitInteraction,
} from 'discord.js';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import { FEEDBACK_BUTTON } from '../../core/features/feedback.ts';
import { english, type Sentence, sentence, type Words } from '../../core/i18n/words.ts';
import { buttonId, conversationKey, parseButtonId } from '../../core/keys.ts';
import { type ChosenMessage, type MessageAction, questionFormIn, runMessageAction } from '../../core/message-action.ts';
import type { CommandContext } from '../../core/platform.ts';
import { MAY_NOT_POST_HERE } from '../../core/rights.ts';
import { type Logger, newReference } from '../../log.ts';
import { ActionReply } from './action-reply.ts';
import { interactionBudget } from './budget.ts';
import { handleFeedbackSubmit } from './feedback.ts';
import { InteractionReply } from './interactions.ts';
import { interactionLocale } from './locale.ts';
import { interactionUser, mayPost, userInstallUser } from './members.ts';
import { attachmentOf, attachmentsOf, channelKeyOf, looksHidden, promptOf } from './messages.ts';
import type { PendingTargets } from './pending-targets.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { InteractionResponder } from './responder.ts';
import { oneFieldModal } from './rest.ts';
import { isUserInstalledOnly, userInstallKeys } from './user-install.ts';

/** The `custom_id` of the question's text input in an action's modal. */
export const QUESTION_INPUT_ID = 'question';

/** Said when a modal comes back for a message the bot no longer holds and cannot read again. */
export const TARGET_GONE: Sentence = sentence('discord.actions.target_gone');

/** Kept for the modal's submit (pending-targets.ts), and named here as before. */
export { PENDING_TARGET_TTL_MS, PendingTargets } from './pending-targets.ts';

/** What a message action's handling needs from the adapter. */
export interface MessageActionDeps {
  core: Core;
  log: Logger;
  actions: readonly MessageAction[];
  pending: PendingTargets;
  botId: string;
  /** Whether the Message Content intent is on (DISCORD_MESSAGE_CONTENT). */
  messageContent: boolean;
  /** Budgets learnt from Discord, for the responder's one-off writes (budget.ts). */
  rateLimits?: DiscordRateLimits;
}

/** The words for what only the interaction's user sees (their `locale`). */
function userWords(interaction: Pick<Interaction, 'locale' | 'guildLocale'>, deps: Pick<MessageActionDeps, 'core'>) {
  return deps.core.languages.forUser({ locale: interactionLocale(interaction) });
}

/** The modal asking an action's question about one message, in `words` (the user's). */
export function questionModal(
  action: MessageAction,
  messageId: string,
  words: Words = english,
): APIModalInteractionResponseCallbackData {
  const form = questionFormIn(action.question!, words);
  return oneFieldModal(form, { modal: buttonId(action.id, messageId), input: QUESTION_INPUT_ID });
}

/**
 * Handles a message command: shows the action's modal, or acknowledges and runs it.
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleMessageCommand(
  interaction: MessageContextMenuCommandInteraction,
  deps: MessageActionDeps,
  signal: AbortSignal,
): Promise<void> {
  const action = deps.actions.find((a) => a.name === interaction.commandName);
  const ref = newReference();
  const log = deps.log.child({
    platform: 'discord',
    ref,
    interaction: interaction.id,
    command: action?.id ?? interaction.commandName,
    message: interaction.targetId,
  });
  const responder = new InteractionResponder(
    interaction,
    log,
    deferralOf(interaction),
    interactionBudget(interaction, deps),
  );
  try {
    if (!action) {
      log.warn('unknown message command');
      await responder.sendEphemeral((await userWords(interaction, deps)).t('discord.actions.unknown'));
      return;
    }
    if (action.question) {
      // No form for someone the answer would be refused to (runMessageAction checks again at the submit).
      const posts =
        isUserInstalledOnly(interaction) ||
        mayPost(interaction.memberPermissions, interaction.channel?.isThread() ?? false);
      // Both the refusal and the form are the user's alone: in their language (the interaction's `locale`).
      const words = await userWords(interaction, deps);
      if (!posts) {
        log.info({ code: 'forbidden' }, 'may not post here: no question form');
        await responder.sendEphemeral(words.say(MAY_NOT_POST_HERE));
        return;
      }
      deps.pending.keep(interaction.user.id, interaction.targetMessage);
      await responder.showModal(questionModal(action, interaction.targetId, words)).catch((error: unknown) => {
        log.warn({ err: error }, 'could not show the question form');
        return responder.sendEphemeral(words.t('discord.actions.form_not_shown'));
      });
      return;
    }
    responder.start();
    const target = interaction.targetMessage;
    await runOn(interaction, async () => target, { action, responder, deps, log, ref, signal });
  } finally {
    responder.dispose();
  }
}

/**
 * Handles the submit of an action's modal: acknowledges it, finds the chosen message again,
 * and runs the action with the question. A feedback reason's modal goes to feedback.ts.
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleModalSubmit(
  interaction: ModalSubmitInteraction,
  deps: MessageActionDeps,
  signal: AbortSignal,
): Promise<void> {
  const { command, args } = parseButtonId(interaction.customId);
  if (command === FEEDBACK_BUTTON) return handleFeedbackSubmit(interaction, deps);
  const action = deps.actions.find((a) => a.id === command && a.question);
  const ref = newReference();
  const log = deps.log.child({ platform: 'discord', ref, interaction: interaction.id, command });
  const responder = new InteractionResponder(
    interaction,
    log,
    deferralOf(interaction),
    interactionBudget(interaction, deps),
  );
  responder.start();
  try {
    const messageId = args.length === 1 && /^\d{1,22}$/.test(args[0]!) ? args[0]! : undefined;
    if (!action || !messageId) {
      log.warn({ customId: interaction.customId }, 'a form of no known action was submitted');
      await responder.sendEphemeral((await userWords(interaction, deps)).t('discord.actions.form_gone'));
      return;
    }
    const kept = deps.pending.take(interaction.user.id, messageId);
    const read = async () => {
      const message = kept ?? (await fetchAgain(interaction, messageId, deps));
      if (!message) throw new InputError(TARGET_GONE);
      return message;
    };
    // A submit without the input (a form of another version) is a blank question: refused in a sentence.
    const question = interaction.fields.fields.has(QUESTION_INPUT_ID)
      ? interaction.fields.getTextInputValue(QUESTION_INPUT_ID)
      : '';
    await runOn(interaction, read, { action, responder, deps, log, ref, signal }, question);
  } finally {
    responder.dispose();
  }
}

/**
 * How an action's interaction is deferred: ephemerally (its answer is a reply to the chosen
 * message, posted with the bot's token), or publicly where the bot is not a member (its answer is
 * the interaction's own reply).
 */
function deferralOf(interaction: MessageContextMenuCommandInteraction | ModalSubmitInteraction): 'reply' | 'ephemeral' {
  return isUserInstalledOnly(interaction) ? 'reply' : 'ephemeral';
}

/** The chosen message fetched again, when it is there and the bot may read it (never where it is not a member). */
async function fetchAgain(
  interaction: ModalSubmitInteraction,
  messageId: string,
  deps: MessageActionDeps,
): Promise<Message | undefined> {
  if (isUserInstalledOnly(interaction)) return undefined;
  const channel = interaction.channel;
  if (!channel || !('messages' in channel)) return undefined;
  const message = await channel.messages.fetch(messageId).catch(() => undefined);
  if (!message || (!deps.messageContent && looksHidden(message, deps.botId))) return undefined;
  return message;
}

/** One run of an action on a message, with what it is answered through. */
interface ActionRun {
  action: MessageAction;
  responder: InteractionResponder;
  deps: MessageActionDeps;
  log: Logger;
  ref: string;
  signal: AbortSignal;
}

/**
 * Runs the action on the message `read` gives (see the file's comment), in the conversation of
 * the interaction's channel (the message's: a message command is used where its message is).
 */
async function runOn(
  interaction: MessageContextMenuCommandInteraction | ModalSubmitInteraction,
  read: () => Promise<Message>,
  run: ActionRun,
  question?: string,
): Promise<void> {
  const { deps, log, ref, signal, responder } = run;
  const channelId = interaction.channelId ?? '';
  let target: Message | undefined;
  const userInstall = userInstallKeys(interaction);
  // Where the bot is not a member, the interaction's own reply is the answer.
  const reply = userInstall
    ? new InteractionReply(responder, deps.rateLimits)
    : new ActionReply(() => target, channelId, responder, log, userWords(interaction, deps));
  const ctx: CommandContext = {
    platform: 'discord',
    locale: interactionLocale(interaction),
    ...(userInstall ?? {
      conversationId: conversationKey({
        platform: 'discord',
        guild: interaction.guildId ?? undefined,
        channel: channelId,
      }),
      channelKey: channelKeyOf(interaction.guildId, channelId, interaction.channel),
    }),
    isDirectMessage: !userInstall && !interaction.inGuild(),
    user: userInstall
      ? userInstallUser(interaction.user, deps.core.admins)
      : interactionUser(interaction, deps.core.admins),
    options: {},
    files: {},
    signal,
    log,
    ref,
    startedAt: performance.now(),
    reply,
  };
  try {
    const readChosen = async () => {
      target = await read();
      return chosenOf(target, deps, userInstall === undefined);
    };
    await runMessageAction(run.action, ctx, deps.core, { read: readChosen, question });
  } finally {
    if (reply instanceof ActionReply) reply.dispose();
  }
}

/** Whether the bot token reads the message's files again when it fetches the message (gateway docs, "Message Content Intent"). */
function readableLater(message: Message, deps: MessageActionDeps): boolean {
  return (
    deps.messageContent ||
    !message.inGuild() ||
    message.author.id === deps.botId ||
    message.mentions.users.has(deps.botId)
  );
}

/**
 * A Discord message as the core's chosen message.
 * @param member whether the bot is a member where the message is (else it can never fetch it again).
 */
function chosenOf(message: Message, deps: MessageActionDeps, member: boolean): ChosenMessage {
  return {
    author: message.member?.displayName ?? message.author.displayName,
    fromBot: message.author.id === deps.botId,
    text: promptOf(message, deps.botId),
    // Fetched again later (Regenerate), another person's guild message shows its files only with
    // the Message Content intent or when it mentions the bot: without either, its images are kept whole.
    attachments:
      member && readableLater(message, deps)
        ? attachmentsOf(message, 'message', deps.core.downloader)
        : message.attachments.map((file) => attachmentOf(file, 'message', deps.core.downloader)),
  };
}
