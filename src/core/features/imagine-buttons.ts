/**
 * The buttons of an /imagine result (Reroll, Upscale, Vary): each press is checked when it runs,
 * against the requester the bot stored with the image and the configuration of the moment, and
 * generates a new image in the conversation from the state kept under the button's id.
 */

import { randomInt } from 'node:crypto';
import type { Core } from '../core.ts';
import { ForbiddenError, InputError } from '../errors.ts';
import { storeKeys } from '../keys.ts';
import { ImageInputError, type PreparedImage } from '../media/images.ts';
import type { CommandContext, ComponentContext } from '../platform.ts';
import { startDeferral } from './deferral.ts';
import { counted } from './imagine.ts';
import { generateAndPost, type ImagineJob, type ImagineState } from './imagine-post.ts';
import { MAX_SEED } from './options.ts';
import { admit, subjectOf } from './usage.ts';

/** The follow-ups of a result's buttons. */
export type ImagineAction = 'reroll' | 'upscale' | 'vary';

/**
 * Handles a press of a result's Reroll, Upscale or Vary button (`imagine:<action>:<id>`):
 * reads the state kept under the id, checks who may press (`IMAGINE_BUTTONS`: the requester
 * the bot stored and admins by default, or everyone, as configured now), and posts a new image
 * in the conversation. `disable_safety_checker` is sent again only when the presser may set it
 * now (an admin, with ALLOW_DISABLE_SAFETY_CHECKER on); otherwise the new image says the
 * checker was on.
 * @throws InputError when the state is gone (expired) or the presser may not; as {@link imagine}.
 */
export async function imagineFollowUp(ctx: ComponentContext, core: Core): Promise<void> {
  const [action, id = ''] = ctx.args as [ImagineAction | undefined, string?];
  if (action !== 'reroll' && action !== 'upscale' && action !== 'vary')
    throw new InputError('This button is not one the bot knows.');
  const state = (await core.store.keyv.get(storeKeys.imagineState(id))) as ImagineState | undefined;
  if (!state) throw new InputError("This image's buttons have expired. Run /imagine again.");
  if (core.limits.imagineButtons === 'requester' && state.requesterId !== ctx.user.id && !(await ctx.user.isAdmin())) {
    throw new ForbiddenError('Only the person who asked for this image, or an admin, can use its buttons.');
  }
  const command: CommandContext = { ...ctx, isDirectMessage: false, options: {}, files: {}, reply: ctx.reply };
  // A privileged field is never replayed from stored state: only when the presser may set it now.
  const notes: string[] = [];
  const base: ImagineJob = { ...state.job };
  if (base.disableSafetyChecker && !(await maySetDisableSafetyChecker(ctx, core))) {
    base.disableSafetyChecker = undefined;
    notes.push('The safety checker is on for this image: only admins may turn it off, where the operator allows it.');
  }
  const giveBack = await admit(command, core, 'image');
  await counted(giveBack, async () => {
    // Under way while the reference is read and the image generated; awaited before it is posted.
    const deferral = startDeferral(command);
    const newSeed = randomInt(0, MAX_SEED);
    let job: ImagineJob;
    if (action === 'reroll') job = { ...base, seed: newSeed };
    else {
      let reference: PreparedImage;
      try {
        reference = await core.images.prepareReference(
          Buffer.from(state.image, 'base64'),
          'the image',
          core.inputImages,
          { key: subjectOf(ctx), signal: ctx.signal },
        );
      } catch (error) {
        if (error instanceof ImageInputError) throw new InputError(`The image could not be used: ${error.message}`);
        throw error;
      }
      job =
        action === 'upscale'
          ? {
              ...base,
              style: 'upscaled',
              referenceDataUrl: reference.url,
              referenceImageUrl: undefined,
              denoisingStrength: undefined,
            }
          : {
              ...base,
              seed: newSeed,
              referenceDataUrl: reference.url,
              referenceImageUrl: undefined,
              denoisingStrength: core.limits.varyDenoisingStrength,
            };
    }
    await generateAndPost(command, core, job, notes, deferral);
  });
}

/** Whether this user may send `disable_safety_checker` now: the operator allows it (ALLOW_DISABLE_SAFETY_CHECKER) and they are an admin. */
async function maySetDisableSafetyChecker(ctx: Pick<CommandContext, 'user'>, core: Core): Promise<boolean> {
  return core.limits.allowDisableSafetyChecker && (await ctx.user.isAdmin());
}
