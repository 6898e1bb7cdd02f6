/**
 * The buttons of an /imagine result (Reroll, Upscale, Vary): each press is checked when it runs,
 * against the requester the bot stored with the image and the configuration of the moment, and
 * generates a new image in the conversation from the state kept under the button's id
 * (imagine-state.ts). Upscale and Vary read the posted image again where the platform has it
 * (the pressed message, the posted file); Reroll needs no image, unless its job had a reference.
 */

import { randomInt } from 'node:crypto';
import type { Core } from '../core.ts';
import type { Note } from '../delivery/answer-stream.ts';
import { ForbiddenError, InputError } from '../errors.ts';
import { sentence } from '../i18n/words.ts';
import { ImageInputError } from '../media/images.ts';
import type { CommandContext, ComponentContext } from '../platform.ts';
import { ensureMayPost } from '../rights.ts';
import { startDeferral } from './deferral.ts';
import { counted } from './imagine.ts';
import { generateAndPost, type PostOptions } from './imagine-post.ts';
import type { ImagineJob } from './imagine-state.ts';
import { type FoundImage, findKeptImage, type ImagineState, keptImage, readButtonState } from './imagine-state.ts';
import { MAX_SEED } from './options.ts';
import { admit, subjectOf } from './usage.ts';

/** The follow-ups of a result's buttons. */
export type ImagineAction = 'reroll' | 'upscale' | 'vary';

/**
 * Handles a press of a result's Reroll, Upscale or Vary button (`imagine:<action>:<id>`):
 * reads the state kept under the id, checks who may press (`IMAGINE_BUTTONS`: the requester
 * the bot stored and admins by default, or everyone, as configured now; and only someone who may
 * post there: rights.ts), and posts a new image in the conversation. `disable_safety_checker` is sent again only when the presser may set it
 * now (an admin, with ALLOW_DISABLE_SAFETY_CHECKER on); otherwise the new image says the
 * checker was on.
 * @throws InputError when the state is gone (expired), the image it needs is gone, or the
 *   presser may not (ForbiddenError); as {@link imagine}.
 */
export async function imagineFollowUp(ctx: ComponentContext, core: Core): Promise<void> {
  const [action, id = ''] = ctx.args as [ImagineAction | undefined, string?];
  if (action !== 'reroll' && action !== 'upscale' && action !== 'vary')
    throw new InputError('answers.imagine.unknown_button');
  const state = await readButtonState(core, id);
  // Refusals are the presser's alone (the runner tells them in their words).
  if (!state) throw new InputError('answers.imagine.expired');
  if (core.limits.imagineButtons === 'requester' && state.requesterId !== ctx.user.id && !(await ctx.user.isAdmin())) {
    throw new ForbiddenError('answers.imagine.not_yours');
  }
  // The new image is a public message, posted for the presser: only where they may post.
  await ensureMayPost(ctx.user);
  const command: CommandContext = { ...ctx, isDirectMessage: false, options: {}, files: {}, reply: ctx.reply };
  // A privileged field is never replayed from stored state: only when the presser may set it now.
  const notes: Note[] = [];
  const base: ImagineJob = { ...state.job };
  if (base.disableSafetyChecker && !(await maySetDisableSafetyChecker(ctx, core))) {
    base.disableSafetyChecker = undefined;
    notes.push(sentence('answers.imagine.safety_on'));
  }
  const giveBack = await admit(command, core, 'image');
  await counted(giveBack, async () => {
    // Under way while the reference is read and the image generated; awaited before it is posted.
    const deferral = startDeferral(command);
    const { job, reference } = await followUpJob(ctx, core, action, state, base);
    await generateAndPost(command, core, job, { notes, deferral, reference });
  });
}

/**
 * The job of a press and how its state keeps the reference: Reroll, the result's own with a new
 * seed (its reference found again); Upscale and Vary, the posted image as the reference.
 * @throws InputError when the image needed is gone or unusable.
 */
async function followUpJob(
  ctx: ComponentContext,
  core: Core,
  action: ImagineAction,
  state: ImagineState,
  base: ImagineJob,
): Promise<{ job: ImagineJob; reference: PostOptions['reference'] }> {
  const seed = randomInt(0, MAX_SEED);
  if (action === 'reroll') {
    if (!state.reference) return { job: { ...base, seed }, reference: undefined };
    const found = await findKeptImage(ctx, core, state.reference, false);
    if (!found) throw new InputError('answers.imagine.reference_gone');
    const referenceDataUrl = await referenceUrl(ctx, core, found);
    return { job: { ...base, seed, referenceDataUrl }, reference: state.reference };
  }
  const found = await findKeptImage(ctx, core, state.image, true);
  if (!found) throw new InputError('answers.imagine.image_gone');
  const reference = keptImage(core, found.ref, found.data);
  const from = { referenceDataUrl: await referenceUrl(ctx, core, found), referenceImageUrl: undefined };
  const job: ImagineJob =
    action === 'upscale'
      ? { ...base, ...from, style: 'upscaled', denoisingStrength: undefined }
      : { ...base, ...from, seed, denoisingStrength: core.limits.varyDenoisingStrength };
  return { job, reference };
}

/** An image found again as a §4.3 reference (a PNG data URL, prepared in the image workers). @throws InputError when it is unusable. */
async function referenceUrl(ctx: ComponentContext, core: Core, found: FoundImage): Promise<string> {
  try {
    const work = { key: subjectOf(ctx), signal: ctx.signal };
    return (await core.images.prepareReference(found.data, 'the image', core.inputImages, work)).url;
  } catch (error) {
    if (error instanceof ImageInputError)
      throw new InputError('answers.imagine.image_unusable', { reason: error.message });
    throw error;
  }
}

/** Whether this user may send `disable_safety_checker` now: the operator allows it (ALLOW_DISABLE_SAFETY_CHECKER) and they are an admin. */
async function maySetDisableSafetyChecker(ctx: Pick<CommandContext, 'user'>, core: Core): Promise<boolean> {
  return core.limits.allowDisableSafetyChecker && (await ctx.user.isAdmin());
}
