/**
 * How one answer's posted and updated messages show its Markdown (SlackReply's, issue 39): the
 * blocks that render it (markdown blocks and a table block: blocks.ts, markdown.ts) and the mrkdwn
 * `text` beside them (mrkdwn.ts), the same for every message of the answer; simpler forms where
 * Slack refuses those blocks, so that a refusal never loses the answer.
 */

import type { Block, KnownBlock } from '@slack/types';
import { english, type Words } from '../../core/i18n/words.ts';
import type { OutgoingMessage } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { type AnswerForm, blocksOf, fallbackTextOf } from './blocks.ts';
import { slackErrorCode } from './errors.ts';

/** One answer's rendering: its tables as table blocks until Slack refuses one. */
export class AnswerRendering {
  /**
   * How the answer is shown: markdown blocks and a table block; where Slack refuses the blocks
   * (`invalid_blocks`), for the rest of the answer, its tables as monospaced lines, then (refused
   * again, or without a table) its mrkdwn in section blocks.
   */
  private form: AnswerForm = 'block';

  /** @param words the words of the answer's place (its feedback buttons' labels, an image's alt text). */
  constructor(
    private readonly log: Logger,
    private readonly words: Promise<Words> = Promise.resolve(english),
  ) {}

  /**
   * Sends `message` rendered: `send` gets its blocks (undefined for an edit that names no buttons
   * and shows no text: the message's blocks stay) and its `text`. Where Slack refuses the blocks
   * (`invalid_blocks`), sends it again in the next form (see {@link form}), kept for the rest of
   * the answer.
   * @throws what `send` threw otherwise, or in the last form.
   */
  async send<T>(
    message: OutgoingMessage,
    send: (blocks: Array<KnownBlock | Block> | undefined, text: string) => Promise<T>,
  ): Promise<T> {
    const words = await this.words;
    for (;;) {
      const form = this.form;
      const blocks = blocksOf(message, form, words) ?? [];
      try {
        return await send(blocks.length || message.buttons ? blocks : undefined, fallbackTextOf(message, form, words));
      } catch (error) {
        const next = nextForm(form, blocks, error);
        if (slackErrorCode(error) !== 'invalid_blocks' || !next) throw error;
        this.form = next;
        this.log.warn(
          { err: error instanceof Error ? error.message : String(error), form: next },
          'slack refused the blocks of an answer; showing it in a simpler form',
        );
      }
    }
  }
}

/**
 * The form after `form` once Slack refused `blocks`, by the block its refusal names (its
 * `response_metadata.messages` carry a JSON pointer, `[json-pointer:/blocks/<n>…]`): a table
 * block, then its tables monospaced; a markdown block, then mrkdwn sections. Undefined for a
 * refusal of another block (an image, a button): that is not the answer's rendering.
 */
function nextForm(form: AnswerForm, blocks: ReadonlyArray<KnownBlock | Block>, error: unknown): AnswerForm | undefined {
  const refused = refusedType(error, blocks);
  const hasTable = blocks.some((b) => b.type === 'table');
  if (form === 'block' && (refused === 'table' || (refused === undefined && hasTable))) return 'monospace';
  if (form !== 'mrkdwn' && refused === 'markdown') return 'mrkdwn';
  return undefined;
}

/** The type of the block a Slack refusal's first JSON pointer names; undefined when it names none. */
function refusedType(error: unknown, blocks: ReadonlyArray<KnownBlock | Block>): string | undefined {
  const messages = (error as { data?: { response_metadata?: { messages?: unknown } } } | undefined)?.data
    ?.response_metadata?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (const message of messages) {
    if (typeof message !== 'string') continue;
    const at = message.indexOf('[json-pointer:/blocks/');
    if (at < 0) continue;
    const index = Number.parseInt(message.slice(at + '[json-pointer:/blocks/'.length), 10);
    return Number.isInteger(index) ? blocks[index]?.type : undefined;
  }
  return undefined;
}
