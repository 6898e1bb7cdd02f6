/**
 * The event loop while a 1 MB `/chat json:true` answer streams (issue 16): an answer that opened
 * a code fence and then streamed whitespace froze the loop for every user (the fence regex of
 * parseJsonAnswer backtracked, and each write split the whole text so far). Here such an answer
 * comes from the fake service in 2,000 pieces (MAX_ANSWER_CHARS at its largest, 1,000,000) into
 * a recording channel with Discord's and Slack's message limits and no edit interval (a write
 * per read), and the loop's delay p99 must stay under 50 ms.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { slackLength } from '../../src/platforms/slack/text.ts';
import { FakeService } from '../fakes/service.ts';
import { fenceThenWhitespace } from '../helpers/abuse.ts';
import { recorder } from './recorder.ts';

/** The answer's length: MAX_ANSWER_CHARS at its largest, so that all of it is shown in messages. */
const ANSWER_CHARS = 1_000_000;
/** Pieces of the answer, one SSE event each (500 characters). */
const PIECES = 2_000;
/**
 * Delay before each event, in ms: the answer then takes about 3 s (a model would take an hour),
 * so that the p99 is read from some 300 samples of 10 ms and one hiccup of a busy machine is
 * not the p99. Every piece still gets its own write (the recorder has no edit interval).
 */
const PIECE_DELAY_MS = 1;

let fake: FakeService;
let core: Core;
let conversations = 0;

beforeAll(async () => {
  fake = await FakeService.start();
  const service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  const store = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-loop-')), 'h.sqlite')}`);
  core = createCore({
    service,
    store,
    log: pino({ level: 'silent' }),
    defaults: { chat: undefined, image: undefined },
    limits: { maxAnswerChars: ANSWER_CHARS },
  });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await closeCore(core);
  await core.service.close();
  await fake.close();
});

/**
 * Streams `pieces` as the answer of `/chat json:true` into a recording channel of these limits.
 * @returns the recorder, the outcome, and the event-loop delay (resolution 10 ms) from the
 *   answer's first text to the end of the command: before it, the fake service (in this process)
 *   serialises every event of the stream at once, which a real service does on its own machine.
 */
async function jsonChat(
  pieces: string[],
  limits: { maxChars: number; measure: ((text: string) => number) | undefined },
) {
  fake.enqueue('chat', { stream: { pieces, wholeEvents: true, chunkDelayMs: PIECE_DELAY_MS } });
  // A conversation of its own: no history, so no note under the answer.
  const r = recorder(`t:loop:${++conversations}`, { prompt: 'give JSON', json: true });
  Object.assign(r.ctx.reply.limits, limits);
  let delay: IntervalHistogram | undefined;
  const start = () => {
    // Made here: its first sample would count from when it was made.
    delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
  };
  core.events.once('stream.start', start);
  const outcome = await runCommand(chatCommand, r.ctx, core);
  core.events.off('stream.start', start);
  if (!delay) throw new Error('the answer never started');
  delay.disable();
  return { r, outcome, p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6, samples: delay.count };
}

describe('a 1 MB /chat json:true answer of a fence and whitespace', () => {
  it.each([
    { platform: 'Discord', maxChars: 2000, measure: undefined },
    { platform: 'Slack', maxChars: 3900, measure: slackLength },
  ])(
    'streams in $platform messages with event-loop delay p99 under 50 ms, and the user is told it is not valid JSON',
    async ({ maxChars, measure }) => {
      // One answer of 64 KB first: a process's first answer compiles the code on its path (tens
      // of ms once, whatever the answer's size), which is not what is measured here.
      await jsonChat(fenceThenWhitespace(64 * 1024, 20), { maxChars, measure });
      const pieces = fenceThenWhitespace(ANSWER_CHARS, PIECES);
      expect(pieces.join('')).toHaveLength(ANSWER_CHARS);
      const { r, outcome, p99Ms, maxMs, samples } = await jsonChat(pieces, { maxChars, measure });

      expect(outcome).toMatchObject({ ok: true });
      expect(samples).toBeGreaterThan(100);
      expect(
        p99Ms,
        `event-loop delay p99 ${p99Ms.toFixed(1)} ms (max ${maxMs.toFixed(1)} ms, ${samples} samples)`,
      ).toBeLessThan(50);
      // The whole answer is shown (a fence and whitespace, pages closed and reopened), then the warning.
      const count = measure ?? ((text: string) => text.length);
      expect(r.messages.length).toBeGreaterThan(ANSWER_CHARS / maxChars);
      for (const message of r.messages) expect(count(message.content)).toBeLessThanOrEqual(maxChars);
      expect(r.messages[0]!.content.startsWith('```json\n')).toBe(true);
      expect(r.messages.at(-1)!.content).toMatch(
        /\n\n⚠️ The model was asked for JSON but its answer is not valid JSON[^\n]*$/,
      );
      expect(r.messages.slice(0, -1).some((m) => m.content.includes('⚠️'))).toBe(false);
    },
    120_000,
  );
});
