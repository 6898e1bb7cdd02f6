/**
 * The mention feature: a user mentions the bot (or writes to it in a DM), with or without
 * images and files; the answer streams in as a reply that has looked at the images (§4.1 image
 * input) and read the files, and joins the conversation's history, exactly like /chat. Platform adapters decide when a
 * message is addressed to the bot and turn it into a {@link MentionRequest}.
 */

import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { collectImages, looksLikeImage, skippedLine } from '../media/attachments.ts';
import { collectFiles, cutLine, filesCharBudget } from '../media/files.ts';
import type { Attachment, CommandContext } from '../platform.ts';
import { chat } from './chat.ts';
import { startDeferral } from './deferral.ts';
import { subjectOf } from './usage.ts';

/** A message addressed to the bot, as an adapter hands it over. */
export interface MentionRequest {
  /** The message text, the bot's own mention removed and other mentions shown as names. */
  text: string;
  /** The message's own files first, then those of the message it replies to (one level). */
  attachments: readonly Attachment[];
  /** Sentences from the adapter to show under the answer (e.g. a replied-to message it could not read). */
  notices?: readonly string[];
}

/** The instruction sent when a message holds images and no text. */
export const DEFAULT_IMAGE_PROMPT = 'Describe this image.';
/** The same for several images. */
export const DEFAULT_IMAGES_PROMPT = 'Describe these images.';
/** The instruction sent when a message holds files (text, PDFs) and no text. */
export const DEFAULT_FILES_PROMPT = 'Summarize the attached files.';

/** The instruction sent without the user's text, by what was attached; '' when nothing usable was. */
function defaultPrompt(images: number, files: number): string {
  if (files > 0) return DEFAULT_FILES_PROMPT;
  return images > 1 ? DEFAULT_IMAGES_PROMPT : images === 1 ? DEFAULT_IMAGE_PROMPT : '';
}

/**
 * Answers a mention or DM in `ctx`'s conversation: downloads and prepares the images (capped,
 * at most `core.inputImages.maxCount`) and reads the other files as context (text files and
 * PDFs: media/files.ts, each cut to `MAX_FILE_CHARS`, all within the history budget), then
 * chats with the vision model when there are images. Files not used, and files read in part,
 * are named in lines under the answer.
 * @throws InputError when there is neither text nor a usable file (the sentence says why);
 *   otherwise as {@link chat}.
 */
export async function answerMention(ctx: CommandContext, core: Core, request: MentionRequest): Promise<void> {
  // Under way while the files download; the answer's first text waits for it (chat's deferral).
  void startDeferral(ctx);
  const text = request.text.trim();
  const work = { images: core.images, key: subjectOf(ctx), signal: ctx.signal, log: ctx.log };
  const [images, files] = await Promise.all([
    collectImages(request.attachments.filter(looksLikeImage), core.inputImages, work),
    collectFiles(
      request.attachments.filter((a) => !looksLikeImage(a)),
      {
        ...core.limits.files,
        maxBytes: core.inputImages.maxBytes,
        maxTotalChars: filesCharBudget(core.limits.historyTokenBudget, text),
      },
      work,
    ),
  ]);
  const notes = [...(request.notices ?? []), ...new Set([...images.notices, ...files.notices])];
  for (const line of [skippedLine([...images.skipped, ...files.skipped]), cutLine(files.cut)])
    if (line) notes.push(line);
  const prompt = text || defaultPrompt(images.images.length, files.files.length);
  if (!prompt) {
    throw new InputError(
      notes.length ? notes.join('\n') : 'Ask me something after the mention, or attach a file for me to look at.',
    );
  }
  await chat(ctx, core, { prompt, images: images.images, files: files.files, notes });
}
