/**
 * Whether the bot may post publicly for the person who invoked it: only where they may post
 * themselves (InvocationUser.canPost; platforms/discord/members.ts says what Discord counts).
 * Checked by what posts for a user beyond a command's own reply: a message action's answer
 * (message-action.ts) and the presses whose result is a public message (imagine's Reroll,
 * Upscale and Vary; Regenerate), when they run.
 */
import { ForbiddenError } from './errors.ts';
import { type Sentence, sentence } from './i18n/words.ts';
import type { InvocationUser } from './platform.ts';

/** Said, to the user alone (in their language), when the bot would post for someone who may not post there. */
export const MAY_NOT_POST_HERE: Sentence = sentence('errors.may_not_post_here');

/**
 * @throws ForbiddenError ({@link MAY_NOT_POST_HERE}) when the user may not post in the
 *   conversation; nothing where the platform does not say (no `canPost`).
 */
export async function ensureMayPost(user: InvocationUser): Promise<void> {
  if (user.canPost && !(await user.canPost())) throw new ForbiddenError(MAY_NOT_POST_HERE);
}
