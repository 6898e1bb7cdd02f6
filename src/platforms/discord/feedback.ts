/**
 * The forms of button presses on Discord (ComponentContext.openForm: a 👎's **Add a reason**,
 * core/features/feedback.ts) as modals, and their submits. The modal answers the press as its
 * first response (callback 9, through the press's InteractionResponder `showModal`, within
 * Discord's 3 s); its `custom_id` is the form's id (keys.ts `buttonId`: `feedback:<id>:reason`),
 * by which the adapter routes its submit here. The submit is answered to the user alone
 * (an ephemeral reply, or after a deferral an ephemeral follow-up: the responder's).
 */

import type { APIModalInteractionResponseCallbackData, ModalSubmitInteraction } from 'discord.js';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { submitReason } from '../../core/features/feedback.ts';
import { conversationKey } from '../../core/keys.ts';
import type { TextForm } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { interactionBudget } from './budget.ts';
import { interactionLocale } from './locale.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { InteractionResponder } from './responder.ts';
import { oneFieldModal } from './rest.ts';

/** The `custom_id` of a form's one text input. */
export const FORM_INPUT_ID = 'text';

/** A one-field form as a modal (a Label holding a paragraph TextInput; required, up to the form's length). */
export function formModal(form: TextForm): APIModalInteractionResponseCallbackData {
  return oneFieldModal(form, { modal: form.id, input: FORM_INPUT_ID });
}

/**
 * Handles the submit of a feedback reason's modal (`feedback:<id>:reason`): keeps the reason
 * with the submitter's 👎 (features/feedback.ts `submitReason`) as an invocation
 * (`feedback:reason`), and tells them alone.
 */
export async function handleFeedbackSubmit(
  interaction: ModalSubmitInteraction,
  deps: { core: Core; log: Logger; rateLimits?: DiscordRateLimits },
): Promise<void> {
  const ref = newReference();
  const log = deps.log.child({ platform: 'discord', ref, interaction: interaction.id, command: 'feedback:reason' });
  const responder = new InteractionResponder(interaction, log, 'ephemeral', interactionBudget(interaction, deps));
  try {
    // A submit without the input (another version's form) is an empty reason: refused in a sentence.
    const text = interaction.fields.fields.has(FORM_INPUT_ID)
      ? interaction.fields.getTextInputValue(FORM_INPUT_ID)
      : '';
    const sendEphemeral = (message: string) => responder.sendEphemeral(message);
    const channel = interaction.channelId ?? '';
    const conversationId = conversationKey({ platform: 'discord', guild: interaction.guildId ?? undefined, channel });
    const locale = interactionLocale(interaction);
    const submit = { formId: interaction.customId, userId: interaction.user.id, text, sendEphemeral, locale };
    await runInvocation(
      'feedback:reason',
      {
        platform: 'discord',
        conversationId,
        locale,
        log,
        ref,
        reply: { sendEphemeral },
      },
      deps.core,
      () => submitReason(submit, deps.core),
    );
  } finally {
    responder.dispose();
  }
}
