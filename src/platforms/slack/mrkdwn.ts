/**
 * An answer's Markdown in Slack's mrkdwn, for what takes only mrkdwn text: the `text` beside a
 * message's blocks (notifications, screen readers, clients without blocks) and a file's comment.
 * Written from the parser's tokens (core/markdown/parse.ts), never by regular expressions over
 * the text: `**bold**` → `*bold*`, `*italics*` → `_italics_`, `~~struck~~` → `~struck~`,
 * `[label](https://…)` → `<https://…|label>` (http, https and mailto only; other links stay text),
 * a heading → its text in bold, list items → `•` or their number, quotes → `>`, code blocks →
 * ```…```, a table → its monospaced lines in a code block. All text is escaped (`&`, `<`, `>`), so
 * that no mention can form; a top-level paragraph without markup is its own source, escaped.
 * Linear in the text's length (nesting is capped by the parser).
 */
import { plainText, webLink } from '../../core/markdown/inline.ts';
import { parseMarkdown, type Token } from '../../core/markdown/parse.ts';
import { lineStarts, linesEnd, normalizeSource } from '../../core/markdown/source.ts';
import { readTableTokens } from '../../core/markdown/table-tokens.ts';
import { RULE } from './markdown.ts';
import { monospaceTable } from './table-block.ts';
import { escapeSlackText } from './text.ts';

/** The index of the token closing `tokens[open]` (same level, nesting -1). */
function closeOf(tokens: readonly Token[], open: number): number {
  const level = tokens[open]!.level;
  for (let i = open + 1; i < tokens.length; i++) if (tokens[i]!.level === level && tokens[i]!.nesting === -1) return i;
  return tokens.length;
}

/** Inline tokens in mrkdwn (see the file's comment). */
function inlineMrkdwn(children: readonly Token[]): string {
  const out: string[] = [];
  let link: { href: string; label: Token[] } | undefined;
  for (const token of children) {
    if (link && token.type !== 'link_close') {
      link.label.push(token);
      continue;
    }
    switch (token.type) {
      case 'text':
        out.push(escapeSlackText(token.content));
        break;
      case 'code_inline':
        out.push(`\`${escapeSlackText(token.content)}\``);
        break;
      case 'softbreak':
      case 'hardbreak':
        out.push('\n');
        break;
      case 'strong_open':
      case 'strong_close':
        out.push('*');
        break;
      case 'em_open':
      case 'em_close':
        out.push('_');
        break;
      case 's_open':
      case 's_close':
        out.push('~');
        break;
      case 'link_open':
        link = { href: String(token.attrGet('href') ?? ''), label: [] };
        break;
      case 'link_close':
        if (link) out.push(linkMrkdwn(link.href, plainText(link.label)));
        link = undefined;
        break;
      case 'image':
        out.push(linkMrkdwn(String(token.attrGet('src') ?? ''), plainText(token.children ?? [])));
        break;
    }
  }
  return out.join('');
}

/** `<url|label>` for a web address; otherwise the label and the address as text. */
function linkMrkdwn(href: string, label: string): string {
  const url = webLink(href);
  if (url)
    return label && label !== url ? `<${escapeSlackText(url)}|${escapeSlackText(label)}>` : `<${escapeSlackText(url)}>`;
  return escapeSlackText(label && href ? `${label} (${href})` : label || href);
}

/** What reads a source: the text, its tokens, and where its lines start. */
interface Source {
  text: string;
  tokens: Token[];
  starts: number[];
}

/** The blocks of `tokens[from, to)` (one nesting level), each in mrkdwn. */
function blocksMrkdwn(source: Source, from: number, to: number, topLevel: boolean): string[] {
  const { tokens } = source;
  const out: string[] = [];
  for (let i = from; i < to; ) {
    const token = tokens[i]!;
    switch (token.type) {
      case 'paragraph_open':
        out.push(paragraphMrkdwn(source, i, topLevel));
        i = closeOf(tokens, i) + 1;
        break;
      case 'heading_open':
        out.push(`*${escapeSlackText(plainText(tokens[i + 1]?.children ?? []))}*`);
        i = closeOf(tokens, i) + 1;
        break;
      case 'bullet_list_open':
      case 'ordered_list_open': {
        const close = closeOf(tokens, i);
        out.push(listMrkdwn(source, i, close));
        i = close + 1;
        break;
      }
      case 'blockquote_open': {
        const close = closeOf(tokens, i);
        const inner = blocksMrkdwn(source, i + 1, close, false).join('\n\n');
        out.push(
          inner
            .split('\n')
            .map((line) => `> ${line}`)
            .join('\n'),
        );
        i = close + 1;
        break;
      }
      case 'fence':
      case 'code_block':
        out.push(`\`\`\`\n${escapeSlackText(token.content.replace(/\n$/, ''))}\n\`\`\``);
        i++;
        break;
      case 'table_open': {
        const table = readTableTokens(tokens, i);
        out.push(escapeSlackText(monospaceTable(table, 0)));
        i = table.next;
        break;
      }
      case 'hr':
        out.push(RULE);
        i++;
        break;
      case 'html_block':
        out.push(escapeSlackText(token.content.trimEnd()));
        i++;
        break;
      default:
        i++;
    }
  }
  return out;
}

/**
 * A paragraph in mrkdwn; a top-level one whose text holds no markup, no escape and no entity (its
 * inline tokens are its source's lines) is its source as written, trailing spaces included.
 */
function paragraphMrkdwn(source: Source, open: number, topLevel: boolean): string {
  const paragraph = source.tokens[open]!;
  const children = source.tokens[open + 1]?.children ?? [];
  if (topLevel && paragraph.map && children.every((c) => c.type === 'text' || c.type === 'softbreak')) {
    const own = source.text.slice(
      source.starts[paragraph.map[0]],
      linesEnd(source.starts, paragraph.map[1], source.text),
    );
    const read = children.map((c) => (c.type === 'text' ? c.content : '\n')).join('');
    if (read === own.trimEnd()) return escapeSlackText(own);
  }
  return inlineMrkdwn(children);
}

/** A task item's text with its `[ ]` / `[x]` as ☐ / ☑ (as markdown.ts shows it). */
function checkbox(body: string): string {
  const box = body.slice(0, 4);
  if (box === '[ ] ') return `☐ ${body.slice(4)}`;
  return box === '[x] ' || box === '[X] ' ? `☑ ${body.slice(4)}` : body;
}

/** A list in mrkdwn: each item `•` or its number, its further lines indented under it. */
function listMrkdwn(source: Source, open: number, close: number): string {
  const { tokens } = source;
  const list = tokens[open]!;
  const ordered = list.type === 'ordered_list_open';
  let number = Number(list.attrGet('start') ?? 1);
  const items: string[] = [];
  for (let i = open + 1; i < close; ) {
    if (tokens[i]!.type !== 'list_item_open') {
      i++;
      continue;
    }
    const end = closeOf(tokens, i);
    const marker = ordered ? `${number++}. ` : '• ';
    const body = checkbox(blocksMrkdwn(source, i + 1, end, false).join('\n'));
    items.push(marker + body.split('\n').join('\n    '));
    i = end + 1;
  }
  return items.join('\n');
}

/**
 * `markdown` in mrkdwn (see the file's comment), at most `maxChars` characters: past them it is
 * cut after its last whole block or line that fits (never inside an entity or a `<…>` link),
 * with `…`.
 */
export function mrkdwnOf(markdown: string, maxChars: number): string {
  const text = normalizeSource(markdown);
  const source: Source = { text, tokens: parseMarkdown(text), starts: lineStarts(text) };
  const whole = blocksMrkdwn(source, 0, source.tokens.length, true).join('\n\n');
  return whole.length <= maxChars ? whole : cutMrkdwn(whole, maxChars - 1);
}

/** `text` cut to at most `max` characters at a line break or space, outside `<…>` and `&…;`, then `…`. */
function cutMrkdwn(text: string, max: number): string {
  let cut = Math.max(text.lastIndexOf('\n', max), text.lastIndexOf(' ', max));
  if (cut < max / 2) cut = max;
  const open = text.lastIndexOf('<', cut - 1);
  if (open > text.lastIndexOf('>', cut - 1)) cut = open;
  const amp = text.lastIndexOf('&', cut - 1);
  if (amp > cut - 6 && !text.slice(amp, cut).includes(';')) cut = amp;
  return `${text.slice(0, cut).trimEnd()}…`;
}
