/**
 * End-to-end, the caps on reading a PDF (issue 19, item 3): `MAX_PDF_PAGES` (set to 2 here)
 * bounds the pages read, and the warning line under the answer says which were; and
 * `PDF_TIMEOUT_MS` bounds the time: a PDF whose worker does not answer by then is named as not
 * read in time, the question is answered without it, the worker is killed and the next PDF gets
 * a new one. "Does not answer" is made certain, whatever this machine's speed: the pool's only
 * worker is stopped (SIGSTOP) before the PDF is sent to it, as test/core/image-pool.test.ts does
 * for images. Real discord.js against FakeDiscord and FakeService; PDFs from test/helpers/pdf.ts.
 */

import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord, FakeMessage } from '../fakes/discord.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import { textPdf } from '../helpers/pdf.ts';
import type { TestBot } from './harness.ts';

/** Pages read of a PDF (MAX_PDF_PAGES). */
const MAX_PDF_PAGES = 2;

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E(
  {
    discord: {},
    bot: {
      env: {
        MAX_PDF_PAGES: String(MAX_PDF_PAGES),
        // Long enough for a PDF read by a worker that starts cold on a busy machine; the stopped
        // worker's PDF waits all of it.
        PDF_TIMEOUT_MS: '8000',
        // One PDF worker: the stopped one is the one the next PDF is sent to.
        PDF_WORKERS: '1',
      },
    },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  },
);

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** Posts a mention with one PDF and waits until the bot has answered it. @returns the outcome, the request the service got and the answer's text. */
async function ask(
  channel: FakeChannel,
  text: string,
  pdf: { filename: string; data: Buffer },
): Promise<{ outcome: CommandOutcome; parts: string[]; answer: string }> {
  service.enqueue('chat', { stream: { pieces: [`Answer to: ${text}`] } });
  const before = service.chatRequests().length;
  const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationOf(channel), 1);
  discord.postUserMessage({
    channelId: channel.id,
    content: `<@${discord.botUser.id}> ${text}`,
    attachments: [{ ...pdf, contentType: 'application/pdf' }],
  });
  const [outcome] = await done;
  const requests = service.chatRequests().slice(before);
  expect(requests).toHaveLength(1);
  const content = requests[0]!.messages.at(-1)!.content;
  const parts = Array.isArray(content)
    ? content.filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text').map((p) => p.text)
    : [String(content)];
  return { outcome: outcome!, parts, answer: lastAnswer(channel.id).content };
}

/** The bot's last message in a channel. */
function lastAnswer(channelId: string): FakeMessage {
  return discord
    .messagesIn(channelId)
    .filter((m) => m.author.id === discord.botUser.id)
    .at(-1)!;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('PDF caps', () => {
  it('a PDF of more pages than MAX_PDF_PAGES: only the first pages reach the service, and the line under the answer says so', async () => {
    const channel = discord.addChannel('pdf-pages');
    const pages = Array.from({ length: 5 }, (_, i) => `Chapter ${i + 1} says fact number ${(i + 1) * 111}`);
    const { outcome, parts, answer } = await ask(channel, 'what does the book say?', {
      filename: 'book.pdf',
      data: textPdf(pages),
    });
    expect(outcome.ok).toBe(true);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe('what does the book say?');
    expect(parts[1]).toMatch(new RegExp(`^File book\\.pdf \\(${MAX_PDF_PAGES} pages\\):\\n\`\`\`\\n`));
    for (const page of pages.slice(0, MAX_PDF_PAGES)) expect(parts[1]).toContain(page);
    for (const page of pages.slice(MAX_PDF_PAGES)) expect(parts[1]).not.toContain(page);
    const [said, warning, ...rest] = answer.split('\n\n');
    expect(said).toBe('Answer to: what does the book say?');
    expect(warning).toBe(`_⚠️ Read in part: book.pdf (the first ${MAX_PDF_PAGES} of 5 pages)._`);
    expect(rest).toEqual([]);
  });

  it('a PDF not read within PDF_TIMEOUT_MS: the answer comes, the line names it, its worker is replaced and the next PDF is read', async () => {
    const channel = discord.addChannel('pdf-timeout');
    const pool = testBot.bot.core.pdfs;
    // A PDF read first: the pool's one worker is started and waits, idle, for the next job.
    const first = await ask(channel, 'first?', { filename: 'first.pdf', data: textPdf(['The first PDF is fine']) });
    expect(first.parts[1]).toContain('The first PDF is fine');
    expect(pool.pids).toHaveLength(1);
    const [stopped] = pool.pids;
    process.kill(stopped!, 'SIGSTOP');

    const stuck = await ask(channel, 'and this one?', {
      filename: 'stuck.pdf',
      data: textPdf(['Text that never arrives']),
    });
    expect(stuck.outcome.ok).toBe(true);
    // Answered without the PDF, which the line under the answer names.
    expect(stuck.parts).toEqual(['and this one?']);
    const [said, warning] = stuck.answer.split('\n\n');
    expect(said).toBe('Answer to: and this one?');
    expect(warning).toBe('_⚠️ Not used: stuck.pdf (took too long to read)._');
    // Its worker was killed (SIGKILL ends a stopped process too), then reaped.
    for (let waited = 0; alive(stopped!) && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(alive(stopped!)).toBe(false);
    expect(pool.pids).not.toContain(stopped);

    // The next PDF gets a new worker and is read.
    const after = await ask(channel, 'and now?', { filename: 'after.pdf', data: textPdf(['Read by a new worker']) });
    expect(after.outcome.ok).toBe(true);
    expect(after.parts).toHaveLength(2);
    expect(after.parts[1]).toContain('Read by a new worker');
    expect(after.answer).toBe('Answer to: and now?');
    expect(pool.pids).toHaveLength(1);
    expect(pool.pids).not.toContain(stopped);
  });
});
