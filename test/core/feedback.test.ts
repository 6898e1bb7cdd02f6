/**
 * Feedback on answers in the store (state/feedback.ts) and its sentences (features/feedback.ts,
 * feedback-report.ts): one vote per user and answer, changeable, the tallies always equal to the
 * votes cast (a changed vote moves between counts), also with two instances voting at once on
 * one Redis; a reason only with the user's own 👎, trimmed and cut at 1,000 characters; the
 * tally's pairs bounded; the admins' card summed per model.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/core.ts';
import { InputError } from '../../src/core/errors.ts';
import { pressFeedback, REASON_MAX_CHARS, submitReason } from '../../src/core/features/feedback.ts';
import { feedbackCard, votesByModel } from '../../src/core/features/feedback-report.ts';
import { Languages } from '../../src/core/i18n/languages.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import type { ComponentContext } from '../../src/core/platform.ts';
import {
  castVote,
  type FeedbackRecord,
  keepFeedbackRecord,
  keepReason,
  MAX_TALLY_PAIRS,
  OTHER_MODELS,
  readTally,
  readVote,
} from '../../src/core/state/feedback.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
const opened: StateStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.allSettled(opened.map((s) => s.close()));
  await redis?.stop();
});

/** A new SQLite store of its own. */
function sqlite(): StateStore {
  const store = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-feedback-')), 'state.sqlite'));
  opened.push(store);
  return store;
}

const CHANNEL = 'discord:100:200';

/** An answer's record by `model`. */
const record = (model = 'model-a', kind: FeedbackRecord['kind'] = 'chat'): FeedbackRecord => ({
  version: 1,
  kind,
  command: kind === 'image' ? 'imagine' : kind,
  model,
  platform: 'discord',
  channelKey: CHANNEL,
  conversationId: CHANNEL,
  requesterId: 'u0',
  at: Date.now(),
});

describe('votes and tallies', () => {
  it('👍 then 👎 by one user and 👍 by another leave one 👎 and one 👍; the same vote again changes nothing; a changed vote drops its reason', async () => {
    const store = sqlite();
    const answer = record();
    await keepFeedbackRecord(store, 'a1', answer);
    expect(await castVote(store, 'a1', answer, 'alice', 'up')).toEqual({ previous: undefined });
    expect(await castVote(store, 'a1', answer, 'alice', 'down')).toEqual({ previous: 'up' });
    expect(await castVote(store, 'a1', answer, 'bob', 'up')).toEqual({ previous: undefined });
    expect(await readTally(store)).toEqual([{ kind: 'chat', model: 'model-a', up: 1, down: 1 }]);
    expect(await readTally(store, 'discord:100')).toEqual([{ kind: 'chat', model: 'model-a', up: 1, down: 1 }]);
    expect(await readTally(store, 'discord:999')).toEqual([]);

    expect(await keepReason(store, 'a1', 'alice', 'Wrong year.')).toBe(true);
    expect(await keepReason(store, 'a1', 'bob', 'Not mine to give.')).toBe(false);
    expect(await castVote(store, 'a1', answer, 'alice', 'down')).toEqual({ previous: 'down' });
    expect(await readVote(store, 'a1', 'alice')).toMatchObject({ vote: 'down', reason: 'Wrong year.' });
    expect(await readTally(store)).toEqual([{ kind: 'chat', model: 'model-a', up: 1, down: 1 }]);
    await castVote(store, 'a1', answer, 'alice', 'up');
    expect((await readVote(store, 'a1', 'alice'))?.reason).toBeUndefined();
    expect(await readTally(store)).toEqual([{ kind: 'chat', model: 'model-a', up: 2, down: 0 }]);
  });

  it('two instances on one Redis, votes changing at once: the tallies equal the votes left', async () => {
    const a = await openStore(redis.url);
    const b = await openStore(redis.url);
    opened.push(a, b);
    const answers = [record('model-a'), record('model-b', 'image')];
    await Promise.all(answers.map((r, i) => keepFeedbackRecord(a, `r${i}`, r)));
    const users = Array.from({ length: 12 }, (_, i) => `user${i}`);
    // Each user flips their vote on both answers four times, from either instance, all at once.
    await Promise.all(
      users.flatMap((user, u) =>
        answers.map(async (answer, i) => {
          for (let round = 0; round < 4; round++) {
            const store = (u + round) % 2 ? a : b;
            await castVote(store, `r${i}`, answer, user, (u + round) % 3 ? 'up' : 'down');
          }
        }),
      ),
    );
    const expected = await Promise.all(
      answers.map(async (answer, i) => {
        const votes = await Promise.all(users.map((user) => readVote(a, `r${i}`, user)));
        return {
          kind: answer.kind,
          model: answer.model,
          up: votes.filter((v) => v?.vote === 'up').length,
          down: votes.filter((v) => v?.vote === 'down').length,
        };
      }),
    );
    expect(expected.every((e) => e.up + e.down === users.length)).toBe(true);
    expect(await readTally(b)).toEqual(expect.arrayContaining(expected));
    expect(await readTally(b)).toHaveLength(2);
  });

  it(`counts at most ${MAX_TALLY_PAIRS} kinds and models apart, the rest under "${OTHER_MODELS}"`, async () => {
    const store = sqlite();
    for (let i = 0; i <= MAX_TALLY_PAIRS; i++) {
      const answer = record(`model-${i}`);
      await castVote(store, `m${i}`, answer, 'alice', 'up');
    }
    const tally = await readTally(store);
    expect(tally).toHaveLength(MAX_TALLY_PAIRS + 1);
    expect(tally.find((l) => l.model === OTHER_MODELS)).toEqual({ kind: 'chat', model: OTHER_MODELS, up: 1, down: 0 });
    expect(tally.find((l) => l.model === `model-${MAX_TALLY_PAIRS}`)).toBeUndefined();
  }, 60_000);
});

describe('presses and reasons', () => {
  const coreOf = (store: StateStore) => ({ store, languages: new Languages(undefined, 'en') }) as unknown as Core;

  it('a press on an answer whose record is gone, or of another platform, is refused', async () => {
    const store = sqlite();
    await keepFeedbackRecord(store, 'slackish', { ...record(), platform: 'slack' });
    const told: unknown[] = [];
    const press = (id: string) =>
      pressFeedback(
        {
          platform: 'discord',
          args: [id, 'up'],
          user: { id: 'alice' },
          log: { info: () => undefined },
          sendEphemeral: async (m: unknown) => void told.push(m),
        } as unknown as ComponentContext,
        coreOf(store),
      );
    const expired = wordsOf('en').t('answers.feedback.expired');
    await expect(press('gone')).rejects.toThrow(expired);
    await expect(press('slackish')).rejects.toThrow(expired);
    expect(told).toEqual([]);
    expect(await readTally(store)).toEqual([]);
  });

  it('a reason is trimmed and cut at 1,000 characters, kept only with the submitter’s own 👎; an unknown form or an empty reason is refused', async () => {
    const store = sqlite();
    const answer = record();
    await castVote(store, 'r1', answer, 'alice', 'down');
    const told: string[] = [];
    const submit = (formId: string, userId: string, text: string) =>
      submitReason({ formId, userId, text, sendEphemeral: async (m) => void told.push(m) }, coreOf(store));
    await submit('feedback:r1:reason', 'alice', `  ${'x'.repeat(REASON_MAX_CHARS + 50)}  `);
    expect((await readVote(store, 'r1', 'alice'))?.reason).toBe('x'.repeat(REASON_MAX_CHARS));
    expect(told).toEqual(['Thanks — your reason is noted with your 👎.']);
    await expect(submit('feedback:r1:reason', 'bob', 'Me too.')).rejects.toThrow(/press 👎 under the answer first/);
    await expect(submit('feedback:r1:reason', 'alice', '   ')).rejects.toBeInstanceOf(InputError);
    await expect(submit('feedback:r1:up', 'alice', 'Hm')).rejects.toThrow(/no longer works/);
    await expect(submit('ask_about_message:r1', 'alice', 'Hm')).rejects.toThrow(/no longer works/);
  });
});

describe('the admins’ card', () => {
  it('sums each model’s votes over kinds, the most voted first, and shows the kinds apart when there are several', async () => {
    const store = sqlite();
    await castVote(store, 'x1', record('model-a'), 'alice', 'up');
    await castVote(store, 'x2', record('model-a', 'mention'), 'alice', 'down');
    await castVote(store, 'x2', record('model-a', 'mention'), 'bob', 'down');
    await castVote(store, 'x3', record('model-b'), 'alice', 'up');
    expect(votesByModel(await readTally(store)).map((v) => [v.model, v.up, v.down])).toEqual([
      ['model-a', 1, 2],
      ['model-b', 1, 0],
    ]);
    const card = await feedbackCard(store, CHANNEL, {
      maxFields: 25,
      maxChars: 6000,
      maxValueChars: 1024,
      paging: 'buttons',
    });
    expect(card).toEqual({
      title: 'Feedback on answers, by model',
      description: "Votes (👍 / 👎) on the bot's answers in this server, each user's latest vote.",
      fields: [
        { name: 'model-a', value: '👍 1 · 👎 2 (33% 👍)\nchat: 👍 1 · 👎 0; mention: 👍 0 · 👎 2' },
        { name: 'model-b', value: '👍 1 · 👎 0 (100% 👍) — chat' },
      ],
    });
    expect((await feedbackCard(sqlite(), 'slack:T1:C1', card as never)).description).toBe(
      "No votes on the bot's answers in this workspace yet.",
    );
  });
});
