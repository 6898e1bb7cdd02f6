/**
 * End-to-end, files as context (issue 19, item 3): text files, source code, CSV, logs and PDFs
 * attached to a mention reach the service as text parts of the question (`File <name>:` and
 * the content in a fence), PDFs by their text (unpdf, in the bot's worker processes); what was
 * cut or not used is said in the warning lines under the answer; the history keeps a note of
 * the files, never their content. Real discord.js and Bolt against FakeDiscord, FakeSlack and
 * FakeService; one bot serves the file, each test in a channel of its own.
 */

import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, PostUserMessageOptions } from '../fakes/discord.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { imageOnlyPdf, textPdf } from '../helpers/pdf.ts';
import type { TestBot } from './harness.ts';

const SLACK_CHANNEL = 'C0FILES';
/** Characters read of one file (MAX_FILE_CHARS), set here so that the 5 MB log is cut by it. */
const MAX_FILE_CHARS = 100_000;

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    discord: {},
    slack: { channels: [{ id: SLACK_CHANNEL, name: 'files' }] },
    // A budget large enough that the per-file cap is the one that cuts the log.
    bot: { env: { MAX_FILE_CHARS: String(MAX_FILE_CHARS), HISTORY_TOKEN_BUDGET: '100000' } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, discord, slack, bot: testBot, botUrl } = e2e);
  },
);

const discordConversation = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** Posts a user's message mentioning the bot and waits until the bot has answered it. */
async function post(
  channel: FakeChannel,
  text: string,
  attachments: PostUserMessageOptions['attachments'],
): Promise<{ message: FakeMessage; outcome: CommandOutcome }> {
  const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === discordConversation(channel), 1);
  const message = discord.postUserMessage({
    channelId: channel.id,
    content: `<@${discord.botUser.id}> ${text}`,
    attachments,
  });
  const [outcome] = await done;
  return { message, outcome: outcome! };
}

/** Chat request bodies received from now on. */
function chatRequestsFrom(): () => ReturnType<FakeService['chatRequests']> {
  const before = service.chatRequests().length;
  return () => service.chatRequests().slice(before);
}

/** The text parts of a message's content. */
function textParts(content: string | ContentPart[] | undefined): string[] {
  if (!Array.isArray(content)) return [];
  return content.filter((p): p is { type: 'text'; text: string } => p.type === 'text').map((p) => p.text);
}

/** The bot's last message in a Discord channel. */
function lastAnswer(channelId: string): FakeMessage {
  return discord
    .messagesIn(channelId)
    .filter((m) => m.author.id === discord.botUser.id)
    .at(-1)!;
}

const PYTHON = 'def area(r):\n    """Area of a circle."""\n    return 3.14159 * r * r\n\nprint(area(2))\n';
const CSV = 'city,population\nLyon,522969\nNantes,320732\n';
const PDF_PAGES = ['Quarterly report page one: revenue grew', 'Page two lists the costs (rent)', 'Page three: outlook'];

describe('files as context', () => {
  it('a .py, a .csv and a 3-page PDF attached to one Discord mention reach the service as text parts with their content', async () => {
    const channel = discord.addChannel('files-three');
    service.enqueue('chat', { stream: { pieces: ['Read them all.'] } });
    const requests = chatRequestsFrom();
    const { outcome } = await post(channel, 'what do these say?', [
      { filename: 'area.py', contentType: 'text/x-python; charset=utf-8', data: Buffer.from(PYTHON) },
      { filename: 'cities.csv', contentType: 'text/csv; charset=utf-8', data: Buffer.from(CSV) },
      { filename: 'report.pdf', contentType: 'application/pdf', data: textPdf(PDF_PAGES) },
    ]);
    expect(outcome.ok).toBe(true);

    expect(requests()).toHaveLength(1);
    const last = requests()[0]!.messages.at(-1)!;
    expect(last.role).toBe('user');
    const parts = textParts(last.content);
    expect(parts).toHaveLength(4);
    expect(parts[0]).toBe('what do these say?');
    expect(parts[1]).toBe(`File area.py:\n\`\`\`\n${PYTHON}\`\`\``);
    expect(parts[2]).toBe(`File cities.csv:\n\`\`\`\n${CSV}\`\`\``);
    // The PDF's text, page by page in order.
    expect(parts[3]).toMatch(/^File report\.pdf \(3 pages\):\n```\n/);
    let at = 0;
    for (const page of PDF_PAGES) {
      const found = parts[3]!.indexOf(page, at);
      expect(found, page).toBeGreaterThan(at);
      at = found;
    }
    // Nothing was skipped or cut: the answer is alone.
    expect(lastAnswer(channel.id).content).toBe('Read them all.');
    // The history notes the files, without their content.
    expect(await testBot.bot.core.history.asChatMessages(discordConversation(channel))).toEqual([
      { role: 'user', content: 'what do these say?\n[3 files: area.py, cities.csv, report.pdf]' },
      { role: 'assistant', content: 'Read them all.' },
    ]);
  });

  it('a 5 MB log is cut to MAX_FILE_CHARS and the warning under the answer says so', async () => {
    const channel = discord.addChannel('files-log');
    const line = (i: number) => `2024-05-01T10:00:00Z INFO request ${String(i).padStart(8, '0')} served in 12 ms\n`;
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 5 * 1024 * 1024; i++) {
      lines.push(line(i));
      size += line(i).length;
    }
    const log = lines.join('');
    service.enqueue('chat', { stream: { pieces: ['All requests were fast.'] } });
    const requests = chatRequestsFrom();
    const { outcome } = await post(channel, 'any slow requests?', [{ filename: 'server.log', data: Buffer.from(log) }]);
    expect(outcome.ok).toBe(true);

    const parts = textParts(requests()[0]!.messages.at(-1)!.content);
    expect(parts).toHaveLength(2);
    const body = parts[1]!.replace(/^File server\.log:\n```\n/, '').replace(/\n?```$/, '');
    expect(body.length).toBeLessThanOrEqual(MAX_FILE_CHARS);
    expect(body.length).toBeGreaterThan(MAX_FILE_CHARS - 200);
    expect(log.startsWith(body)).toBe(true);
    const [answer, warnings] = lastAnswer(channel.id).content.split('\n\n');
    expect(answer).toBe('All requests were fast.');
    expect(warnings).toContain('⚠️');
    expect(warnings).toMatch(/server\.log \(the first 100,000 characters\)/);
  });

  it('names a PDF without a text layer in the warning and answers the question', async () => {
    const channel = discord.addChannel('files-scan');
    service.enqueue('chat', { stream: { pieces: ['I cannot see it.'] } });
    const requests = chatRequestsFrom();
    const { outcome } = await post(channel, 'what does the scan say?', [
      { filename: 'scan.pdf', contentType: 'application/pdf', data: imageOnlyPdf(2) },
    ]);
    expect(outcome.ok).toBe(true);
    expect(requests()[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'what does the scan say?' });
    const [answer, warning] = lastAnswer(channel.id).content.split('\n\n');
    expect(answer).toBe('I cannot see it.');
    expect(warning).toMatch(/scan\.pdf \(has no text layer/);
  });

  it('one Slack mention with a text file: its content reaches the service as a text part', async () => {
    const notes = 'Meeting notes\n- ship on Friday\n- Bob owns the release\n';
    const file = slack.addUserFile({ name: 'notes.txt', mimetype: 'text/plain', data: Buffer.from(notes) });
    const event = slack.mentionEvent({ channel: SLACK_CHANNEL, user: 'U0ALICE', text: 'who owns it?', files: [file] });
    service.enqueue('chat', { stream: { pieces: ['Bob.'] } });
    const requests = chatRequestsFrom();
    const done = testBot.outcomes(
      (o) => o.command === 'mention' && o.conversationId === `slack:${slack.teamId}:${SLACK_CHANNEL}:${event.ts}`,
    );
    const ack = await slack.sendEvent(botUrl, event);
    expect(ack.status).toBe(200);
    const [outcome] = await done;
    expect(outcome!.ok).toBe(true);
    const parts = textParts(requests()[0]!.messages.at(-1)!.content);
    expect(parts).toEqual(['who owns it?', `File notes.txt:\n\`\`\`\n${notes}\`\`\``]);
  });
});
