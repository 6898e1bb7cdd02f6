/**
 * Reading markdown-it's inline tokens (the `children` of an `inline` token): their text without
 * markup, the links a platform may show as links, and how many constructs they hold. Every
 * function is linear in the tokens it reads.
 */
import type { Token } from './parse.ts';

/** The schemes a link may keep on a platform (anything else is shown as text). */
const LINK_SCHEMES = ['https://', 'http://', 'mailto:'];

/**
 * `href` when it is a link the platforms show as one (http, https, mailto; markdown-it has
 * percent-encoded it already: no space, `<`, `>` or `|`), else undefined.
 */
export function webLink(href: string | number | null | undefined): string | undefined {
  if (typeof href !== 'string' || href === '') return undefined;
  const lower = href.slice(0, 8).toLowerCase();
  return LINK_SCHEMES.some((scheme) => lower.startsWith(scheme) && href.length > scheme.length) ? href : undefined;
}

/**
 * The text of inline tokens without their markup: code spans' text, a line break as a space, a
 * link as its label followed by its address in parentheses (when the label is not the address
 * itself), an image as its description and address.
 */
export function plainText(children: readonly Token[]): string {
  const out: string[] = [];
  let link: { href: string; from: number } | undefined;
  for (const token of children) {
    switch (token.type) {
      case 'text':
      case 'code_inline':
        out.push(token.content);
        break;
      case 'softbreak':
      case 'hardbreak':
        out.push(' ');
        break;
      case 'link_open':
        link = { href: String(token.attrGet('href') ?? ''), from: out.length };
        break;
      case 'link_close':
        if (link?.href && out.slice(link.from).join('') !== link.href) out.push(` (${link.href})`);
        link = undefined;
        break;
      case 'image': {
        const alt = plainText(token.children ?? []);
        const src = String(token.attrGet('src') ?? '');
        out.push(alt ? `${alt} (${src})` : src);
        break;
      }
    }
  }
  return out.join('');
}

/** Inline constructs that come as a pair of tokens or one token: what a cut through one would break. */
const CONSTRUCTS: ReadonlySet<string> = new Set([
  'strong_open',
  'em_open',
  's_open',
  'link_open',
  'code_inline',
  'image',
]);

/**
 * How many inline constructs (bold, italics, strikethrough, links, code spans, images) the
 * block tokens hold, in every `inline` token's children. A text cut through one of them holds
 * fewer in its two halves together than the whole does.
 */
export function constructCount(tokens: readonly Token[]): number {
  let count = 0;
  for (const token of tokens) {
    if (token.type !== 'inline') continue;
    for (const child of token.children ?? []) if (CONSTRUCTS.has(child.type)) count++;
  }
  return count;
}
