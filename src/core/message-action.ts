/**
 * Message actions: what a user picks in a message's own menu (Discord: a message context-menu
 * command, Apps → <name>; Slack: a message shortcut, More actions → <name>), defined once under
 * commands/ and served by both adapters, like the slash commands of command.ts. The adapter hands
 * over the chosen message ({@link ChosenMessage}); an action that asks a question first
 * ({@link MessageAction.question}) has the platform show a form (Discord: a modal; Slack: a modal
 * opened with views.open) and runs when it is submitted.
 */

import { runInvocation } from './command.ts';
import type { Texted } from './command-words.ts';
import type { Core } from './core.ts';
import { InputError } from './errors.ts';
import type { CommandOutcome } from './events.ts';
import type { Attachment, CommandContext } from './platform.ts';
import { ensureMayPost } from './rights.ts';

/** The message an action was used on, as the adapter read it. */
export interface ChosenMessage {
  /** Its author's display name. */
  author: string;
  /** Whether the bot itself wrote it (its own answer). */
  fromBot: boolean;
  /** Its text, mentions shown as names (as a mention's text is). */
  text: string;
  /** Its files (images, text files, PDFs). */
  attachments: readonly Attachment[];
}

/**
 * The form that asks an action's question: one text field. Sizes are within both platforms'
 * limits (docs/platform-limits.md, "Modals"): a title of at most 24 characters (Slack; Discord
 * takes 45), a label of at most 45 (Discord's Label), a placeholder of at most 100 (Discord;
 * Slack takes 150), a submit label of at most 24 (Slack), and answers of at most 3,000
 * characters (Slack's plain-text input; Discord takes 4,000).
 */
export interface QuestionForm {
  title: string;
  label: string;
  placeholder: string;
  /** The submit button's text (Slack; Discord's modals have their own). */
  submit: string;
  /** Longest question, in characters (1–3,000). */
  maxLength: number;
}

/** One use of an action: the chosen message, and the question typed in its form. */
export interface MessageActionUse {
  message: ChosenMessage;
  /** The question, trimmed and non-empty, for an action with a {@link QuestionForm}; undefined otherwise. */
  question?: string | undefined;
}

/** A message action, defined once in commands/<file>.ts (commands/index.ts lists them). */
export interface MessageAction extends Texted {
  /**
   * Shown in the message's menu on both platforms: Discord's message command name (1–32
   * characters, spaces and capitals allowed) and Slack's shortcut name (at most 24 characters).
   */
  name: string;
  /**
   * Slack's `callback_id` of the shortcut (and of its form's view), the invocation's name in logs
   * and `command.done`, and the first part of the Discord form's `custom_id` (keys.ts
   * `buttonId`): 1–32 lowercase letters, digits and `_`.
   */
  id: string;
  /** Shown under the name in Slack's shortcut list: at most 150 characters (Discord shows none). */
  description: string;
  /** When set, the user is asked this first, and the action runs with their answer. */
  question?: QuestionForm;
  /**
   * Runs the action in `ctx` (the conversation where the answer goes: the chosen message's
   * channel or thread).
   * @throws InputError (the user is told), or what the feature throws.
   */
  execute(ctx: CommandContext, core: Core, use: MessageActionUse): Promise<void>;
}

/**
 * Runs one use of a message action as an invocation named by its id (runInvocation: failures
 * told and logged once, `command.done` emitted). Its answer is posted for the user, so a user who
 * may not post there is refused first (rights.ts `ensureMayPost`). The question, for an action that asks one, is
 * trimmed and checked here (the platforms' forms check it too, client-side); the chosen message is
 * read within the invocation, so that a platform's refusal to give it is told like any other.
 * @param use.read reads the chosen message (the adapter's: from the payload, or from the
 *   platform again); throws InputError when it is gone, the platform's error when refused.
 * @param use.question the form's raw answer; ignored for an action without a form.
 */
export function runMessageAction(
  action: MessageAction,
  ctx: CommandContext,
  core: Core,
  use: { read: () => Promise<ChosenMessage>; question?: string | undefined },
): Promise<CommandOutcome> {
  return runInvocation(action.id, ctx, core, async () => {
    // The answer is posted for the user, in the channel: only where they may post.
    await ensureMayPost(ctx.user);
    const question = action.question ? checkedQuestion(action.question, use.question) : undefined;
    await action.execute(ctx, core, { message: await use.read(), question });
  });
}

/** The question trimmed. @throws InputError when it is blank or longer than the form allows. */
function checkedQuestion(form: QuestionForm, raw: string | undefined): string {
  const question = (raw ?? '').trim();
  if (question === '') throw new InputError('Type a question about the message.');
  if (question.length > form.maxLength)
    throw new InputError(`The question is too long (${question.length} characters; at most ${form.maxLength}).`);
  return question;
}
