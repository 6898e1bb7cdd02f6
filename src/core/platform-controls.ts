/**
 * Controls the core asks a platform to show, part of the seam (platform.ts): buttons under a
 * message (feedback buttons among them), and a one-field form a button press may open.
 */

/**
 * A button under a message. `id` is `<command>:<args…>` (≤ 100 characters, Discord's
 * `custom_id` limit): a press is handed to that command's `onComponent` with the args.
 */
export interface Button {
  id: string;
  /** At most 80 characters. */
  label: string;
  style?: 'primary' | 'secondary' | 'danger';
  disabled?: boolean;
  /**
   * A 👍 or 👎 of an answer's feedback (features/feedback.ts). Discord shows it as any button
   * (`id` pressed); Slack shows a 👍 and a 👎 together as one `feedback_buttons` element
   * (Block Kit, in a `context_actions` block) whose `action_id` is `actionId`, each of its two
   * buttons with its `value`: a press comes back as `actionId`'s args followed by `value`,
   * which is `id` again.
   */
  feedback?: { positive: boolean; actionId: string; value: string };
}

/**
 * A form with one text field, opened by a button press (ComponentContext.openForm; Discord: a
 * modal; Slack: a modal opened with views.open). Sizes within both platforms' limits
 * (docs/platform-limits.md, "Modals"): a title of at most 24 characters, a label of at most 45,
 * a placeholder of at most 100, a submit label of at most 24, an answer of 1–3,000 characters.
 */
export interface TextForm {
  /** What the submit is routed by: a keys.ts `buttonId` (`<command>:<args…>`), as a button's. */
  id: string;
  title: string;
  label: string;
  placeholder: string;
  /** The submit button's text (Slack; Discord's modals have their own). */
  submit: string;
  /** Longest answer, in characters (1–3,000). */
  maxLength: number;
}
