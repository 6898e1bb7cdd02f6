/**
 * How one answer's posted and updated messages show its Markdown (SlackReply's, issue 39): the
 * blocks that render it (markdown blocks and a table block: blocks.ts, markdown.ts) and the mrkdwn
 * `text` beside them (mrkdwn.ts), the same for every message of the answer.
 */
import type { Block, KnownBlock } from '@slack/types';
import type { OutgoingMessage } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { blocksOf, fallbackTextOf } from './blocks.ts';
import type { TableRendering } from './markdown.ts';
import { slackErrorCode } from './stream.ts';

/** One answer's rendering: its tables as table blocks until Slack refuses one. */
export class AnswerRendering {
  /**
   * How the answer's tables are shown: a table block, until Slack refuses one (`invalid_blocks`);
   * then, for the rest of the answer, monospaced lines in its markdown.
   */
  private tables: TableRendering = 'block';

  constructor(private readonly log: Logger) {}

  /**
   * Sends `message` rendered: `send` gets its blocks (undefined for an edit that names no buttons
   * and shows no text: the message's blocks stay) and its `text`. Where Slack refuses a table
   * block (`invalid_blocks`), sends it once more with its tables as monospaced lines, as the rest
   * of the answer will be.
   * @throws what `send` threw otherwise.
   */
  async send<T>(
    message: OutgoingMessage,
    send: (blocks: Array<KnownBlock | Block> | undefined, text: string) => Promise<T>,
  ): Promise<T> {
    const tables = this.tables;
    const blocks = blocksOf(message, tables) ?? [];
    const text = fallbackTextOf(message, tables);
    try {
      return await send(blocks.length || message.buttons ? blocks : undefined, text);
    } catch (error) {
      if (tables !== 'block' || slackErrorCode(error) !== 'invalid_blocks' || !blocks.some((b) => b.type === 'table'))
        throw error;
      this.tables = 'monospace';
      this.log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'slack refused a table block; showing tables as monospaced text',
      );
      return send(blocksOf(message, 'monospace'), text);
    }
  }
}
