/**
 * Block Kit validation: the limits Slack enforces on `blocks` that matter here (50 blocks, a
 * section's text under 3,001 characters, a header's under 151, an image's alt text, known block
 * types, a `context_actions` block's 1–5 `feedback_buttons` / `icon_button` elements…), answered
 * as Slack answers them: `invalid_blocks_format` or `invalid_blocks` with
 * `response_metadata.messages` naming the JSON pointer.
 *
 * `context_actions` (docs.slack.dev/reference/block-kit/blocks/context-actions-block) takes only
 * `feedback_buttons` and `icon_button` elements, at most 5. A `feedback_buttons` element
 * (…/block-elements/feedback-buttons-element) needs a `positive_button` and a `negative_button`,
 * each with a plain_text `text` of 1–75 characters, a `value` of 1–2,000 characters and an
 * optional `accessibility_label` of at most 75; its optional `action_id` is at most 255
 * characters. An `icon_button` needs an `icon` and a plain_text `text`.
 *
 * `markdown` blocks (…/blocks/markdown-block) hold standard Markdown, at most 12,000 characters
 * in all the markdown blocks of one payload together. `table` blocks and rich text: table-blocks.ts.
 */
import { blockError, checkRichText, checkTable } from './table-blocks.ts';
import { isObject, SlackApiError } from './wire.ts';

const MAX_BLOCKS = 50;
const MAX_SECTION_TEXT = 3000;
/** The markdown blocks of one payload together (Block Kit reference, "Markdown block"). */
const MAX_MARKDOWN_TEXT = 12_000;

/** A text object `{ type: 'plain_text' | 'mrkdwn', text }` of 1..max characters. */
function checkTextObject(value: unknown, pointer: string, max: number, plainOnly = false): void {
  if (!isObject(value) || (value.type !== 'plain_text' && (plainOnly || value.type !== 'mrkdwn'))) {
    throw blockError(`must be a ${plainOnly ? 'plain_text' : 'plain_text or mrkdwn'} text object`, pointer);
  }
  if (typeof value.text !== 'string' || value.text.length === 0)
    throw blockError('must be more than 0 characters', `${pointer}/text`);
  if (value.text.length > max) throw blockError(`must be less than ${max + 1} characters`, `${pointer}/text`);
}

/**
 * Checks `blocks` the way Slack does for the limits that matter here.
 * @param maxBlocks 50 for a message, 100 for a modal or a Home tab (home.ts).
 * @returns the parsed array, or undefined when absent.
 * @throws SlackApiError `invalid_blocks_format` (not JSON, not an array) or `invalid_blocks`.
 */
export function parseBlocks(raw: unknown, maxBlocks = MAX_BLOCKS): unknown[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  let blocks: unknown = raw;
  if (typeof raw === 'string') {
    try {
      blocks = JSON.parse(raw);
    } catch {
      throw new SlackApiError('invalid_blocks_format');
    }
  }
  if (!Array.isArray(blocks)) throw new SlackApiError('invalid_blocks_format');
  if (blocks.length > maxBlocks) throw blockError(`no more than ${maxBlocks} items allowed`, '/blocks');
  const ids = new Set<string>();
  let markdownChars = 0;
  let tables = 0;
  blocks.forEach((block: unknown, i) => {
    const at = `/blocks/${i}`;
    if (!isObject(block)) throw blockError('must be an object', at);
    if (block.block_id !== undefined) {
      if (typeof block.block_id !== 'string' || block.block_id.length > 255)
        throw blockError('must be a string of at most 255 characters', `${at}/block_id`);
      if (ids.has(block.block_id)) throw blockError('duplicate block_id', `${at}/block_id`);
      ids.add(block.block_id);
    }
    switch (block.type) {
      case 'section':
        if (block.text === undefined && block.fields === undefined)
          throw blockError('must provide either text or fields', at);
        if (block.text !== undefined) checkTextObject(block.text, `${at}/text`, MAX_SECTION_TEXT);
        if (block.fields !== undefined) {
          if (!Array.isArray(block.fields) || block.fields.length > 10)
            throw blockError('no more than 10 items allowed', `${at}/fields`);
          block.fields.forEach((f: unknown, j) => checkTextObject(f, `${at}/fields/${j}`, 2000));
        }
        break;
      case 'header':
        checkTextObject(block.text, `${at}/text`, 150, true);
        break;
      case 'image':
        if (typeof block.alt_text !== 'string' || block.alt_text.length === 0 || block.alt_text.length > 2000) {
          throw blockError('must be a string of 1 to 2000 characters', `${at}/alt_text`);
        }
        if (
          block.slack_file === undefined &&
          (typeof block.image_url !== 'string' || block.image_url.length === 0 || block.image_url.length > 3000)
        ) {
          throw blockError('must provide image_url (at most 3000 characters) or slack_file', `${at}/image_url`);
        }
        if (block.title !== undefined) checkTextObject(block.title, `${at}/title`, 2000, true);
        break;
      case 'context':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10) {
          throw blockError('must have 1 to 10 elements', `${at}/elements`);
        }
        break;
      case 'markdown':
        if (typeof block.text !== 'string' || block.text.length === 0)
          throw blockError('must be more than 0 characters', `${at}/text`);
        markdownChars += block.text.length;
        if (markdownChars > MAX_MARKDOWN_TEXT)
          throw blockError(`markdown blocks must hold at most ${MAX_MARKDOWN_TEXT} characters together`, `${at}/text`);
        break;
      case 'table':
        if (++tables > 1) throw blockError('only_one_table_allowed', at);
        checkTable(block, at);
        break;
      case 'actions':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 25) {
          throw blockError('must have 1 to 25 elements', `${at}/elements`);
        }
        break;
      case 'context_actions':
        checkContextActions(block.elements, `${at}/elements`);
        break;
      case 'rich_text':
        checkRichText(block.elements, `${at}/elements`);
        break;
      case 'divider':
      case 'file':
      case 'input':
      case 'video':
        break;
      default:
        throw blockError(`unsupported type: ${String(block.type)}`, `${at}/type`);
    }
  });
  return blocks;
}

/** One button of a `feedback_buttons` element (see the file's comment). */
function checkFeedbackButton(button: unknown, pointer: string): void {
  if (!isObject(button)) throw blockError('missing required field', pointer);
  checkTextObject(button.text, `${pointer}/text`, 75, true);
  if (typeof button.value !== 'string' || button.value.length === 0 || button.value.length > 2000)
    throw blockError('must be a string of 1 to 2000 characters', `${pointer}/value`);
  const label = button.accessibility_label;
  if (label !== undefined && (typeof label !== 'string' || label.length === 0 || label.length > 75))
    throw blockError('must be a string of 1 to 75 characters', `${pointer}/accessibility_label`);
}

/** A `context_actions` block's elements (see the file's comment). */
function checkContextActions(elements: unknown, pointer: string): void {
  if (!Array.isArray(elements) || elements.length === 0 || elements.length > 5)
    throw blockError('must have 1 to 5 elements', pointer);
  elements.forEach((element: unknown, i) => {
    const at = `${pointer}/${i}`;
    if (!isObject(element)) throw blockError('must be an object', at);
    if (element.action_id !== undefined && (typeof element.action_id !== 'string' || element.action_id.length > 255))
      throw blockError('must be a string of at most 255 characters', `${at}/action_id`);
    if (element.type === 'feedback_buttons') {
      checkFeedbackButton(element.positive_button, `${at}/positive_button`);
      checkFeedbackButton(element.negative_button, `${at}/negative_button`);
    } else if (element.type === 'icon_button') {
      if (typeof element.icon !== 'string' || element.icon === '')
        throw blockError('missing required field', `${at}/icon`);
      checkTextObject(element.text, `${at}/text`, 75, true);
    } else throw blockError(`unsupported type: ${String(element.type)}`, `${at}/type`);
  });
}

/** Texts inside blocks that Slack renders as mrkdwn (where mentions would work). */
export function mrkdwnTexts(blocks: unknown[] | undefined): string[] {
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) {
      if ((value.type === 'mrkdwn' || value.type === 'markdown') && typeof value.text === 'string')
        out.push(value.text);
      Object.values(value).forEach(visit);
    }
  };
  visit(blocks);
  return out;
}
