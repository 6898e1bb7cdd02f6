/**
 * The core's OutgoingMessage as Block Kit (Block Kit reference): an answer's text as markdown
 * blocks (markdown.ts; other text as mrkdwn sections), image links as `image`
 * blocks, each card as a `header` (≤ 150 characters), a description and one `section` per
 * field (mrkdwn, ≤ 3,000 characters), a `context` footer; buttons as one `actions` block
 * whose `action_id`s are the buttons' ids, and a 👍 / 👎 pair as a `feedback_buttons` element in
 * a `context_actions` block under it. Text in mrkdwn is escaped (no mentions can form).
 */

import type { Block, KnownBlock } from '@slack/types';
import { english, type Words } from '../../core/i18n/words.ts';
import type { Button, OutgoingMessage, TextForm } from '../../core/platform.ts';
import { markdownBlocks, type TableRendering } from './markdown.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { mrkdwnOf } from './mrkdwn.ts';
import { escapeSlackText } from './text.ts';
import { withMention } from './writes.ts';

/**
 * Blocks of a message; undefined when it has none (plain text). At most 50 (Slack's limit).
 * @param markdown how an answer's text is shown (SlackReply: its Markdown as markdown blocks,
 *   tables as `markdown` says: markdown.ts; or its mrkdwn in sections), and then there are
 *   blocks whenever there is text;
 *   without it, as mrkdwn `section` blocks above the message's other blocks, and none for text alone.
 */
export function blocksOf(
  message: OutgoingMessage,
  markdown?: AnswerForm,
  words: Words = english,
): Array<KnownBlock | Block> | undefined {
  const blocks: KnownBlock[] = [];
  const hasStructure = Boolean(message.cards?.length || message.imageLinks?.length || message.buttons?.length);
  if (markdown && message.mentionUser) blocks.push(...mentionBlocks(message));
  else if (markdown === 'mrkdwn') blocks.push(...mrkdwnSections(message.content));
  else if (markdown) blocks.push(...markdownBlocks(message.content, markdown));
  else if (hasStructure) blocks.push(...sectionBlocks(message.content));
  else return undefined;
  for (const link of (message.imageLinks ?? []).slice(0, 10)) {
    blocks.push({
      type: 'image',
      image_url: link.url,
      alt_text: (link.alt || words.t('slack.blocks.image_alt')).slice(0, 2000),
    });
  }
  for (const card of message.cards ?? []) {
    blocks.push({ type: 'header', text: { type: 'plain_text', text: card.title.slice(0, 150) } });
    if (card.description)
      blocks.push({
        type: 'section',
        text: { type: 'mrkdwn', text: escapeSlackText(card.description).slice(0, 3000) },
      });
    for (const field of card.fields) {
      blocks.push({
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${escapeSlackText(field.name)}*\n${escapeSlackText(field.value)}`.slice(0, 3000),
        },
      });
    }
    if (card.footer)
      blocks.push({
        type: 'context',
        elements: [{ type: 'mrkdwn', text: escapeSlackText(card.footer).slice(0, 3000) }],
      });
  }
  const actions = buttonsBlock(message.buttons ?? [], words);
  return [...blocks.slice(0, 50 - actions.length), ...actions];
}

/**
 * Buttons (at most 5) as one `actions` block whose `action_id`s are the buttons' ids, and the
 * feedback buttons among them (a 👍 and a 👎: Button.feedback) as a `feedback_buttons` element in
 * a `context_actions` block after it; none for no buttons. Also what a native stream ends with
 * (chat.stopStream's `blocks`: Regenerate, 👍 / 👎).
 */
export function buttonsBlock(list: readonly Button[], words: Words = english): KnownBlock[] {
  const buttons = list.filter((b) => !b.feedback).slice(0, 5);
  const feedback = feedbackBlock(list, words);
  if (!buttons.length) return feedback;
  return [
    {
      type: 'actions',
      elements: buttons.map((b) => ({
        type: 'button' as const,
        action_id: b.id.slice(0, 255),
        text: { type: 'plain_text' as const, text: b.label.slice(0, 75) },
        value: b.id.slice(0, 2000),
        ...(b.style === 'primary' || b.style === 'danger' ? { style: b.style } : {}),
      })),
    },
    ...feedback,
  ];
}

/**
 * A 👍 and a 👎 (Button.feedback) as Block Kit's `feedback_buttons` element (in a
 * `context_actions` block: the only block that takes it): its `action_id` the pair's, each
 * button with its text (≤ 75 characters), value (≤ 2,000) and an accessibility label (≤ 75).
 * None without both.
 */
function feedbackBlock(list: readonly Button[], words: Words): KnownBlock[] {
  const positive = list.find((b) => b.feedback?.positive === true)?.feedback;
  const negative = list.find((b) => b.feedback?.positive === false)?.feedback;
  if (!positive || !negative) return [];
  const button = (text: string, value: string, label: string) => ({
    text: { type: 'plain_text' as const, text },
    value: value.slice(0, 2000),
    accessibility_label: label,
  });
  return [
    {
      type: 'context_actions',
      elements: [
        {
          type: 'feedback_buttons',
          action_id: positive.actionId.slice(0, 255),
          positive_button: button('👍', positive.value, words.t('slack.blocks.good_answer')),
          negative_button: button('👎', negative.value, words.t('slack.blocks.bad_answer')),
        },
      ],
    },
  ];
}

/**
 * How an answer's Markdown is shown (SlackReply): markdown blocks with its tables as `tables`
 * says (markdown.ts), or, where Slack refuses those, its mrkdwn (mrkdwn.ts) in `section` blocks.
 */
export type AnswerForm = TableRendering | 'mrkdwn';

/** An answer's Markdown in mrkdwn, in `section` blocks (the last resort of AnswerRendering). */
function mrkdwnSections(markdown: string): KnownBlock[] {
  return sectionsOf(mrkdwnOf(markdown, SLACK_MESSAGE_LIMITS.maxChars)).map((piece) => ({
    type: 'section',
    text: { type: 'mrkdwn', text: piece },
  }));
}

/** A message's text as `section` blocks (mrkdwn, escaped), to show it above other blocks. */
export function sectionBlocks(text: string): KnownBlock[] {
  return sectionsOf(escapeSlackText(text)).map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: piece } }));
}

/** Longest mrkdwn text of a section block, in characters. */
const SECTION_CHARS = 3000;

/**
 * Escaped text cut into pieces that fit section blocks (3,000 characters each), at a line
 * break or space where one is near, never inside an entity such as `&amp;`.
 */
function sectionsOf(escaped: string): string[] {
  const pieces: string[] = [];
  let rest = escaped;
  while (rest.trim() !== '') {
    if (rest.length <= SECTION_CHARS) {
      pieces.push(rest);
      break;
    }
    let cut = Math.max(rest.lastIndexOf('\n', SECTION_CHARS), rest.lastIndexOf(' ', SECTION_CHARS));
    if (cut < SECTION_CHARS / 2) cut = SECTION_CHARS;
    const amp = rest.lastIndexOf('&', cut - 1);
    if (amp > cut - 6 && !rest.slice(amp, cut).includes(';')) cut = amp;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  return pieces;
}

/**
 * A message of the bot's own words that notifies one user (OutgoingMessage.mentionUser, a long
 * answer's notice): its text in mrkdwn after the mention (`withMention`), in a section block, so
 * that the mention shows where the message is read and notifies that user alone.
 */
function mentionBlocks(message: OutgoingMessage): KnownBlock[] {
  const text = withMention(message, mrkdwnOf(message.content, SECTION_CHARS - 64));
  return text.trim() ? [{ type: 'section', text: { type: 'mrkdwn', text } }] : [];
}

/**
 * The `text` Slack requires beside blocks (notifications, screen readers): the content or the
 * first title, escaped; with `markdown`, an answer's Markdown content in mrkdwn (mrkdwn.ts),
 * within a message's characters. Either way after the mention of a `mentionUser` (writes.ts).
 */
export function fallbackTextOf(message: OutgoingMessage, markdown?: AnswerForm, words: Words = english): string {
  if (markdown && message.content)
    return withMention(message, mrkdwnOf(message.content, SLACK_MESSAGE_LIMITS.maxChars - 64));
  return withMention(
    message,
    escapeSlackText(
      message.content ||
        message.cards?.[0]?.title ||
        (message.imageLinks?.length ? words.t('slack.blocks.image_results') : ''),
    ),
  );
}

/**
 * A modal (Slack's view object, for views.open) with one required multiline input whose
 * `block_id` and `action_id` are `ids.input`; its submission comes back as `ids.callback` with
 * `ids.metadata` (≤ 3,000 characters) as `private_metadata`.
 */
export function oneFieldModal(
  form: Omit<TextForm, 'id'>,
  ids: { callback: string; input: string; metadata: string },
  words: Words = english,
) {
  return {
    type: 'modal' as const,
    callback_id: ids.callback,
    private_metadata: ids.metadata,
    title: { type: 'plain_text' as const, text: form.title },
    submit: { type: 'plain_text' as const, text: form.submit },
    close: { type: 'plain_text' as const, text: words.t('slack.blocks.cancel') },
    blocks: [
      {
        type: 'input',
        block_id: ids.input,
        label: { type: 'plain_text' as const, text: form.label },
        element: {
          type: 'plain_text_input',
          action_id: ids.input,
          multiline: true,
          max_length: form.maxLength,
          placeholder: { type: 'plain_text' as const, text: form.placeholder },
        },
      },
    ],
  };
}

/** Slack's conversation ids (`C0123ABC`, `D…`, `G…`), as a modal's metadata may carry them. */
const CONVERSATION_ID = /^[CDG][A-Z0-9]{1,20}$/;

/** Whether `value` is a Slack conversation id (a fixed pattern without repetition of groups: linear). */
export function isConversationId(value: unknown): value is string {
  return typeof value === 'string' && CONVERSATION_ID.test(value);
}

/**
 * A modal's `private_metadata` read back as what {@link oneFieldModal}'s callers put there (a JSON
 * object): it comes back from Slack, signed, but is read as any input is, at most 3,000
 * characters (Slack's bound) before parsing. @returns its fields, or `{}` for anything else.
 */
export function readMetadata(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text.length > 3000) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
