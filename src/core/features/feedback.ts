/**
 * 👍 / 👎 on every finished answer (a text answer of /chat, /complete, a mention, a message
 * action, a regenerated one; an /imagine image): the answer's record is kept when it finishes
 * (state/feedback.ts: its kind, command, model, channel) under a feedback id of its own, which
 * its buttons carry (`feedback:<id>:up`, `feedback:<id>:down`; on Slack one `feedback_buttons`
 * element, `feedback:<id>` with the values `up` / `down`). A press is checked when it runs (the
 * answer's record exists on this platform), casts or changes the presser's vote, and is told to
 * the presser alone. A 👎's acknowledgement offers **Add a reason** (`feedback:<id>:reason`),
 * whose press opens a one-field form (a modal on both platforms: Discord allows a modal only as
 * an interaction's first answer, which the vote's acknowledgement already is); its submit keeps
 * the reason, at most {@link REASON_MAX_CHARS} characters, with the presser's own 👎.
 */
import type { Logger } from '../../log.ts';
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import type { InvocationLocale } from '../i18n/languages.ts';
import { english, type Sentence, sentence, type Words } from '../i18n/words.ts';
import { randomHex } from '../ids.ts';
import { buttonId, parseButtonId, storeKeys, workspaceOf } from '../keys.ts';
import type { Button, ComponentContext, OutgoingMessage, TextForm } from '../platform.ts';
import {
  castVote,
  FEEDBACK_TTL_MS,
  type FeedbackKind,
  type FeedbackRecord,
  keepFeedbackRecord,
  keepReason,
  readFeedbackRecord,
  readVote,
  type Vote,
} from '../state/feedback.ts';

/** The command name of feedback buttons and of the reason's form: `feedback:<id>:<up|down|reason>`. */
export const FEEDBACK_BUTTON = 'feedback';

/** Longest reason kept, in characters (the form allows no more; a longer submit is cut). */
export const REASON_MAX_CHARS = 1_000;

/** The acknowledgement of a vote, by vote, and whether it changed one. */
export function voteNoted(vote: Vote, previous: Vote | undefined): Sentence {
  const thumb = vote === 'up' ? '👍' : '👎';
  if (previous && previous !== vote) return sentence('answers.feedback.vote_changed', { thumb });
  return sentence(previous === vote ? 'answers.feedback.vote_same' : 'answers.feedback.vote_noted', { thumb });
}

/** What an answer's feedback record is made of, besides what the invocation gives. */
export interface FeedbackAnswer {
  kind: FeedbackKind;
  command: string;
  model: string;
}

/** Who gave the answer, and where (a command's or a press's context). */
type Where = {
  platform: 'discord' | 'slack';
  channelKey: string;
  conversationId: string;
  user: { id: string };
  log: Logger;
};

/** The 👍 / 👎 buttons of the answer whose feedback id is `id` (emoji alone: the same in every language). */
export function feedbackButtons(id: string): Button[] {
  const actionId = buttonId(FEEDBACK_BUTTON, id);
  return [
    { id: buttonId(FEEDBACK_BUTTON, id, 'up'), label: '👍', feedback: { positive: true, actionId, value: 'up' } },
    { id: buttonId(FEEDBACK_BUTTON, id, 'down'), label: '👎', feedback: { positive: false, actionId, value: 'down' } },
  ];
}

/**
 * Keeps a finished answer's feedback record under a new id, and returns its 👍 / 👎 buttons;
 * none when the store fails (the answer is shown without them; told to the store's health).
 */
export async function keepFeedback(core: Core, where: Where, answer: FeedbackAnswer): Promise<Button[]> {
  const id = randomHex(9);
  const record: FeedbackRecord = {
    version: 1,
    ...answer,
    platform: where.platform,
    channelKey: where.channelKey,
    conversationId: where.conversationId,
    requesterId: where.user.id,
    at: Date.now(),
  };
  try {
    await keepFeedbackRecord(core.store, id, record);
    return feedbackButtons(id);
  } catch (error) {
    core.storeHealth.failed(error, where.log);
    return [];
  }
}

/**
 * Handles a press of `feedback:<id>:<up|down|reason>` (`ctx.args`): a vote is cast or changed
 * for the presser and acknowledged to them alone (a 👎's with **Add a reason**); `reason`
 * opens the reason's form for a presser whose vote on the answer is a 👎.
 * @throws InputError for an answer whose record is gone, a reason without a 👎, an unknown
 *   press; the store's error.
 */
export async function pressFeedback(ctx: ComponentContext, core: Core): Promise<void> {
  const [id = '', action] = ctx.args;
  if (action === 'reason') return openReason(ctx, core, id);
  if (action !== 'up' && action !== 'down') throw new InputError('answers.feedback.unknown');
  const record = await readFeedbackRecord(core.store, id);
  if (!record || record.platform !== ctx.platform) throw new InputError('answers.feedback.expired');
  const { previous } = await castVote(core.store, id, record, ctx.user.id, action);
  // In the voter's index: `/forget me` erases it (state/user-index.ts); if that fails, the rest stands.
  const workspace = workspaceOf(record.channelKey);
  if (workspace)
    await core.userIndex
      .noteRecord(workspace, ctx.user.id, storeKeys.feedbackVote(id, ctx.user.id), Date.now() + FEEDBACK_TTL_MS)
      .catch((error: unknown) => core.storeHealth.failed(error, ctx.log));
  ctx.log.info({ feedback: id, vote: action, previous, model: record.model, kind: record.kind }, 'feedback noted');
  await ctx.sendEphemeral(acknowledgement(id, action, previous, await core.languages.forUser(ctx)));
}

/** A vote's acknowledgement in the voter's `words` (ephemeral): a 👎's offers a reason. */
function acknowledgement(id: string, vote: Vote, previous: Vote | undefined, words: Words): OutgoingMessage {
  const noted = voteNoted(vote, previous);
  if (vote === 'up') return { content: words.say(noted) };
  return {
    content: words.t('answers.feedback.ask_reason', { noted }),
    buttons: [{ id: buttonId(FEEDBACK_BUTTON, id, 'reason'), label: words.t('answers.feedback.add_reason') }],
  };
}

/** The form asking a 👎's reason about the answer `id`, in the presser's `words` (a form is theirs alone). */
export function reasonForm(id: string, words: Words = english): TextForm {
  return {
    id: buttonId(FEEDBACK_BUTTON, id, 'reason'),
    title: words.t('answers.feedback.form_title'),
    label: words.t('answers.feedback.form_label'),
    placeholder: words.t('answers.feedback.form_placeholder'),
    submit: words.t('answers.feedback.form_submit'),
    maxLength: REASON_MAX_CHARS,
  };
}

/** Opens the reason's form for a presser whose vote on `id` is a 👎. @throws InputError otherwise. */
async function openReason(ctx: ComponentContext, core: Core, id: string): Promise<void> {
  const vote = await readVote(core.store, id, ctx.user.id);
  if (vote?.vote !== 'down') throw new InputError('answers.feedback.reason_needs_down');
  if (!ctx.openForm) throw new InputError('answers.feedback.no_form_here');
  try {
    await ctx.openForm(reasonForm(id, await core.languages.forUser(ctx)));
  } catch (error) {
    ctx.log.warn({ err: error }, 'could not open the reason form');
    throw new InputError('answers.feedback.form_failed');
  }
}

/** A submitted reason's form, as an adapter reads it. */
export interface ReasonSubmit {
  /** The form's id (TextForm.id: `feedback:<id>:reason`). */
  formId: string;
  /** Who submitted it. */
  userId: string;
  /** What they typed. */
  text: string;
  /** Tells the submitter alone. Never throws. */
  sendEphemeral(message: string): Promise<void>;
  /** The submitter's language tags (i18n/languages.ts), in which the thanks is said; absent: none known. */
  locale?: InvocationLocale | undefined;
}

/**
 * Keeps a submitted reason (trimmed, at most {@link REASON_MAX_CHARS} characters) with the
 * submitter's 👎 on the answer, and thanks them in their words.
 * @throws InputError for an unknown form, an empty reason, or no 👎 of theirs on the answer;
 *   the store's error.
 */
export async function submitReason(submit: ReasonSubmit, core: Core): Promise<void> {
  const { command, args } = parseButtonId(submit.formId);
  const [id = '', part] = args;
  if (command !== FEEDBACK_BUTTON || part !== 'reason' || !id) throw new InputError('answers.feedback.unknown');
  const reason = submit.text.trim().slice(0, REASON_MAX_CHARS);
  if (!reason) throw new InputError('answers.feedback.reason_empty');
  if (!(await keepReason(core.store, id, submit.userId, reason)))
    throw new InputError('answers.feedback.reason_needs_down');
  await submit.sendEphemeral((await core.languages.forUser(submit)).t('answers.feedback.reason_noted'));
}
