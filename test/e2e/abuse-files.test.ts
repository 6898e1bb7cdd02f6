/**
 * Files and PDFs, attacked (issue 38, items 1, 2, 3 and 10): real discord.js against FakeDiscord
 * (its CDN answers HTTP ranges) and FakeService, the bot in this process.
 *
 * - A 1 MB PDF whose content stream inflates to 1 GiB of blanks: the PDF worker's resident size,
 *   read every 10 ms from /proc, stays under WORKER_MEMORY_MB, and the answer names the file.
 * - The same of text operators: read only up to the question's budget (decompression stops
 *   there), within the same cap.
 * - A mention with ten such PDFs does not delay another user's image: PDFs have workers of their own.
 * - Ten 20 MiB text files: the CDN sends at most the question's character budget in bytes; at
 *   most MAX_FILES_PER_MESSAGE files are considered, and the "Not used" line stays one short line;
 *   three "Summarize" presses on such a message download at most that budget each.
 * - A file of backticks: its whole part, fences included, within the budget.
 * - Ten files with 1,000-character names: the notes under the answer stay one short line.
 */
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { filesCharBudget } from '../../src/core/media/files.ts';
import { processMemory } from '../../src/core/media/image-processes.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, UserAttachmentOptions } from '../fakes/discord.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import { inflatingPdf } from '../helpers/pdf.ts';
import type { TestBot } from './harness.ts';

/** The memory cap of a worker in these tests, in MiB. */
const WORKER_MEMORY_MB = 384;
/** The history budget (the default), in estimated tokens. */
const HISTORY_TOKEN_BUDGET = 6000;
const GIB = 1024 * 1024 * 1024;

const SUMMARIZE = messageActions.find((a) => a.id === 'summarize_message');
const ALICE = { id: '440000000000000001', username: 'alice' };
const BOB = { id: '440000000000000002', username: 'bob' };

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;
let blankBomb: Buffer;
let textBomb: Buffer;

useE2E(
  {
    discord: {},
    bot: {
      env: {
        DEFAULT_VISION_MODEL: 'fake-vision',
        WORKER_MEMORY_MB: String(WORKER_MEMORY_MB),
        HISTORY_TOKEN_BUDGET: String(HISTORY_TOKEN_BUDGET),
        // Long enough for a cold worker on a busy machine; a PDF that waited behind ten
        // others (15 s each at most) would still pass it.
        IMAGE_PREP_TIMEOUT_MS: '8000',
        // Long enough that the memory cap, not the clock, is what ends a bomb's worker, however
        // busy the machine (a worker at nice 12 inflates slowly beside other test files).
        PDF_TIMEOUT_MS: '90000',
      },
    },
    resetServiceAfterEach: true,
    timeoutMs: 120_000,
  },
  (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  },
);

beforeAll(async () => {
  [blankBomb, textBomb] = await Promise.all([inflatingPdf(GIB, 'blank'), inflatingPdf(GIB, 'text')]);
  // The message commands, registered as an operator registers them.
  await deployCommands({
    token: discord.token,
    applicationId: discord.applicationId,
    apiUrl: discord.apiUrl,
    guildId: discord.guildId,
  });
}, 120_000);

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** Posts a mention by `author` with files and resolves with its outcome, the request the service got, and the bot's answer. */
async function ask(
  channel: FakeChannel,
  text: string,
  attachments: UserAttachmentOptions[],
  author = ALICE,
): Promise<{ outcome: CommandOutcome; content: string | ContentPart[]; answer: string; message: FakeMessage }> {
  const done = testBot.outcomes(
    (o) => o.command === 'mention' && o.conversationId === conversationOf(channel),
    1,
    100_000,
  );
  const message = discord.postUserMessage({
    channelId: channel.id,
    content: `<@${discord.botUser.id}> ${text}`,
    author,
    attachments,
  });
  const [outcome] = await done;
  const request = service
    .chatRequests()
    .filter((r) => JSON.stringify(r.messages.at(-1)?.content).includes(text))
    .at(-1);
  const answers = discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id);
  return {
    outcome: outcome!,
    content: request?.messages.at(-1)?.content ?? '',
    answer: answers.map((m) => m.content).join('\n'),
    message,
  };
}

const textParts = (content: string | ContentPart[]) =>
  Array.isArray(content) ? content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : [content];

/** Runs `work` while reading the PDF workers' resident size every 10 ms; resolves with its result and the largest size seen, in bytes. */
async function watchingPdfWorkers<T>(work: () => Promise<T>): Promise<{ result: T; peak: number; seen: number }> {
  let peak = 0;
  let seen = 0;
  const timer = setInterval(() => {
    for (const pid of testBot.bot.core.pdfs.pids) {
      const memory = processMemory(pid);
      if (!memory) continue;
      seen += 1;
      peak = Math.max(peak, memory.resident);
    }
  }, 10);
  try {
    return { result: await work(), peak, seen };
  } finally {
    clearInterval(timer);
  }
}

describe('PDFs that inflate', { timeout: 150_000 }, () => {
  it('a 1 MB PDF inflating to 1 GiB of blanks: the worker stays under WORKER_MEMORY_MB and the answer names the file', async () => {
    expect(blankBomb.length).toBeLessThan(2 * 1024 * 1024);
    const channel = discord.addChannel('blank-bomb');
    const { result, peak, seen } = await watchingPdfWorkers(() =>
      ask(channel, 'what is in it?', [{ filename: 'bomb.pdf', data: blankBomb, contentType: 'application/pdf' }]),
    );
    expect(seen).toBeGreaterThan(10);
    expect(peak).toBeLessThan(WORKER_MEMORY_MB * 1024 * 1024);
    expect(result.outcome.ok).toBe(true);
    expect(textParts(result.content)).toEqual(['what is in it?']);
    expect(result.answer).toContain(
      `bomb.pdf (needs more than the ${WORKER_MEMORY_MB} MB of memory the bot gives one file`,
    );
  });

  it('a PDF inflating to 1 GiB of text: read up to the budget only, within the same cap', async () => {
    const channel = discord.addChannel('text-bomb');
    const { result, peak } = await watchingPdfWorkers(() =>
      ask(channel, 'summarize', [{ filename: 'lorem.pdf', data: textBomb, contentType: 'application/pdf' }]),
    );
    expect(peak).toBeLessThan(WORKER_MEMORY_MB * 1024 * 1024);
    const [question, part, ...rest] = textParts(result.content);
    expect(question).toBe('summarize');
    expect(rest).toEqual([]);
    expect(part).toMatch(/^File lorem\.pdf \(1 page\):\n```\nlorem ipsum/);
    expect(part!.length).toBeLessThanOrEqual(filesCharBudget(HISTORY_TOKEN_BUDGET, 'summarize'));
    expect(result.answer).toMatch(
      /Read in part: lorem\.pdf \(the first [\d,]+ characters, to fit the conversation's budget\)/,
    );
  });

  it("another user's image is used while a mention with ten inflating PDFs is read", async () => {
    const pdfs = discord.addChannel('ten-pdfs');
    const photos = discord.addChannel('photos');
    const bombs = Array.from({ length: 10 }, (_, i) => ({
      filename: `bomb-${i}.pdf`,
      data: blankBomb,
      contentType: 'application/pdf',
    }));
    const attack = ask(pdfs, 'read all of these', bombs);
    // The PDFs are being read (a PDF worker runs) when the image arrives.
    for (let waited = 0; testBot.bot.core.pdfs.pids.length === 0 && waited < 20_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(testBot.bot.core.pdfs.pids.length).toBeGreaterThan(0);
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#e07030' } })
      .png()
      .toBuffer();
    const photo = await ask(photos, 'what colour is this?', [{ filename: 'orange.png', data: png }], BOB);
    expect(photo.outcome.ok).toBe(true);
    expect(Array.isArray(photo.content) && photo.content.some((p) => p.type === 'image_url')).toBe(true);
    expect(photo.answer).not.toContain('Not used');
    const read = await attack;
    expect(read.outcome.ok).toBe(true);
    // At most MAX_FILES_PER_MESSAGE (5) were read; the rest named, in one bounded line.
    expect(read.answer).toContain('over the limit of 5 files a message');
  });
});

describe('text files', { timeout: 150_000 }, () => {
  it('ten 20 MiB text files: the CDN sends at most the question budget in bytes, and the line under the answer stays short', async () => {
    const channel = discord.addChannel('big-logs');
    const since = discord.downloads.length;
    const files = Array.from({ length: 10 }, (_, i) => ({
      filename: `server-${i}.log`,
      stream: { bytes: 20 * 1024 * 1024 },
      contentType: 'text/plain',
    }));
    const { outcome, content, answer } = await ask(channel, 'why did it crash?', files);
    expect(outcome.ok).toBe(true);
    const budget = filesCharBudget(HISTORY_TOKEN_BUDGET, 'why did it crash?');
    const downloads = discord.downloads.slice(since);
    const bytes = downloads.reduce((sum, d) => sum + d.bytesSent, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(budget);
    const [, part, ...rest] = textParts(content);
    expect(rest).toEqual([]);
    expect(part!.startsWith('File server-0.log:\n')).toBe(true);
    expect(part!.length).toBeLessThanOrEqual(budget);
    const notUsed = answer.split('\n').find((line) => line.includes('Not used:'));
    expect(notUsed).toContain('over the limit of 5 files a message');
    expect(notUsed).toMatch(/and \d+ more\._$/);
    expect(notUsed!.length).toBeLessThan(600);
  });

  it('three "Summarize" presses on a message with ten 20 MiB text files: each downloads at most the budget', async () => {
    const channel = discord.addChannel('summarize-logs');
    const target = discord.postUserMessage({
      channelId: channel.id,
      content: 'the logs from last night',
      author: BOB,
      attachments: Array.from({ length: 10 }, (_, i) => ({
        filename: `night-${i}.log`,
        stream: { bytes: 20 * 1024 * 1024 },
        contentType: 'text/plain',
      })),
    });
    // The files' budget of a question of no text: more than Summarize's question leaves.
    const budget = filesCharBudget(HISTORY_TOKEN_BUDGET, '');
    for (let press = 0; press < 3; press++) {
      const since = discord.downloads.length;
      service.enqueue('chat', { stream: { pieces: [`Summary ${press}.`] } });
      const done = testBot.outcomes(
        (o) => o.command === SUMMARIZE!.id && o.conversationId === conversationOf(channel),
        1,
      );
      discord.dispatchMessageCommand({ command: SUMMARIZE!.name, messageId: target.id, user: ALICE });
      const [outcome] = await done;
      expect(outcome!.ok).toBe(true);
      const bytes = discord.downloads.slice(since).reduce((sum, d) => sum + d.bytesSent, 0);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(budget);
    }
  });

  it('a file of backticks: its part, fences included, within the budget', async () => {
    const channel = discord.addChannel('backticks');
    const ticks = Buffer.from('`'.repeat(40_000));
    const { content } = await ask(channel, 'count them', [{ filename: 'ticks.txt', data: ticks }]);
    const [, part] = textParts(content);
    expect(part).toBeDefined();
    expect(part!.length).toBeLessThanOrEqual(filesCharBudget(HISTORY_TOKEN_BUDGET, 'count them'));
    expect(part!.startsWith('File ticks.txt:\n~~~\n```')).toBe(true);
  });

  it('ten files with 1,000-character names: the notes under the answer are one short line in one message', async () => {
    const channel = discord.addChannel('long-names');
    const files = Array.from({ length: 10 }, (_, i) => ({
      filename: `${String(i).repeat(995)}.docx`,
      data: Buffer.from('PK\u0003\u0004 not read'),
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    }));
    const before = discord.messagesIn(channel.id).length;
    const { answer } = await ask(channel, 'read these', files);
    const posted = discord
      .messagesIn(channel.id)
      .slice(before)
      .filter((m) => m.author.id === discord.botUser.id);
    expect(posted).toHaveLength(1);
    const notUsed = answer.split('\n').find((line) => line.includes('Not used:'));
    expect(notUsed).toMatch(/and 5 more\._$/);
    expect(notUsed!.length).toBeLessThan(1_000);
  });
});
