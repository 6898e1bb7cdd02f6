/**
 * Block Kit's `table` block and rich text as the fake checks them (blocks.ts calls these), by
 * what Slack documents and what others measured against it:
 * - a table (docs.slack.dev/reference/block-kit/blocks/table-block): `rows` 1–100 rows of 1–20
 *   cells, each a `raw_text` (a non-empty `text`) or a `rich_text` cell; `column_settings` at most
 *   20 items, `align` left, center or right, `is_wrapped` a boolean; one table a message
 *   (`only_one_table_allowed`); at most 10,000 characters in its cells together (measured:
 *   vercel/chat's Slack adapter limits, getnao/nao #1178);
 * - rich text (…/blocks/rich-text-block): elements `rich_text_section`, `rich_text_list`,
 *   `rich_text_quote`, `rich_text_preformatted`, each with an `elements` array of `text` (a
 *   non-empty string, optional `style` of booleans bold, italic, strike, code), `link` (a `url`),
 *   `emoji`, `user`, `usergroup`, `channel`, `broadcast`, `date`, `color` or `team` elements.
 * Refusals are `invalid_blocks` with `response_metadata.messages` naming the JSON pointer.
 */
import { isObject, SlackApiError } from './wire.ts';

const MAX_ROWS = 100;
const MAX_CELLS = 20;
const MAX_TABLE_CHARS = 10_000;

/** Slack's `invalid_blocks` naming what is wrong and where. */
export const blockError = (message: string, pointer: string) =>
  new SlackApiError('invalid_blocks', {
    response_metadata: { messages: [`[ERROR] ${message} [json-pointer:${pointer}]`] },
  });

const SECTIONS = new Set(['rich_text_section', 'rich_text_list', 'rich_text_quote', 'rich_text_preformatted']);
const INLINE = new Set(['text', 'link', 'emoji', 'user', 'usergroup', 'channel', 'broadcast', 'date', 'color', 'team']);

/** One inline element of rich text; @returns its characters. */
function checkInline(element: unknown, at: string): number {
  if (!isObject(element) || !INLINE.has(String(element.type)))
    throw blockError(`unsupported type: ${String(isObject(element) ? element.type : element)}`, `${at}/type`);
  if (element.style !== undefined) {
    if (!isObject(element.style) || Object.values(element.style).some((v) => typeof v !== 'boolean'))
      throw blockError('must be an object of booleans', `${at}/style`);
  }
  if (element.type === 'text') {
    if (typeof element.text !== 'string' || element.text.length === 0)
      throw blockError('must be more than 0 characters', `${at}/text`);
    return element.text.length;
  }
  if (element.type === 'link') {
    if (typeof element.url !== 'string' || element.url.length === 0)
      throw blockError('missing required field: url', `${at}/url`);
    if (element.text !== undefined && typeof element.text !== 'string')
      throw blockError('must be a string', `${at}/text`);
    return element.url.length + (typeof element.text === 'string' ? element.text.length : 0);
  }
  return 0;
}

/** A rich text block's `elements`; @returns their characters. */
export function checkRichText(elements: unknown, at: string): number {
  if (!Array.isArray(elements) || elements.length === 0) throw blockError('must be a non-empty array', at);
  let chars = 0;
  elements.forEach((section: unknown, i) => {
    const where = `${at}/${i}`;
    if (!isObject(section) || !SECTIONS.has(String(section.type)))
      throw blockError(`unsupported type: ${String(isObject(section) ? section.type : section)}`, `${where}/type`);
    if (!Array.isArray(section.elements)) throw blockError('must be an array', `${where}/elements`);
    section.elements.forEach((element: unknown, j) => {
      // A list's items are sections themselves.
      chars +=
        section.type === 'rich_text_list'
          ? checkRichText([element], `${where}/elements/${j}`)
          : checkInline(element, `${where}/elements/${j}`);
    });
  });
  return chars;
}

/** A `table` block (see the file's comment). */
export function checkTable(block: Record<string, unknown>, at: string): void {
  const rows = block.rows;
  if (!Array.isArray(rows) || rows.length === 0 || rows.length > MAX_ROWS)
    throw blockError(`must have 1 to ${MAX_ROWS} rows`, `${at}/rows`);
  let chars = 0;
  rows.forEach((row: unknown, i) => {
    if (!Array.isArray(row) || row.length === 0 || row.length > MAX_CELLS)
      throw blockError(`must have 1 to ${MAX_CELLS} cells`, `${at}/rows/${i}`);
    row.forEach((cell: unknown, j) => {
      const where = `${at}/rows/${i}/${j}`;
      if (!isObject(cell)) throw blockError('must be an object', where);
      if (cell.type === 'raw_text') {
        if (typeof cell.text !== 'string' || cell.text.length === 0)
          throw blockError('must be more than 0 characters', `${where}/text`);
        chars += cell.text.length;
      } else if (cell.type === 'rich_text') chars += checkRichText(cell.elements, `${where}/elements`);
      else throw blockError(`unsupported type: ${String(cell.type)}`, `${where}/type`);
    });
  });
  if (chars > MAX_TABLE_CHARS) throw blockError(`cells must hold at most ${MAX_TABLE_CHARS} characters`, `${at}/rows`);
  const settings = block.column_settings;
  if (settings === undefined) return;
  if (!Array.isArray(settings) || settings.length > MAX_CELLS)
    throw blockError(`no more than ${MAX_CELLS} items allowed`, `${at}/column_settings`);
  settings.forEach((setting: unknown, i) => {
    const where = `${at}/column_settings/${i}`;
    if (setting === null) return;
    if (!isObject(setting)) throw blockError('must be an object', where);
    if (setting.align !== undefined && !['left', 'center', 'right'].includes(String(setting.align)))
      throw blockError('must be one of left, center, right', `${where}/align`);
    if (setting.is_wrapped !== undefined && typeof setting.is_wrapped !== 'boolean')
      throw blockError('must be a boolean', `${where}/is_wrapped`);
  });
}

/** Mentions rich text makes (`user`, `usergroup`, `broadcast` elements), as `<@U…>`, `<!subteam^…>`, `<!here>`. */
export function richTextMentions(blocks: unknown[] | undefined): string[] {
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) {
      if (value.type === 'user' && typeof value.user_id === 'string') out.push(`<@${value.user_id}>`);
      else if (value.type === 'usergroup' && typeof value.usergroup_id === 'string')
        out.push(`<!subteam^${value.usergroup_id}>`);
      else if (value.type === 'broadcast' && typeof value.range === 'string') out.push(`<!${value.range}>`);
      Object.values(value).forEach(visit);
    }
  };
  visit(blocks);
  return out;
}
