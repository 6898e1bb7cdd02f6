/**
 * The fake's Block Kit checks for markdown and table blocks (blocks.ts, table-blocks.ts): refused
 * as Slack refuses, `invalid_blocks` naming the JSON pointer.
 */
import { describe, expect, it } from 'vitest';
import { parseBlocks } from './blocks.ts';
import { richTextMentions } from './table-blocks.ts';
import { SlackApiError } from './wire.ts';

const cell = (text: string) => ({
  type: 'rich_text',
  elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }],
});
const tableOf = (rows: number, columns: number, text = 'x') => ({
  type: 'table',
  rows: Array.from({ length: rows }, () => Array.from({ length: columns }, () => cell(text))),
});

/** The refusal parseBlocks throws for `blocks`: its error and its message's pointer. */
function refusal(blocks: unknown[]): { error: string; message: string } {
  try {
    parseBlocks(blocks);
  } catch (error) {
    expect(error).toBeInstanceOf(SlackApiError);
    const { error: code, extra } = error as SlackApiError;
    const messages = (extra.response_metadata as { messages: string[] }).messages;
    return { error: code, message: messages[0]! };
  }
  throw new Error('accepted');
}

describe('fake Slack: markdown and table blocks', () => {
  it('accepts a table of 100 rows of 20 rich text or raw text cells, with column settings', () => {
    const table = { ...tableOf(100, 20), column_settings: [{ align: 'right', is_wrapped: true }, null] };
    expect(parseBlocks([{ type: 'markdown', text: 'x' }, table])).toHaveLength(2);
    expect(parseBlocks([{ type: 'table', rows: [[{ type: 'raw_text', text: 'a' }]] }])).toHaveLength(1);
  });

  it('refuses what Slack refuses: a second table, 101 rows, 21 cells, an empty cell, over 10,000 characters, a bad alignment', () => {
    expect(refusal([tableOf(1, 1), tableOf(1, 1)])).toMatchObject({
      error: 'invalid_blocks',
      message: expect.stringContaining('only_one_table_allowed [json-pointer:/blocks/1]'),
    });
    expect(refusal([tableOf(101, 1)]).message).toContain('[json-pointer:/blocks/0/rows]');
    expect(refusal([tableOf(1, 21)]).message).toContain('[json-pointer:/blocks/0/rows/0]');
    expect(refusal([{ type: 'table', rows: [[{ type: 'raw_text', text: '' }]] }]).message).toContain(
      '/blocks/0/rows/0/0/text',
    );
    expect(refusal([tableOf(1, 1, '')]).message).toContain('/rows/0/0/elements/0/elements/0/text');
    expect(refusal([tableOf(2, 2, 'x'.repeat(2501))]).message).toContain('at most 10000 characters');
    expect(refusal([{ ...tableOf(1, 1), column_settings: [{ align: 'middle' }] }]).message).toContain(
      '/blocks/0/column_settings/0/align',
    );
    expect(refusal([{ type: 'table', rows: [[{ type: 'heading' }]] }]).message).toContain('unsupported type: heading');
  });

  it("counts the markdown blocks' text together: 12,000 characters a payload", () => {
    const half = { type: 'markdown', text: 'x'.repeat(6000) };
    expect(parseBlocks([half, half])).toHaveLength(2);
    expect(refusal([half, half, { type: 'markdown', text: 'y' }]).message).toContain('[json-pointer:/blocks/2/text]');
    expect(refusal([{ type: 'markdown', text: '' }]).message).toContain('/blocks/0/text');
  });

  it("counts rich text's user, usergroup and broadcast elements as the mentions they are; text elements as text", () => {
    const blocks = [
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'text', text: '<@U1> <!channel>' },
              { type: 'user', user_id: 'U2' },
              { type: 'broadcast', range: 'here' },
              { type: 'usergroup', usergroup_id: 'S1' },
            ],
          },
        ],
      },
    ];
    expect(parseBlocks(blocks)).toHaveLength(1);
    expect(richTextMentions(blocks)).toEqual(['<@U2>', '<!here>', '<!subteam^S1>']);
  });
});
