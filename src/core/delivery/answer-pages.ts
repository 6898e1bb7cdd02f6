/**
 * The text of one streamed answer (StreamingReply) and the pages its messages show: made once
 * per state of the text (a write asks several times), continued from the last completed page as
 * the text grows (PageSplitter), made afresh when the channel's limits change. Where the
 * platform renders Markdown its own way (ReplyLimits `rendering`: Discord's tables), the pages
 * are cut from the rendered text, made afresh from the whole of it at each state once a delta
 * touched the rendering (a table changes as its rows come); `text` stays the model's Markdown.
 */
import { english } from '../i18n/words.ts';
import type { MarkdownRenderer, MarkdownRendering, ReplyLimits } from '../platform.ts';
import type { PageBreaks } from './page-breaks.ts';
import { PageSplitter, splitMessage } from './split.ts';

/**
 * What a message shows once the final text of its answer ends on an earlier message, in English
 * (an answer's own is in the place's words: AnswerPages' `replacedPage`).
 */
export const REPLACED_PAGE = english.t('answers.stream.replaced_page');

/** What the pages depend on besides the text: the answer finishing, the messages posted, whether the last carries controls. */
export interface PagesState {
  finishing: boolean;
  /** Messages posted so far (a finishing text on fewer pages marks the rest as replaced). */
  messages: number;
  /** Whether the last message carries controls (the Stop button) until the final write. */
  controls: boolean;
  /** Whether the last message carries final controls (Regenerate) in the final write. */
  finalControls: boolean;
}

/** The mark after a page that carries the controls (Stop) while the answer streams. */
export const CONTROLS_MARK = '\u0000';
/** The mark after the last page of a finished answer that carries its final controls (Regenerate). */
export const FINAL_CONTROLS_MARK = '\u0001';

/** Which controls a page's mark says it carries: the Stop button's (`controls`), the final ones, or none. */
export function markOf(page: string): 'controls' | 'final' | undefined {
  if (page.endsWith(CONTROLS_MARK)) return 'controls';
  return page.endsWith(FINAL_CONTROLS_MARK) ? 'final' : undefined;
}

/** A page without its mark, and which controls the mark says it carries ({@link markOf}). */
export function unmarked(page: string): { content: string; controls: 'controls' | 'final' | undefined } {
  const controls = markOf(page);
  return { content: controls ? page.slice(0, -1) : page, controls };
}

/**
 * Whether a message showing `shown` already shows the text of `page` (its final page) and only
 * its controls (the Stop button, to be removed or replaced by the final controls) are left to
 * write: a cosmetic write (Slack: a chat.update that only changes the blocks).
 */
export function onlyControlsDiffer(page: string | undefined, shown: string | undefined): boolean {
  return (
    page !== undefined && shown !== undefined && shown !== page && unmarked(shown).content === unmarked(page).content
  );
}

/**
 * The answer's text as messages show it (StreamingReply `shownAnswer`): the pages they show
 * (`shown`, marked), from the first, as long as each shows answer text (`showsText`: not a status
 * line), without their marks and without `replaced` (the answer's {@link AnswerPages.replacedPage}),
 * joined by line breaks.
 */
export function shownText(shown: readonly string[], showsText: readonly boolean[], replaced = REPLACED_PAGE): string {
  const texts: string[] = [];
  for (let i = 0; i < shown.length && showsText[i]; i++) {
    const { content } = unmarked(shown[i]!);
    if (content !== replaced) texts.push(content);
  }
  return texts.join('\n');
}

/** An answer's text, its status line, and their pages. */
export class AnswerPages {
  /** The text received so far (or the final text, once finalized): the model's Markdown. */
  text = '';
  /** Whether `text` holds anything but whitespace (kept up to date per delta, never by re-reading `text`). */
  hasText = false;
  /** Shown in the first message while there is no text; '' for none. */
  status = '';
  /** The pages of `text`, kept across appends: made at the first text (again if the channel's limits change). */
  private splitter:
    | {
        pages: PageSplitter;
        maxChars: number;
        measure: ((text: string) => number) | undefined;
        breaks: PageBreaks | undefined;
      }
    | undefined;
  /** The last result of {@link pages}, and what it was computed from. */
  private view: PagesView | undefined;
  /** The answer's renderer, once a delta touched the rendering: the pages are then cut from its `render(text)`. */
  private renderer: MarkdownRenderer | undefined;
  /** The rendered text the splitter holds (once there is a {@link renderer}); undefined: the splitter holds `text`. */
  private split: string | undefined;

  /**
   * @param rendering the platform's (ReplyLimits `rendering`), for the answer's whole life.
   * @param replacedPage what a message past the final text shows (in the place's words).
   */
  constructor(
    private readonly rendering?: MarkdownRendering,
    readonly replacedPage: string = REPLACED_PAGE,
  ) {}

  /** Adds a delta: O(delta) until the pages are asked for. */
  append(delta: string): void {
    this.text += delta;
    if (!this.renderer && this.rendering?.touches(delta)) this.renderer = this.rendering.renderer();
    if (!this.renderer) this.splitter?.pages.append(delta);
    if (!this.hasText && !isBlank(delta)) this.hasText = true;
  }

  /**
   * Makes `finalText` the text (when given; the usual one is the answer with notes after it,
   * whose pages so far stay), or `emptyText` when the text is blank.
   */
  finalize(finalText: string | undefined, emptyText: string): void {
    if (finalText !== undefined && finalText !== this.text) {
      if (!this.renderer && this.rendering?.touches(finalText)) this.renderer = this.rendering.renderer();
      // Rendered pages are cut afresh from the whole text when next asked for (paginate).
      if (!this.renderer) {
        if (this.hasText && finalText.startsWith(this.text))
          this.splitter?.pages.append(finalText.slice(this.text.length));
        else this.splitter?.pages.reset(finalText);
      }
      this.text = finalText;
    }
    if (isBlank(this.text)) {
      this.text = emptyText;
      this.splitter?.pages.reset(emptyText);
    }
    this.hasText = true;
  }

  /**
   * What each message should show: its page, marked ({@link unmarked}) when it carries the
   * controls (while streaming) or the final controls (the last page, once finishing).
   * Computed once per state; not to be modified.
   * @param limits the channel's: characters a message (`maxChars`, by `measure`), and where
   *   pages end (`pageBreaks`).
   */
  pages(limits: Pick<ReplyLimits, 'maxChars' | 'measure' | 'pageBreaks'>, state: PagesState): readonly string[] {
    const { maxChars, measure, pageBreaks } = limits;
    const view = this.view;
    if (
      view &&
      view.text === this.text &&
      view.status === this.status &&
      view.finishing === state.finishing &&
      view.messages === state.messages &&
      view.controls === state.controls &&
      view.finalControls === state.finalControls &&
      view.maxChars === maxChars &&
      view.measure === measure &&
      view.breaks === pageBreaks
    )
      return view.pages;
    const pages = this.paginate(maxChars, measure, pageBreaks, state);
    this.view = new PagesView(this.text, this.status, state, maxChars, measure, pageBreaks, pages);
    return pages;
  }

  private paginate(
    maxChars: number,
    measure: ((text: string) => number) | undefined,
    breaks: PageBreaks | undefined,
    state: PagesState,
  ): string[] {
    let pages: string[];
    if (this.hasText) {
      const shown = this.renderer?.render(this.text);
      let splitter = this.splitter;
      if (splitter?.maxChars !== maxChars || splitter.measure !== measure || splitter.breaks !== breaks) {
        splitter = { pages: new PageSplitter(maxChars, measure, breaks), maxChars, measure, breaks };
        splitter.pages.reset(shown ?? this.text);
        this.splitter = splitter;
        this.split = shown;
      } else if (shown !== undefined && shown !== this.split) {
        // A rendered text that only grew (no table changed) keeps its completed pages.
        if (this.split !== undefined && shown.startsWith(this.split))
          splitter.pages.append(shown.slice(this.split.length));
        else splitter.pages.reset(shown);
        this.split = shown;
      }
      // A page of whitespace alone (an answer of blank lines) is no message: a platform refuses it
      // as empty, and the bot would wait forever to show it. Leaving it out hides nothing, and
      // keeps the pages prefix-stable (a completed blank page stays blank).
      pages = splitter.pages.pages().filter((page) => !isBlank(page));
      if (!pages.length) return [];
    } else {
      if (this.status.trim() === '') return [];
      pages = splitMessage(this.status, maxChars, measure);
    }
    const last = pages.length - 1;
    if (state.controls && !state.finishing) pages[last] += CONTROLS_MARK;
    else if (state.finalControls && state.finishing && this.hasText) pages[last] += FINAL_CONTROLS_MARK;
    // A final text on fewer pages than the messages posted (a JSON answer replaced by its summary,
    // a regenerated answer written over a longer one): the messages past it say so instead of
    // keeping text that is no longer the answer; the final controls stay on the text's last page.
    if (state.finishing && this.hasText)
      for (let i = pages.length; i < state.messages; i++) pages.push(this.replacedPage);
    return pages;
  }
}

/**
 * What {@link AnswerPages.pages} last computed, and from what. A class (one shape for every
 * answer's) rather than a spread of the state, which gave each answer's view a hidden class of
 * its own.
 */
class PagesView {
  readonly finishing: boolean;
  readonly messages: number;
  readonly controls: boolean;
  readonly finalControls: boolean;

  constructor(
    readonly text: string,
    readonly status: string,
    state: PagesState,
    readonly maxChars: number,
    readonly measure: ((text: string) => number) | undefined,
    readonly breaks: PageBreaks | undefined,
    readonly pages: string[],
  ) {
    this.finishing = state.finishing;
    this.messages = state.messages;
    this.controls = state.controls;
    this.finalControls = state.finalControls;
  }
}

/** Whether `text` is empty or only whitespace (reads up to its first other character). */
function isBlank(text: string): boolean {
  return !/\S/.test(text);
}
