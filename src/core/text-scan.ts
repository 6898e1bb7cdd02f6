/**
 * Small building blocks of linear-time text scanners, for parsing what users and the model send
 * (answers, prompts, option strings) without regular expressions that backtrack.
 */

/**
 * Whether a UTF-16 code unit is whitespace as JavaScript's `\s` and `String.prototype.trim`
 * count it (ECMAScript WhiteSpace and LineTerminator): tab, LF, VT, FF, CR, space, NBSP, the
 * Unicode space separators, LS, PS and the BOM.
 */
export function isWhitespace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * The first index at or after a position whose code unit matches, remembered between calls: over
 * calls with non-decreasing positions the whole text is read at most once, where a loop calling
 * `indexOf` for a character that never comes reads the rest of the text each time.
 */
export class NextIndex {
  /** The last search covered [from, found): no match there; `found` is the match (-1: none up to the end). */
  private from = -1;
  private found = -1;
  private readonly char: string | undefined;
  private readonly matches: ((code: number) => boolean) | undefined;

  /** @param target one UTF-16 code unit (searched with indexOf) or a predicate on code units. */
  constructor(
    private readonly text: string,
    target: string | ((code: number) => boolean),
  ) {
    if (typeof target === 'string') this.char = target;
    else this.matches = target;
  }

  /** The first index `i >= from` whose code unit matches, or -1 when none does. */
  at(from: number): number {
    if (this.from >= 0 && from >= this.from && (this.found < 0 || from <= this.found)) return this.found;
    if (this.from >= 0 && from < this.from && (this.found < 0 || this.found >= this.from)) {
      // Only [from, this.from) is unread: nothing there means the remembered answer holds.
      const hit = this.search(from, this.from);
      this.from = from;
      if (hit >= 0) this.found = hit;
      return this.found;
    }
    this.from = from;
    this.found = this.search(from, this.text.length);
    return this.found;
  }

  /** The first match in [from, end), or -1, reading no further than `end`. */
  private search(from: number, end: number): number {
    if (this.char !== undefined) {
      if (end === this.text.length) return this.text.indexOf(this.char, from);
      const code = this.char.charCodeAt(0);
      for (let i = Math.max(0, from); i < end; i++) if (this.text.charCodeAt(i) === code) return i;
      return -1;
    }
    for (let i = Math.max(0, from); i < end; i++) if (this.matches!(this.text.charCodeAt(i))) return i;
    return -1;
  }
}

/**
 * Replaces each tag of `text`, with the whitespace around it, by one space, left to right:
 * what replacing every match of the expression `\s*TAG\s*` by ' ' does, in one linear pass (that
 * expression reads a long run of whitespace again from each of its characters: quadratic).
 * @param prefix what every tag starts with, taken literally (e.g. `<@U123`).
 * @param endOf given where `prefix` occurs, where the tag there ends (the index after it), or
 *   -1 when there is no tag there; it must read no further than the tag (or remember its searches).
 */
export function replaceSpacedTags(text: string, prefix: string, endOf: (at: number) => number): string {
  const parts: string[] = [];
  let kept = 0;
  for (let at = text.indexOf(prefix); at >= 0; ) {
    let end = endOf(at);
    if (end < 0) {
      at = text.indexOf(prefix, at + 1);
      continue;
    }
    let start = at;
    while (start > kept && isWhitespace(text.charCodeAt(start - 1))) start--;
    while (end < text.length && isWhitespace(text.charCodeAt(end))) end++;
    parts.push(text.slice(kept, start), ' ');
    kept = end;
    at = text.indexOf(prefix, end);
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(kept));
  return parts.join('');
}

/**
 * The first line of `text` with its whitespace runs collapsed to single spaces and no space at
 * either end (what a thread's name or title shows of a question). Linear in the text's length.
 */
export function firstLineOf(text: string): string {
  return (text.trim().split('\n', 1)[0] ?? '').split(/\s+/).filter(Boolean).join(' ');
}
