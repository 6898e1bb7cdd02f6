/**
 * Post-processing of a finished answer: the inline image results of web search mode "images"
 * (§4.1 web search modes); JSON mode (§4.1 JSON mode rules 1–3) in json-answer.ts.
 *
 * Answers are the model's text, up to MAX_ANSWER_CHARS (1,000,000) characters and 8 million in
 * answer.md: every parser here runs in time linear in the answer's length (scans, and no regular
 * expression that can backtrack), so that no answer, however shaped, holds the event loop for
 * longer than its length takes to read.
 */
import { isWhitespace, NextIndex } from '../text-scan.ts';

/** An image found in an answer. */
export interface ImageLink {
  url: string;
  alt: string;
}

/** A Markdown image `![alt](url "title")` found in a text: its span [start, end), alt text and URL. */
interface MarkdownImage {
  start: number;
  end: number;
  alt: string;
  url: string;
}

/** `(` */
const OPEN_PAREN = 0x28;
/** `)` */
const CLOSE_PAREN = 0x29;
/** `"` */
const QUOTE = 0x22;

/**
 * The Markdown images of a text, left to right without overlaps: `![alt](http(s)://url)` or
 * `![alt](http(s)://url "title")`, where alt holds no `]`, the URL no whitespace or `)` and the
 * title no `"`: the matches of `/!\[([^\]]*)\]\((https?:\/\/[^\s)]+)(?:\s+"[^"]*")?\)/g`.
 * Linear: each "next `]`", "end of URL" and "next `"`" search resumes where the last one stopped
 * (the expression reads to the end of the text again from every "![" when no `]` follows).
 */
function markdownImages(text: string): MarkdownImage[] {
  const images: MarkdownImage[] = [];
  const bracket = new NextIndex(text, ']');
  const finders: LinkFinders = {
    urlEnd: new NextIndex(text, (c) => c === CLOSE_PAREN || isWhitespace(c)),
    nonSpace: new NextIndex(text, (c) => !isWhitespace(c)),
    quote: new NextIndex(text, '"'),
  };
  for (let start = text.indexOf('!['); start >= 0; ) {
    const close = bracket.at(start + 2);
    if (close < 0) break; // no `]` after this "![": none after the later ones either
    const link = linkAfter(text, close, finders);
    let next = start + 1;
    if (link) {
      images.push({ start, end: link.end, alt: text.slice(start + 2, close), url: link.url });
      next = link.end;
    }
    start = text.indexOf('![', next);
  }
  return images;
}

/** The resumable searches of {@link markdownImages} (one text each). */
interface LinkFinders {
  /** The end of a URL: `)` or whitespace. */
  urlEnd: NextIndex;
  nonSpace: NextIndex;
  quote: NextIndex;
}

/**
 * The `(http(s)://url)` or `(http(s)://url "title")` right after the `]` at `close`: where it
 * ends (past its `)`) and its URL; undefined when there is none.
 */
function linkAfter(text: string, close: number, finders: LinkFinders): { end: number; url: string } | undefined {
  if (text.charCodeAt(close + 1) !== OPEN_PAREN) return undefined;
  const url = close + 2;
  const scheme = text.startsWith('https://', url) ? 8 : text.startsWith('http://', url) ? 7 : 0;
  if (!scheme) return undefined;
  const stop = finders.urlEnd.at(url + scheme);
  const urlStop = stop < 0 ? text.length : stop;
  if (urlStop <= url + scheme || urlStop >= text.length) return undefined;
  const end = text.charCodeAt(urlStop) === CLOSE_PAREN ? urlStop + 1 : titleEnd(text, urlStop, finders);
  return end >= 0 ? { end, url: text.slice(url, urlStop) } : undefined;
}

/** After a URL that whitespace ends at `urlStop`: the end of a quoted title and its `)`, or -1. */
function titleEnd(text: string, urlStop: number, finders: LinkFinders): number {
  const title = finders.nonSpace.at(urlStop);
  const closing = title >= 0 && text.charCodeAt(title) === QUOTE ? finders.quote.at(title + 1) : -1;
  return closing >= 0 && text.charCodeAt(closing + 1) === CLOSE_PAREN ? closing + 2 : -1;
}

/** Whether a code unit may not appear in a bare image URL: whitespace `<` `>` `(` `)` `"` `'`. */
function endsUrl(code: number): boolean {
  return (
    code === 0x3c ||
    code === 0x3e ||
    code === OPEN_PAREN ||
    code === CLOSE_PAREN ||
    code === QUOTE ||
    code === 0x27 ||
    isWhitespace(code)
  );
}

/** Whether a code unit may not appear in a bare image URL's query: those of {@link endsUrl} and `,`. */
function endsQuery(code: number): boolean {
  return code === 0x2c || endsUrl(code);
}

/** Whether a bare image URL may end before position `at` of `text`: at the end, or before whitespace or one of `)>"',.`. */
function endsLink(text: string, at: number): boolean {
  if (at >= text.length) return true;
  const c = text.charCodeAt(at);
  return c === CLOSE_PAREN || c === 0x3e || c === QUOTE || c === 0x27 || c === 0x2c || c === 0x2e || isWhitespace(c);
}

/** Image file extensions of bare links, lower case. */
const IMAGE_EXTENSIONS = ['png', 'jpeg', 'jpg', 'gif', 'webp', 'avif'];

/** The length of the image extension (any case) at `at`, or 0. */
function imageExtensionAt(text: string, at: number): number {
  for (const ext of IMAGE_EXTENSIONS) {
    let i = 0;
    while (i < ext.length && (text.charCodeAt(at + i) | 0x20) === ext.charCodeAt(i)) i++;
    if (i === ext.length) return i;
  }
  return 0;
}

/** Whether the code unit before a bare URL rules it out (a letter, digit, `_` or `(`). */
function gluedBefore(code: number): boolean {
  return (
    code === OPEN_PAREN ||
    code === 0x5f ||
    (code >= 0x30 && code <= 0x39) ||
    ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a)
  );
}

/**
 * The bare image links of a text, left to right: `http(s)://` (any case) not preceded by a
 * letter, digit, `_` or `(`, then URL characters (no whitespace, `<>()"'`) up to the first `.`
 * that ends an image extension (png, jpg, jpeg, gif, webp, avif, any case) followed by the end,
 * whitespace or one of `)>"',.`, or by a `?` query (no `,` either) that ends so (or at its last
 * `.`): the matches of
 * `/(?<![(\w])(https?:\/\/[^\s<>()"']+?\.(?:png|jpe?g|gif|webp|avif)(?:\?[^\s<>()"',]*)?)(?=[\s)>"',.]|$)/gi`.
 * Linear: whether a `.` ends a link does not depend on where the link starts, so each `.` is
 * judged once, where the expression judges it again from every `http://` before it.
 */
function bareImageUrls(text: string): string[] {
  const urls: string[] = [];
  const urlStop = new NextIndex(text, endsUrl);
  const queryStop = new NextIndex(text, endsQuery);
  const dots = new NextIndex(text, '.');
  // The last `.` before the end of the last query looked at (many links may share a query).
  let lastQueryStop = -1;
  let lastQueryDot = -1;
  /** Where a link whose extension's dot is at `dot` ends, or -1. */
  const linkEnd = (dot: number): number => {
    const ext = imageExtensionAt(text, dot + 1);
    if (!ext) return -1;
    const afterExt = dot + 1 + ext;
    if (text.charCodeAt(afterExt) !== 0x3f /* ? */) return endsLink(text, afterExt) ? afterExt : -1;
    const found = queryStop.at(afterExt + 1);
    const stop = found < 0 ? text.length : found;
    if (endsLink(text, stop)) return stop;
    // Else the query ends at its last `.` (the only code unit of a query a link may end before).
    if (stop !== lastQueryStop) {
      lastQueryStop = stop;
      lastQueryDot = text.lastIndexOf('.', stop - 1);
    }
    return lastQueryDot > afterExt ? lastQueryDot : -1;
  };
  /** The first `.` at or after a position that ends a link, and that link's end (memo for non-decreasing positions). */
  let okFrom = -1;
  let okDot = -1;
  let okEnd = -1;
  const firstLinkDot = (from: number): number => {
    if (okFrom >= 0 && from >= okFrom && (okDot < 0 || from <= okDot)) return okDot;
    okFrom = from;
    for (let dot = dots.at(from); dot >= 0; dot = dots.at(dot + 1)) {
      const end = linkEnd(dot);
      if (end >= 0) {
        okDot = dot;
        okEnd = end;
        return dot;
      }
    }
    okDot = -1;
    return -1;
  };
  const scheme = /https?:\/\//gi;
  for (let match = scheme.exec(text); match; match = scheme.exec(text)) {
    const start = match.index;
    scheme.lastIndex = start + 1;
    if (start > 0 && gluedBefore(text.charCodeAt(start - 1))) continue;
    const body = start + match[0].length;
    const stop = urlStop.at(body);
    const bodyEnd = stop < 0 ? text.length : stop;
    // At least one URL character before the extension's dot, all of them URL characters.
    const dot = bodyEnd > body ? firstLinkDot(body + 1) : -1;
    if (dot < 0 || dot >= bodyEnd) continue;
    urls.push(text.slice(start, okEnd));
    scheme.lastIndex = okEnd;
  }
  return urls;
}

/**
 * Finds the image results in an answer of web search mode "images": Markdown images
 * `![alt](url)` and bare http(s) links ending in an image extension. Duplicates removed,
 * order kept (the Markdown images first). Linear in the length of `text`.
 */
export function extractImageLinks(text: string): ImageLink[] {
  const seen = new Set<string>();
  const out: ImageLink[] = [];
  const add = (url: string, alt: string) => {
    if (seen.has(url)) return;
    seen.add(url);
    out.push({ url, alt });
  };
  const images = markdownImages(text);
  for (const image of images) add(image.url, image.alt);
  // The bare links are looked for in the text with each Markdown image replaced by a space.
  const parts: string[] = [];
  let last = 0;
  for (const image of images) {
    parts.push(text.slice(last, image.start), ' ');
    last = image.end;
  }
  parts.push(text.slice(last));
  for (const url of bareImageUrls(parts.join(''))) add(url, '');
  return out;
}
