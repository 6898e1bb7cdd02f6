/**
 * The public messages of one Slack /imagine, in whichever order they came. A quick generation
 * posts the image (shared by `files.completeUploadExternal`, with its caption) and then a line
 * with its buttons; one past 3 s first posts a progress line ("🎨 Generating… 3 s",
 * imagine-progress.ts), which then becomes the buttons line, above the image. A test that reads
 * them by position fails on a busy machine only.
 */
import { expect } from 'vitest';

/** The buttons line's text: after the image (posted at once), or the progress line it became (before the image). */
export const IMAGINE_BUTTONS_LINES = [
  '🎨 Reroll, upscale or vary the image above:',
  '🎨 Done: the image is below. Reroll, upscale or vary it:',
] as const;

/**
 * Splits the two messages of one Slack /imagine into the image and its buttons line; fails
 * unless they are exactly those two.
 */
export function slackImaginePosts<M extends { via?: string; text: string }>(
  messages: readonly M[],
): { shared: M; buttonsLine: M } {
  expect(messages).toHaveLength(2);
  const shared = messages.find((m) => m.via === 'files.completeUploadExternal');
  const buttonsLine = messages.find((m) => m !== shared);
  expect(shared).toBeDefined();
  expect(IMAGINE_BUTTONS_LINES).toContain(buttonsLine!.text);
  return { shared: shared!, buttonsLine: buttonsLine! };
}
