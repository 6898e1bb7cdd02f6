/**
 * HTML that imitates how Discord and Slack lay out the bot's messages, from the payloads the
 * fakes received (scripts/screenshots.ts), for a person to look at. An imitation, not the
 * platforms' renderers: Discord's Markdown and a Slack `markdown` block are drawn with
 * markdown-it (Discord without tables, which it does not render), Slack's mrkdwn with the few
 * rules Slack documents (`*bold*`, `_italics_`, `~strike~`, `` `code` ``, ```` ``` ```` blocks,
 * `<url|label>`, `>` quotes), Components V2 and Block Kit by their types. This runs on the bot's
 * own payloads in a docs tool, never on a user's or a model's text in the bot.
 */
import MarkdownIt from 'markdown-it';

type Json = Record<string, unknown>;

/** Discord's Markdown: CommonMark with strikethrough, no tables (Discord shows their pipes). */
const discordMarkdown = new MarkdownIt('commonmark', { html: false, breaks: true }).enable('strikethrough');
/** What a Slack `markdown` block renders: standard Markdown, tables included. */
const slackMarkdown = new MarkdownIt('commonmark', { html: false, breaks: true }).enable(['strikethrough', 'table']);

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`);

/** One message as a page shows it: who wrote it and its body's HTML. */
export interface ShownMessage {
  author: string;
  bot: boolean;
  html: string;
  /** Shown to its reader alone (Discord's ephemeral message: "Only you can see this"). */
  ephemeral?: boolean;
}

/** A Discord message's body: its `content`, or its Components V2 tree, and its buttons. */
export function discordBody(message: { content: string; components: unknown[]; flags: number }): string {
  const v2 = (message.flags & (1 << 15)) !== 0;
  const text = v2 ? '' : discordMarkdown.render(message.content);
  return text + (message.components as Json[]).map((c) => discordComponent(c)).join('');
}

/** A Discord component (action row, button, Container, Text Display, Media Gallery, Separator). */
function discordComponent(component: Json): string {
  const children = (key: string) => ((component[key] as Json[] | undefined) ?? []).map(discordComponent).join('');
  switch (component.type) {
    case 1:
      return `<div class="row">${children('components')}</div>`;
    case 2:
      return `<span class="button style-${String(component.style)}">${escapeHtml(String((component.emoji as Json | undefined)?.name ?? ''))} ${escapeHtml(String(component.label ?? ''))}</span>`;
    case 17:
      return `<div class="container">${children('components')}</div>`;
    case 10:
      return discordMarkdown.render(String(component.content ?? ''));
    case 12:
      return `<div class="gallery">${((component.items as Json[]) ?? []).map((item) => `<img src="${escapeHtml(String((item.media as Json).url))}" alt="${escapeHtml(String(item.description ?? ''))}">`).join('')}</div>`;
    case 14:
      return '<hr>';
    default:
      return '';
  }
}

/** Slack's mrkdwn, as Slack documents its formatting: the text as sent (text.ts escapes `&`, `<`, `>` in a user's or model's text), HTML-escaped here first. */
export function mrkdwn(text: string): string {
  // HTML-escaped first: the bot's own `<url|label>` become `&lt;…&gt;`, Slack's entities `&amp;…;`
  // (turned back into HTML's at the end, so that they show as the characters they stand for).
  const blocks = escapeHtml(text).split('```');
  return blocks
    .map((part, i) => {
      if (i % 2 === 1) return `<pre>${part.replace(/^\n/, '')}</pre>`;
      return part
        .split('\n')
        .map((line) => {
          const quote = line.startsWith('&gt;');
          let html = (quote ? line.slice(4).trimStart() : line)
            .replace(/&lt;(https?:[^|&]+)\|(.+?)&gt;/g, '<a href="$1">$2</a>')
            .replace(/&lt;(https?:[^&]+)&gt;/g, '<a href="$1">$1</a>')
            .replace(/`([^`]+)`/g, '<code>$1</code>')
            .replace(/(^|[\s(])\*([^*\n]+)\*/g, '$1<b>$2</b>')
            .replace(/(^|[\s(])_([^_\n]+)_/g, '$1<i>$2</i>')
            .replace(/(^|[\s(])~([^~\n]+)~/g, '$1<s>$2</s>');
          if (quote) html = `<blockquote>${html}</blockquote>`;
          return html;
        })
        .join('<br>');
    })
    .join('')
    .replace(/&amp;(amp|lt|gt);/g, '&$1;');
}

/**
 * A Slack message's body: a natively streamed message's Markdown (`streamed`: its writes'
 * `markdown_text` joined), then its blocks (or its `text` without them), and its images.
 */
export function slackBody(
  message: { text: string; blocks: unknown[] | undefined },
  images: string[],
  streamed?: string,
): string {
  const blocks = (message.blocks as Json[] | undefined) ?? [];
  const shown = streamed === undefined ? '' : `<div class="markdown">${slackMarkdown.render(streamed)}</div>`;
  const body = blocks.length ? blocks.map(slackBlock).join('') : streamed === undefined ? mrkdwn(message.text) : '';
  return shown + body + images.map((src) => `<img class="file" src="${escapeHtml(src)}">`).join('');
}

/** The text of a Block Kit text object. */
const textOf = (object: unknown) => {
  const o = object as Json | undefined;
  if (!o) return '';
  return o.type === 'plain_text' ? escapeHtml(String(o.text)) : mrkdwn(String(o.text));
};

/** One Block Kit block, by its type. */
function slackBlock(block: Json): string {
  switch (block.type) {
    case 'markdown':
      return `<div class="markdown">${slackMarkdown.render(String(block.text))}</div>`;
    case 'section':
      return `<div class="section">${textOf(block.text)}${((block.fields as unknown[]) ?? []).map(textOf).join('<br>')}</div>`;
    case 'header':
      return `<h3>${textOf(block.text)}</h3>`;
    case 'context':
      return `<div class="context">${((block.elements as Json[]) ?? []).map((e) => (e.type === 'image' ? '' : textOf(e))).join(' ')}</div>`;
    case 'divider':
      return '<hr>';
    case 'image':
      return `<img class="file" src="${escapeHtml(String(block.image_url))}" alt="${escapeHtml(String(block.alt_text ?? ''))}">`;
    case 'actions':
      return `<div class="row">${((block.elements as Json[]) ?? []).map((e) => `<span class="button">${textOf(e.text)}</span>`).join('')}</div>`;
    case 'context_actions':
      // Slack's feedback buttons (👍 / 👎) and icon buttons, under an answer.
      return `<div class="row">${((block.elements as Json[]) ?? []).map((e) => (e.type === 'feedback_buttons' ? '<span class="button">👍</span><span class="button">👎</span>' : `<span class="button">${textOf(e.text)}</span>`)).join('')}</div>`;
    case 'table':
      return `<table>${((block.rows as Json[][]) ?? []).map((row, i) => `<tr>${row.map((cell) => `<${i === 0 ? 'th' : 'td'}>${escapeHtml(cellText(cell))}</${i === 0 ? 'th' : 'td'}>`).join('')}</tr>`).join('')}</table>`;
    default:
      return `<div class="context">[${escapeHtml(String(block.type))} block]</div>`;
  }
}

/** A table cell's text: `raw_text`, or the texts of a `rich_text` cell's elements. */
function cellText(cell: Json): string {
  if (cell.type === 'raw_text') return String(cell.text ?? '');
  return (
    JSON.stringify(cell)
      .match(/"text":"((?:[^"\\]|\\.)*)"/g)
      ?.map((m) => JSON.parse(m.slice(7)) as string)
      .join('') ?? ''
  );
}

const DISCORD_CSS = `body{background:#313338;color:#dbdee1;font:16px/1.375 "Noto Sans","DejaVu Sans",sans-serif;margin:0;padding:16px 24px;width:760px}
.msg{display:flex;gap:16px;margin:0 0 16px}.avatar{width:40px;height:40px;border-radius:50%;background:#5865f2;flex:none}
.name{font-weight:600;color:#f2f3f5}.tag{background:#5865f2;color:#fff;font-size:10px;border-radius:3px;padding:1px 4px;margin-left:4px;vertical-align:2px}
p{margin:2px 0}h1,h2,h3{margin:8px 0 4px;color:#f2f3f5}h1{font-size:24px}h2{font-size:20px}h3{font-size:16px}a{color:#00a8fc;text-decoration:none}
code{background:#2b2d31;border-radius:4px;padding:0 3px;font-family:"DejaVu Sans Mono",monospace;font-size:14px}
pre{background:#2b2d31;border:1px solid #1e1f22;border-radius:4px;padding:8px;white-space:pre-wrap}pre code{padding:0;background:none}
blockquote{margin:4px 0;padding:0 12px;border-left:4px solid #4e5058}ul,ol{margin:4px 0;padding-left:24px}
.container{border-left:4px solid #4e5058;background:#2b2d31;border-radius:8px;padding:12px;margin-top:4px}
.gallery img{max-width:100%;border-radius:8px;margin:8px 0}.row{margin-top:8px}
.button{display:inline-block;background:#4e5058;color:#fff;border-radius:4px;padding:4px 14px;margin:0 8px 0 0;font-size:14px}.style-1{background:#5865f2}.style-4{background:#da373c}
.ephemeral{background:#2e3035;border-radius:4px;padding:6px 0}.only-you{color:#949ba4;font-size:12px;margin-top:4px}`;

const SLACK_CSS = `body{background:#fff;color:#1d1c1d;font:15px/1.47 "Noto Sans","DejaVu Sans",sans-serif;margin:0;padding:16px 20px;width:760px}
.msg{display:flex;gap:8px;margin:0 0 12px}.avatar{width:36px;height:36px;border-radius:6px;background:#4a154b;flex:none}
.name{font-weight:900}.tag{background:#e8e8e8;color:#616061;font-size:10px;border-radius:2px;padding:1px 3px;margin-left:4px}
p{margin:0 0 6px}h1,h2,h3{font-size:17px;margin:6px 0}a{color:#1264a3}
code{color:#e01e5a;background:#f6f6f6;border:1px solid #ddd;border-radius:3px;padding:0 3px;font-family:"DejaVu Sans Mono",monospace;font-size:13px}
pre{background:#f8f8f8;border:1px solid #ddd;border-radius:4px;padding:8px;white-space:pre-wrap;font-family:"DejaVu Sans Mono",monospace;font-size:13px}pre code{color:inherit;border:0;background:none}
blockquote{margin:4px 0;padding:0 10px;border-left:4px solid #ddd}ul,ol{margin:4px 0;padding-left:24px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:4px 10px}th{background:#f8f8f8}
.context{color:#616061;font-size:13px}.row{margin-top:8px}.button{display:inline-block;border:1px solid #ccc;border-radius:4px;padding:3px 12px;margin-right:8px;font-weight:700;font-size:14px}
img.file{max-width:360px;border-radius:8px;margin-top:6px;display:block}`;

/** A whole page: the platform's look, a title, and its messages in order. */
export function page(platform: 'discord' | 'slack', title: string, messages: readonly ShownMessage[]): string {
  const rows = messages
    .map(
      (m) =>
        `<div class="msg${m.ephemeral ? ' ephemeral' : ''}"><div class="avatar"></div><div><span class="name">${escapeHtml(m.author)}</span>${m.bot ? `<span class="tag">${platform === 'discord' ? 'APP' : 'APP'}</span>` : ''}<div>${m.html}</div>${m.ephemeral ? '<div class="only-you">👁 Only you can see this</div>' : ''}</div></div>`,
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${platform === 'discord' ? DISCORD_CSS : SLACK_CSS}</style></head><body>${rows}</body></html>`;
}
