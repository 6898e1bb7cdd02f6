/**
 * The forms of button presses on Slack (ComponentContext.openForm: a 👎's **Add a reason**,
 * core/features/feedback.ts) as modals, opened with `views.open` and the press's `trigger_id`
 * (Slack honours it once, for 3 s: the press's first Web API call), and their
 * `view_submission`s. Every such modal has the callback id {@link FORM_CALLBACK_ID}; its
 * `private_metadata` carries the form's id (`feedback:<id>:reason`) and the press's channel.
 *
 * A submission is answered in its ack, within Slack's 3 s: the reason is kept first (within
 * {@link SUBMIT_DEADLINE_MS}), then the modal shows the thanks (`response_action: 'update'`), or
 * the refusal stays under its input (`response_action: 'errors'`); nothing is posted anywhere.
 */

import type { App } from '@slack/bolt';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { submitReason } from '../../core/features/feedback.ts';
import { english, type Words } from '../../core/i18n/words.ts';
import { conversationKey } from '../../core/keys.ts';
import type { TextForm } from '../../core/platform.ts';
import type { RunningCommands } from '../../core/running.ts';
import { type Logger, newReference } from '../../log.ts';
import { isConversationId, oneFieldModal, readMetadata } from './blocks.ts';
import { knownRefusalWhileStopping } from './stopping.ts';
import type { SlackDirectory } from './users.ts';

/** The callback id of every button press's form. */
export const FORM_CALLBACK_ID = 'button_form';

/** The `block_id` and `action_id` of a form's one input. */
export const FORM_INPUT_ID = 'text';

/** Longest wait for the reason to be kept before the ack (Slack waits 3 s for it), in ms. */
const SUBMIT_DEADLINE_MS = 2_000;

/**
 * A form as a modal (Slack's view object): one multiline input, required, up to the form's length;
 * its Cancel in `words` (the user's: the form's own words are the core's, in the same language).
 */
export function formView(form: TextForm, where: { channel?: string | undefined }, words: Words = english) {
  const metadata = JSON.stringify({ f: form.id, ...(where.channel ? { c: where.channel } : {}) });
  return oneFieldModal(form, { callback: FORM_CALLBACK_ID, input: FORM_INPUT_ID, metadata }, words);
}

/** Reads a form's `private_metadata` back (checked as any input): the form's id and the channel. */
function parseMetadata(text: unknown): { formId: string; channel: string | undefined } {
  const { f, c } = readMetadata(text);
  return { formId: typeof f === 'string' && f.length <= 100 ? f : '', channel: isConversationId(c) ? c : undefined };
}

/** The modal that replaces a submitted form: the sentence, and Close (in the user's `words`). */
function thanksView(text: string, words: Words) {
  return {
    type: 'modal' as const,
    title: { type: 'plain_text' as const, text: words.t('slack.feedback.thanks_title') },
    close: { type: 'plain_text' as const, text: words.t('slack.feedback.close') },
    blocks: [{ type: 'section', text: { type: 'plain_text' as const, text: text.slice(0, 3000) } }],
  };
}

/** Rejects when `work` has not settled within `ms` (it goes on; its result is then not awaited). */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Registers the `view_submission` listener of the buttons' forms: keeps a feedback reason
 * (features/feedback.ts `submitReason`, an invocation `feedback:reason`) and acks with the
 * thanks, or with the refusal under the input (see the file's comment).
 */
export function registerButtonForms(
  app: App,
  deps: { core: Core; log: Logger; running: RunningCommands; directory: SlackDirectory },
): void {
  app.view({ callback_id: FORM_CALLBACK_ID, type: 'view_submission' }, async ({ ack, view, body, client }) => {
    if (deps.running.draining) {
      const team = body.team?.id ?? body.user.team_id ?? 'unknown';
      const refusal = knownRefusalWhileStopping(deps, team, body.user.id);
      return ack({ response_action: 'errors', errors: { [FORM_INPUT_ID]: refusal } });
    }
    const { formId, channel } = parseMetadata(view.private_metadata);
    const text = view.state.values[FORM_INPUT_ID]?.[FORM_INPUT_ID]?.value ?? '';
    const team = body.team?.id ?? body.user.team_id ?? 'unknown';
    const ref = newReference();
    const log = deps.log.child({ platform: 'slack', ref, command: 'feedback:reason', user: body.user.id, channel });
    // The modal is the user's alone: its words are theirs.
    const locale = { user: deps.directory.locale(client, team, body.user.id) };
    let said = '';
    const sendEphemeral = async (message: string) => {
      said = message;
    };
    const submit = { formId, userId: body.user.id, text, sendEphemeral };
    const outcome = await runInvocation(
      'feedback:reason',
      {
        platform: 'slack',
        conversationId: conversationKey({ platform: 'slack', team, channel: channel ?? 'unknown' }),
        log,
        ref,
        locale,
        reply: { sendEphemeral },
      },
      deps.core,
      () => within(submitReason(submit, deps.core), SUBMIT_DEADLINE_MS),
    );
    await ack(
      outcome.ok
        ? { response_action: 'update', view: thanksView(said, await deps.core.languages.forUser({ locale })) }
        : { response_action: 'errors', errors: { [FORM_INPUT_ID]: said.slice(0, 300) } },
    );
  });
}
