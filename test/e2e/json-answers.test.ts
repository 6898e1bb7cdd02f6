/**
 * JSON-mode answers longer than MAX_ANSWER_CHARS (issue 18, item 1), end to end: the whole
 * answer is parsed (§4.1 JSON mode rule 3), not the part shown in messages, so a valid JSON
 * document of 30,000 characters comes pretty-printed as `answer.json` with a one-line summary,
 * and is never called "not valid JSON"; on Discord and on Slack.
 */
import { describe, expect, it } from 'vitest';
import { REPLACED_PAGE } from '../../src/core/delivery/answer-pages.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { answersIn, shownMarkdown } from './slack-checks.ts';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    discord: {},
    slack: {
      channels: [{ id: 'C0JSON', name: 'json' }],
      rateLimits: { postMessage: { perSecond: 50, burst: 50 }, chatUpdate: { limit: 1000, windowMs: 60_000 } },
    },
    bot: {},
  },
  (e2e) => {
    ({ service, discord, slack, bot: testBot, botUrl } = e2e);
  },
);

/** A valid JSON document of exactly `chars` characters (no whitespace, so its pretty form is longer). */
function jsonOf(chars: number): string {
  const items: Array<{ id: number; name: string }> = [];
  let text = '';
  for (let id = 0; ; id++) {
    items.push({ id, name: `item number ${id}` });
    const next = JSON.stringify({ items, pad: '' });
    if (next.length > chars) break;
    text = next;
  }
  items.pop();
  const padded = JSON.stringify({ items, pad: 'x'.repeat(chars - text.length) });
  expect(padded.length).toBe(chars);
  return padded;
}

const answer = jsonOf(30_000);
const pretty = JSON.stringify(JSON.parse(answer), null, 2);
const summary = `The JSON answer is ${pretty.length.toLocaleString('en-US')} characters: it is in answer.json.`;
/** Pieces of 1,000 characters, one chunk each (80 ms apart: the raw JSON streams into several messages first). */
const pieces = Array.from({ length: answer.length / 1000 }, (_, i) => answer.slice(i * 1000, (i + 1) * 1000));

describe('a 30,000-character valid JSON answer (MAX_ANSWER_CHARS 20,000)', () => {
  it('on Discord: comes pretty-printed as answer.json with a one-line summary, never "not valid JSON"', async () => {
    const channel = discord.addChannel('json-long');
    discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 80 } });
    const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel.id}`));
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'all the items as JSON', json: true },
      channelId: channel.id,
    });
    const [outcome] = await done;
    expect(outcome!.ok).toBe(true);
    expect(service.chatRequests().at(-1)).toMatchObject({ response_format: 'json' });
    const messages = interaction.messages.filter((m) => !m.ephemeral);
    expect(messages.every((m) => !/not valid JSON/.test(m.content))).toBe(true);
    expect(messages[0]!.content).toBe(summary);
    const files = messages.flatMap((m) => m.attachments);
    expect(files.map((f) => f.filename)).toEqual(['answer.json']);
    expect(files[0]!.data.toString('utf8')).toBe(pretty);
    expect(files[0]!.contentType).toMatch(/^application\/json/);
    // The raw JSON streamed into several messages before it was parsed: none keeps a fragment of it.
    const later = messages.slice(1).filter((m) => m.attachments.length === 0);
    expect(later.length).toBeGreaterThan(0);
    expect(later.map((m) => m.content)).toEqual(later.map(() => REPLACED_PAGE));
  }, 60_000);

  it('on Slack: the same, in the /chat question thread', async () => {
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 80 } });
    const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(':C0JSON'));
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'all the items --json', channel_id: 'C0JSON' });
    const [outcome] = await done;
    expect(outcome!.ok).toBe(true);
    const texts = answersIn(slack, 'C0JSON').map(shownMarkdown);
    expect(texts.every((t) => !/not valid JSON/.test(t))).toBe(true);
    expect(texts[0]).toBe(summary);
    expect(texts.slice(1).every((t) => t === REPLACED_PAGE || t === '')).toBe(true);
    const files = [...slack.files.values()];
    expect(files.map((f) => f.filename)).toEqual(['answer.json']);
    expect(files[0]!.data!.toString('utf8')).toBe(pretty);
  }, 60_000);
});
