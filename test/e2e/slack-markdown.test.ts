/**
 * End-to-end on Slack (issue 39): an answer's Markdown shown the same whether it streams natively
 * or is posted and updated (native streaming refused, or its startStream budget spent). Posted, it
 * is Block Kit as the fake validates it as Slack does: markdown blocks (standard Markdown), a
 * table block for a table, the mrkdwn `text` beside them; no construct left raw, no mention
 * possible. The whole bot against FakeSlack and FakeService. The workspace's refusal of native
 * streaming is remembered by the bot for an hour, so the test that streams comes first.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { escapeSlack, type FakeSlack, type FakeSlackMessage, mentionsIn } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  streamed: 'C0MDSTREAM',
  posted: 'C0MDPOSTED',
  mentions: 'C0MDMENTION',
  long: 'C0MDLONG',
} as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** An answer as a model writes one: a heading, bold, a link, a list, a table and a code block. */
const ANSWER = [
  '# Release plan',
  '',
  'The **short** version, with the [changelog](https://example.com/changes?a=1&b=2).',
  '',
  '- build the image',
  '- run *every* check',
  '',
  '| Step | Owner | Done |',
  '|:-----|:-----:|-----:|',
  '| Build | **ana** | yes |',
  '| Test | [bo](https://example.com/bo) | `no` |',
  '',
  '```ts',
  'if (a < b && c > d) deploy();',
  '```',
  '',
  '> ~~later~~ maybe',
].join('\n');

/** Mentions the bot in `channel`; resolves with the mention's ts once it is answered. */
async function ask(channel: string, text: string): Promise<{ ts: string; outcome: CommandOutcome }> {
  const event = slack.mentionEvent({ channel, user: 'U0ALICE', text });
  const done = testBot
    .outcomes((o) => o.command === 'mention' && o.conversationId.includes(`:${channel}`))
    .then(([o]) => o!);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack).toMatchObject({ status: 200, ackedInTime: true });
  return { ts: event.ts as string, outcome: await done };
}

/** The bot's messages in `channel`, oldest first. */
const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

type Block = { type: string; text?: string; rows?: unknown[][] };
const blocksOf = (m: FakeSlackMessage) => (m.blocks ?? []) as Block[];
/** The text of a table block's cell (its rich text's text and link elements). */
const cellText = (cell: unknown): string =>
  JSON.stringify(cell)
    .match(/"text":"[^"]*"/g)!
    .map((t) => JSON.parse(`{${t}}`).text as string)
    .join('');
const tableRows = (block: Block) => block.rows!.map((row) => row.map(cellText));

/** Markdown Slack's markdown block leaves raw, and mrkdwn never reads. */
const RAW_IN_MRKDWN = ['**', '](', '# ', '|---|', '|:----'];

/** Checks a posted message shows ANSWER-like Markdown in Slack's form (see the file's comment). */
function expectSlackForm(message: FakeSlackMessage): void {
  const blocks = blocksOf(message);
  const markdown = blocks.filter((b) => b.type === 'markdown').map((b) => b.text!);
  expect(markdown.length).toBeGreaterThanOrEqual(1);
  // Tables are what a markdown block does not render: none is left in one.
  for (const text of markdown) expect(text).not.toMatch(/^\|.*\|$/m);
  // The text beside the blocks is mrkdwn: no standard Markdown left in it.
  for (const raw of RAW_IN_MRKDWN) expect(message.text).not.toContain(raw);
}

describe('Slack answers in Markdown', () => {
  it("posted where native streaming is unavailable, an answer holding a heading, bold, a link, a list, a table and a code block shows each in Slack's form; streamed natively, the same answer is as before", async () => {
    // Streamed natively: the stream carries the Markdown as it came (escaped), as before issue 39.
    service.enqueue('chat', { stream: { text: ANSWER, chunkDelayMs: 10 } });
    const streamed = await ask(CHANNELS.streamed, 'Plan the release.');
    expect(streamed.outcome.ok).toBe(true);
    const [stream, ...notStreamed] = botMessages(CHANNELS.streamed);
    expect(notStreamed).toEqual([]);
    expect(stream).toMatchObject({ via: 'chat.startStream', threadTs: streamed.ts });
    expect(stream!.text).toBe(escapeSlack(ANSWER));
    expect(stream!.stream!.writes.every((w) => w.method.endsWith('Stream'))).toBe(true);
    expect(blocksOf(stream!).filter((b) => b.type === 'markdown' || b.type === 'table')).toEqual([]);

    // The workspace refuses native streaming from now on: the same answer is posted and updated.
    slack.setStreaming({ streaming: false });
    service.enqueue('chat', { stream: { text: ANSWER, chunkDelayMs: 10 } });
    const posted = await ask(CHANNELS.posted, 'Plan the release.');
    expect(posted.outcome.ok).toBe(true);
    const [answer, ...others] = botMessages(CHANNELS.posted);
    expect(others).toEqual([]);
    expect(answer).toMatchObject({ via: 'chat.postMessage', threadTs: posted.ts });
    expect(answer!.revisions.some((r) => r.method === 'chat.update')).toBe(true);
    expectSlackForm(answer!);

    const blocks = blocksOf(answer!);
    expect(blocks.map((b) => b.type).slice(0, 3)).toEqual(['markdown', 'table', 'markdown']);
    const [before, table, after] = blocks as [Block, Block, Block];
    // Heading, bold, link and list: standard Markdown in a markdown block, which renders them.
    expect(before.text).toBe(
      '# Release plan\n\nThe **short** version, with the [changelog](https://example.com/changes?a=1&amp;b=2).\n\n- build the image\n- run *every* check',
    );
    expect(tableRows(table)).toEqual([
      ['Step', 'Owner', 'Done'],
      ['Build', 'ana', 'yes'],
      ['Test', 'bo', 'no'],
    ]);
    expect(JSON.stringify(table.rows![1]![1])).toContain('"style":{"bold":true}');
    expect(JSON.stringify(table.rows![2]![1])).toContain('"type":"link","url":"https://example.com/bo"');
    expect(JSON.stringify(table.rows![2]![2])).toContain('"style":{"code":true}');
    // The code block and the quote, escaped so that `<` can open nothing.
    expect(after.text).toBe('```ts\nif (a &lt; b &amp;&amp; c > d) deploy();\n```\n\n> ~~later~~ maybe');

    // The mrkdwn beside them, for notifications: each construct in Slack's own syntax.
    expect(answer!.text).toContain('*Release plan*');
    expect(answer!.text).toContain(
      'The *short* version, with the <https://example.com/changes?a=1&amp;b=2|changelog>.',
    );
    expect(answer!.text).toContain('• build the image\n• run _every_ check');
    expect(answer!.text).toContain('```\nif (a &lt; b &amp;&amp; c &gt; d) deploy();\n```');
    expect(answer!.text).toContain('> ~later~ maybe');
    expect(answer!.mentions).toEqual([]);
  });

  it('a posted answer whose Markdown holds mentions pings nobody: in paragraphs, links, code and table cells they read as written', async () => {
    const hostile = [
      'Hey <!channel> and <@U0ALICE>, also @here and <!subteam^S0TEAM|team> and &lt;!everyone&gt;.',
      '',
      '[<!here>](https://example.com/<@U0ALICE>) and `<!channel>`',
      '',
      '| who | what |',
      '|---|---|',
      '| <!channel> | **<@U0ALICE>** [<!here>](https://example.com/x) |',
    ].join('\n');
    slack.setStreaming({ streaming: false });
    service.enqueue('chat', { stream: { text: hostile, chunkDelayMs: 10 } });
    const { outcome } = await ask(CHANNELS.mentions, 'Say hi to everyone.');
    expect(outcome.ok).toBe(true);
    const [answer] = botMessages(CHANNELS.mentions);
    expect(answer!.via).toBe('chat.postMessage');
    for (const revision of answer!.revisions) {
      expect(mentionsIn(revision.text)).toEqual([]);
    }
    expect(answer!.mentions).toEqual([]);
    const blocks = blocksOf(answer!);
    const table = blocks.find((b) => b.type === 'table')!;
    // Table cells are rich text: what they hold is shown as written, never read as a mention.
    expect(tableRows(table)).toEqual([
      ['who', 'what'],
      ['<!channel>', '<@U0ALICE> <!here>'],
    ]);
    const markdown = blocks.find((b) => b.type === 'markdown')!.text!;
    expect(markdown).not.toMatch(/<[@!]/);
    // `&` and `<` escaped: no Slack token can open (`>` closes nothing without one, and marks quotes).
    expect(markdown).toContain('Hey &lt;!channel> and &lt;@U0ALICE>, also @here and &lt;!subteam^S0TEAM|team>');
    expect(markdown).toContain('&amp;lt;!everyone&amp;gt;');
    expect(markdown).toContain('`&lt;!channel>`');
    expect(answer!.text).not.toMatch(/<[@!]/);
  });

  it('an answer longer than a message is posted over several, each page ending between blocks: a table cut between its rows starts again with its header', async () => {
    const rows = Array.from(
      { length: 80 },
      (_, i) => `| item ${i} | **${i * 3}** | note number ${i} of the long table |`,
    );
    const long = [
      '## Inventory',
      '',
      'A long paragraph to start with. '.repeat(40).trim(),
      '',
      '| Item | Count | Note |',
      '|---|--:|---|',
      ...rows,
      '',
      'And a **closing** line.',
    ].join('\n');
    slack.setStreaming({ streaming: false });
    service.enqueue('chat', { stream: { text: long, chunkDelayMs: 5 } });
    const { outcome } = await ask(CHANNELS.long, 'List everything.');
    expect(outcome.ok).toBe(true);
    const answers = botMessages(CHANNELS.long);
    expect(answers.length).toBeGreaterThanOrEqual(2);
    const seen: string[] = [];
    for (const message of answers) {
      expectSlackForm(message);
      for (const block of blocksOf(message).filter((b) => b.type === 'table')) {
        const [header, ...body] = tableRows(block);
        expect(header).toEqual(['Item', 'Count', 'Note']);
        seen.push(...body.map((row) => row[0]!));
      }
    }
    // Every row shown once, in order, in a table.
    expect(seen).toEqual(rows.map((_, i) => `item ${i}`));
    const last = blocksOf(answers.at(-1)!).filter((b) => b.type === 'markdown');
    expect(last.at(-1)!.text).toContain('And a **closing** line.');
  });
});
