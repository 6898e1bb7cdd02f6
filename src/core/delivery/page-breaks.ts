/**
 * The seam through which a platform chooses where an answer's pages end (ReplyLimits.pageBreaks,
 * used by the splitter: split.ts). Slack renders each message's Markdown on its own, so a cut
 * inside a table or a bold span would leave the rest raw; its choice is Markdown-aware
 * (core/markdown/page-breaks.ts).
 */

/** Where a page ends: its length (`cut`), the characters dropped after it (`skip`: a line break), and what starts the next page. */
export interface PageBreak {
  cut: number;
  skip: number;
  /**
   * Lines the next page starts with, so that a construct cut here goes on there as itself (a
   * table's header and delimiter rows); none when absent. Not carried when it would take more
   * than half a page.
   */
  reopen?: string;
}

/**
 * A platform's choice of where pages end (ReplyLimits.pageBreaks): given the text a page is cut
 * from, it names the cut, or leaves it to the splitter's own (a line break in the second half of
 * the page, code fences closed and reopened). Must depend only on `head`, so that pages stay
 * prefix-stable; its time must be bounded by `head`'s length.
 */
export interface PageBreaks {
  /**
   * @param head the start of what is left to split (the next page's reopened lines first); its
   *   last line may be cut short.
   * @param window the longest page that fits, in code units of `head`.
   * @param minCut the shortest page: the cut must be greater (the reopened lines alone make no page).
   * @returns where to cut, `cut` in (minCut, window]; undefined for the splitter's own choice.
   */
  choose(head: string, window: number, minCut: number): PageBreak | undefined;
}

/**
 * The platform's choice for a page cut from `head` ({@link PageBreaks.choose}), when it is one
 * the splitter may take: `cut` in (minCut, window]; undefined otherwise.
 */
export function platformBreak(
  breaks: PageBreaks | undefined,
  head: string,
  window: number,
  minCut: number,
): PageBreak | undefined {
  const chosen = breaks?.choose(head, window, minCut);
  return chosen && chosen.cut > minCut && chosen.cut <= window ? chosen : undefined;
}

/** A choice's `reopen` lines as the splitter carries them (no closing line), when they take at most half a page. */
export function carriedLines(
  reopen: string,
  measure: (text: string) => number,
  maxChars: number,
): { closing: string; reopen: string } | undefined {
  return reopen !== '' && measure(reopen) <= maxChars / 2 ? { closing: '', reopen } : undefined;
}
