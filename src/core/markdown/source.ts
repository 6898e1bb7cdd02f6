/**
 * Where markdown-it's tokens are in the text: a block token's `map` names its source lines
 * ([first, end), counted from 0), and these helpers turn them into offsets, so that a renderer
 * can pass a block's own text on (Slack's `markdown` block) or cut between blocks. Offsets hold
 * for text markdown-it reads as it is: without `\r` (it reads `\r\n` and `\r` as one line break
 * and would count lines differently) and without NUL; {@link normalizeSource} makes text so.
 */

/**
 * `text` as markdown-it reads it (its own normalization): `\r\n` and `\r` as `\n`, NUL as U+FFFD.
 * Linear; returns `text` itself when it holds neither.
 */
export function normalizeSource(text: string): string {
  if (!text.includes('\r') && !text.includes('\0')) return text;
  return text.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD');
}

/** The offset where each line of `text` starts (line `n` at index `n`). Linear in the length of `text`. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

/** The offset where the lines before `line` end: the `\n` ending line `line - 1` (the text's end past it). */
export function linesEnd(starts: readonly number[], line: number, text: string): number {
  return line < starts.length ? starts[line]! - 1 : text.length;
}
