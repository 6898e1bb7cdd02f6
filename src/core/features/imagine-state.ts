/**
 * What an /imagine result keeps for its Reroll / Upscale / Vary buttons, under the button id in
 * the store for {@link IMAGINE_STATE_TTL_MS}: who asked, the job, and the images the buttons
 * need again — the posted image (Upscale, Vary) and the job's reference image (Reroll of an
 * image made from one). Each image is kept as a reference to where the platform has it
 * (keys.ts `postedImageRef`: Slack's file, Discord's message; on Discord a press also finds
 * the image of its own message), with its bytes only as a fallback, and only up to
 * IMAGINE_STATE_MAX_BYTES (by default none on Redis, whose data lives in memory): a state
 * is then a few hundred bytes and its prompt. imagine-post.ts writes it, imagine-buttons.ts
 * reads it.
 */

import { IMAGINE_STATE_MAX_BYTES_DEFAULT } from '../../config-env.ts';
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import type { Words } from '../i18n/words.ts';
import { randomHex } from '../ids.ts';
import { buttonId, storeKeys, workspaceOf } from '../keys.ts';
import { DownloadError } from '../media/download.ts';
import { AttachmentAccessError, type Button, type CommandContext, type ComponentContext } from '../platform.ts';
import type { AspectRatio, ImageStyle } from '../service/schemas.ts';
import { keepOwned } from '../state/owned.ts';

/**
 * What a generation needs, as kept for the follow-up buttons (no user files: a reference is a
 * data URL, which the state keeps as an image of its own: imagine-state.ts).
 */
export interface ImagineJob {
  prompt: string;
  aspectRatio: AspectRatio;
  style?: ImageStyle | undefined;
  /** Display name (`user_selected_model`); undefined: the server's choice. */
  model?: string | undefined;
  negativePrompt?: string | undefined;
  seed?: number | undefined;
  /** `reference_image`: a PNG data URL. */
  referenceDataUrl?: string | undefined;
  referenceImageUrl?: string | undefined;
  denoisingStrength?: number | undefined;
  enhance?: boolean | undefined;
  disableSafetyChecker?: boolean | undefined;
}

/** How long a result's buttons keep working, in ms (the store forgets the state after it). */
export const IMAGINE_STATE_TTL_MS = 30 * 24 * 3_600_000;

/** An image a result's buttons need again, as the store keeps it. */
export interface KeptImage {
  /** Where the platform has it (keys.ts `postedImageRef`); absent where a press finds it itself (Discord's pressed message). */
  ref?: string;
  /** Its bytes, base64: only when within IMAGINE_STATE_MAX_BYTES (used when the reference finds nothing). */
  data?: string;
}

/** What the store keeps under a result's button id (`imagine:<id>`). */
export interface ImagineState {
  requesterId: string;
  /** The job, without `referenceDataUrl` (see `reference`), except in states written before `reference` was. */
  job: ImagineJob;
  /** The job's `reference_image`, when it had one. */
  reference?: KeptImage;
  /** The posted image, for Upscale and Vary. */
  image: KeptImage;
  /** The model that made the image, when it was a fallback (FALLBACK_IMAGE_MODELS) and not the job's. */
  answeredBy?: string;
}

/** A state as older versions wrote it: the posted image's bytes as a base64 string. */
type StoredState = Omit<ImagineState, 'image'> & { image: KeptImage | string };

/** The largest image kept with a result, in bytes: IMAGINE_STATE_MAX_BYTES, else the store's default. */
function maxKeptBytes(core: Core): number {
  return core.limits.imagineStateMaxBytes ?? IMAGINE_STATE_MAX_BYTES_DEFAULT[core.store.kind];
}

/** An image as a state keeps it: its reference, and its bytes when they are within the limit (and there are any). */
export function keptImage(core: Core, ref: string | undefined, data: Buffer | undefined): KeptImage {
  const keepBytes = data !== undefined && data.length > 0 && data.length <= maxKeptBytes(core);
  return { ...(ref ? { ref } : {}), ...(keepBytes ? { data: data.toString('base64') } : {}) };
}

/**
 * Keeps a result's state in the store under a new id and returns its Reroll / Upscale / Vary
 * buttons, labelled in `words` (the place's: they are public); none when the store fails (the
 * buttons could not work: the image is posted without them).
 */
export async function keepButtonState(
  ctx: CommandContext,
  core: Core,
  state: ImagineState,
  words: Words,
): Promise<Button[]> {
  const id = randomHex(9);
  try {
    // Its workspace's marker beside it: an uninstall finds it (state/owned.ts).
    await keepOwned(
      core.store,
      workspaceOf(ctx.conversationId),
      storeKeys.imagineState(id),
      state,
      IMAGINE_STATE_TTL_MS,
    );
    // In its requester's index: `/forget me` erases it (state/user-index.ts); if that fails, the rest stands.
    const workspace = workspaceOf(ctx.conversationId);
    if (workspace)
      await core.userIndex
        .noteRecord(workspace, ctx.user.id, storeKeys.imagineState(id), Date.now() + IMAGINE_STATE_TTL_MS)
        .catch((error: unknown) => core.storeHealth.failed(error, ctx.log));
    return [
      { id: buttonId('imagine', 'reroll', id), label: words.t('answers.imagine.reroll') },
      { id: buttonId('imagine', 'upscale', id), label: words.t('answers.imagine.upscale') },
      { id: buttonId('imagine', 'vary', id), label: words.t('answers.imagine.vary') },
    ];
  } catch (error) {
    core.storeHealth.failed(error, ctx.log);
    return [];
  }
}

/**
 * The state kept under a button's id, older states read into the current shape.
 * @returns undefined when there is none (expired).
 * @throws the store's error.
 */
export async function readButtonState(core: Core, id: string): Promise<ImagineState | undefined> {
  const stored = (await core.store.keyv.get(storeKeys.imagineState(id))) as StoredState | undefined;
  if (!stored) return undefined;
  return { ...stored, image: typeof stored.image === 'string' ? { data: stored.image } : stored.image };
}

/** A kept image found again: its bytes, and the reference to keep for an image made from it. */
export interface FoundImage {
  data: Buffer;
  ref?: string | undefined;
}

/**
 * A kept image's bytes: downloaded again by its reference (without one, the image of the
 * pressed message, when `pressed`), else the bytes kept with it.
 * @param pressed whether the image is the pressed message's own (the posted image, not a job's reference).
 * @returns undefined when the image is gone and no bytes were kept.
 * @throws InputError when it could not be downloaded (and no bytes were kept); the platform's
 *   other errors.
 */
export async function findKeptImage(
  ctx: ComponentContext,
  core: Core,
  kept: KeptImage,
  pressed: boolean,
): Promise<FoundImage | undefined> {
  let ref = kept.ref;
  try {
    const posted = ref ? await ctx.postedImage?.(ref) : pressed ? await ctx.pressedImage?.() : undefined;
    ref = posted?.ref ?? ref;
    if (posted) {
      const data = await posted.file.fetch({ maxBytes: core.inputImages.maxBytes, signal: ctx.signal });
      return { data: Buffer.from(data), ref };
    }
  } catch (error) {
    if (!kept.data || ctx.signal.aborted) throw unusable(error);
    ctx.log.info({ err: error }, 'the posted image could not be read again: using the bytes kept with it');
  }
  return kept.data ? { data: Buffer.from(kept.data, 'base64'), ref } : undefined;
}

/** A failed download as the sentence for the presser; any other error as it is. */
function unusable(error: unknown): unknown {
  if (error instanceof AttachmentAccessError) return new InputError(error.sentence);
  if (error instanceof DownloadError)
    return new InputError('answers.imagine.image_unreadable', { reason: error.sentence });
  return error;
}
