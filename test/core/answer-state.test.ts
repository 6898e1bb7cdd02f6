/**
 * What a finished answer keeps for Regenerate (core/features/answer-state.ts): kept and read back
 * under its button's id; a state over ANSWER_STATE_MAX_BYTES for the store is not kept, and its
 * answer gets no button. On SQLite and on a real redis-server alike (answer-index.ts): a user's
 * states are bounded by count (REGENERATE_STATES_PER_USER) and bytes, the oldest dropped with a
 * record saying so; /forget removes a conversation's states and its mentions' links, and refuses
 * a state made before it that no list named.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreLimits } from '../../src/config.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { ANSWER_STATES_USER_MAX_BYTES, forgetAnswerStates } from '../../src/core/features/answer-index.ts';
import {
  ANSWER_STATE_MAX_BYTES,
  type AnswerState,
  answerKeeper,
  answerOfMention,
  findAnswerState,
  keepAnswerState,
  linkMention,
  readAnswerState,
} from '../../src/core/features/answer-state.ts';
import { storeKeys } from '../../src/core/keys.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const log = pino({ level: 'silent' });
const core = createCore({
  // Never called here: no request is sent.
  service: new ServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
  store: await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-answer-state-')), 'state.sqlite')}`),
  log,
  defaults: { chat: undefined, image: undefined },
});
afterAll(() => closeCore(core));

/** A chat answer's state whose one user message holds `text`. */
const stateWith = (text: string): AnswerState => ({
  version: 1,
  requesterId: 'U1',
  conversationId: 'slack:T1:C1',
  channelKey: 'slack:T1:C1',
  kind: 'chat',
  request: { endpoint: 'chat', body: { model: 'm', messages: [{ role: 'user', content: text }] } },
  notes: [],
});

describe('answer state', () => {
  it('is kept under its id with a Regenerate button naming the requester, and read back whole', async () => {
    const state = stateWith('hello');
    expect(await keepAnswerState(core, log, 'abc123', state)).toEqual([
      { id: 'regenerate:abc123:U1', label: '🔄 Regenerate' },
    ]);
    expect(await readAnswerState(core, 'abc123')).toEqual(state);
    expect(await readAnswerState(core, 'missing')).toBeUndefined();
  });

  it('over the cap for the store (8 MiB on SQLite: a question with large images) is not kept: no button', async () => {
    const big = stateWith('x'.repeat(ANSWER_STATE_MAX_BYTES.sqlite));
    expect(await keepAnswerState(core, log, 'big1', big)).toEqual([]);
    expect(await readAnswerState(core, 'big1')).toBeUndefined();
  });

  it("keeps the refs of the answer's messages: those posted before the final write, again after it only when it posted more, never an earlier state's", async () => {
    let refs: string[] | undefined = ['slack:T1:C1:1.1'];
    const stale = { ...stateWith('q'), messages: ['slack:T1:C1:0.9'] };
    const keeper = answerKeeper(core, log, 'refs1', () => stale, {
      get messageRefs() {
        return refs;
      },
    });
    expect(await keeper.controls()).toEqual([{ id: 'regenerate:refs1:U1', label: '🔄 Regenerate' }]);
    expect((await readAnswerState(core, 'refs1'))?.messages).toEqual(['slack:T1:C1:1.1']);
    refs = ['slack:T1:C1:1.1', 'slack:T1:C1:1.2'];
    await keeper.complete();
    expect((await readAnswerState(core, 'refs1'))?.messages).toEqual(['slack:T1:C1:1.1', 'slack:T1:C1:1.2']);
    // A message the platform did not name: the state names none (a press then writes over the pressed message alone).
    refs = undefined;
    await keeper.complete();
    expect((await readAnswerState(core, 'refs1'))?.messages).toBeUndefined();

    // A state not kept (over the cap) is not kept afterwards either.
    const big = answerKeeper(core, log, 'refs2', () => stateWith('x'.repeat(ANSWER_STATE_MAX_BYTES.sqlite)), {
      messageRefs: ['slack:T1:C1:2.1'],
    });
    expect(await big.controls()).toEqual([]);
    await big.complete();
    expect(await readAnswerState(core, 'refs2')).toBeUndefined();
  });
});

describe.each(['sqlite', 'redis'] as const)('answer states on %s: the per-user bound and /forget', (kind) => {
  let redis: TestRedis | undefined;
  const cores: Core[] = [];
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.allSettled(cores.map((c) => closeCore(c)));
    await redis?.stop();
  });

  /** A core on a new store of this kind (on Redis, the one server: each test has users and ids of its own), with `limits`. */
  async function coreWith(limits: Partial<CoreLimits> = {}): Promise<Core> {
    const url =
      kind === 'redis'
        ? redis!.url
        : `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-answer-bounds-')), 'state.sqlite')}`;
    const made = createCore({
      service: new ServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
      store: await openStore(url),
      log,
      defaults: { chat: undefined, image: undefined },
      limits,
    });
    cores.push(made);
    return made;
  }

  /** A state of `requester`'s in `conversationId`, made now. */
  const stateOf = (requesterId: string, conversationId: string, text = 'q'): AnswerState => ({
    ...stateWith(text),
    requesterId,
    conversationId,
    channelKey: conversationId,
    at: Date.now(),
  });

  /** Keeps a state as an answer does: for its final write, then listed after it. */
  async function keep(core: Core, id: string, state: AnswerState): Promise<void> {
    const keeper = answerKeeper(core, log, id, () => state, { messageRefs: undefined });
    expect(await keeper.controls()).toHaveLength(1);
    await keeper.complete();
  }

  it("drops a user's oldest states past REGENERATE_STATES_PER_USER, each leaving a `dropped` record; a state kept again (a Regenerate) becomes the newest; another user's stay", async () => {
    const core = await coreWith({ regenerateStatesPerUser: 2 });
    for (const id of ['a1', 'a2', 'a3']) await keep(core, id, stateOf('U1', 'slack:T1:C1'));
    await keep(core, 'b1', stateOf('U2', 'slack:T1:C1'));
    expect(await findAnswerState(core, 'a1')).toEqual({ gone: 'dropped' });
    for (const id of ['a2', 'a3', 'b1']) expect(await readAnswerState(core, id)).toBeDefined();
    // a2 regenerated: kept again, it is now newer than a3, which the next answer drops.
    await keep(core, 'a2', stateOf('U1', 'slack:T1:C1'));
    await keep(core, 'a4', stateOf('U1', 'slack:T1:C1'));
    expect(await findAnswerState(core, 'a3')).toEqual({ gone: 'dropped' });
    for (const id of ['a2', 'a4', 'b1']) expect(await readAnswerState(core, id)).toBeDefined();
    expect(await findAnswerState(core, 'never')).toEqual({ gone: 'expired' });
  });

  it("drops a user's oldest states past the store's bytes for one user, however few they are", async () => {
    const core = await coreWith({ regenerateStatesPerUser: 100 });
    // Each state a little under the largest kept: two fit within the user's bytes, not three.
    const text = 'x'.repeat(ANSWER_STATE_MAX_BYTES[kind] - 2048);
    expect(3 * text.length).toBeGreaterThan(ANSWER_STATES_USER_MAX_BYTES[kind]);
    for (const id of ['big1', 'big2', 'big3']) await keep(core, id, stateOf('U3', 'discord:1:2', text));
    expect(await findAnswerState(core, 'big1')).toEqual({ gone: 'dropped' });
    expect(await readAnswerState(core, 'big2')).toBeDefined();
    expect(await readAnswerState(core, 'big3')).toBeDefined();
  });

  it("/forget replaces the conversation's states with `forgotten` records and removes its mentions' links; another conversation's stay; a state made before it but kept after it (an answer still streaming) is refused; one made after it is kept", async () => {
    const core = await coreWith();
    const here = 'discord:1:200';
    const mention = 'discord:200:300';
    await keep(core, 'h1', { ...stateOf('U5', here), mention });
    await linkMention(core, log, mention, { id: 'h1', answer: 'discord:200:301', at: Date.now() }, 60_000);
    expect(await answerOfMention(core, mention)).toBeDefined();
    await keep(core, 'o1', stateOf('U5', 'discord:1:999'));
    const streaming = stateOf('U6', here);

    expect(await forgetAnswerStates(core, here)).toBe(1);
    expect(await findAnswerState(core, 'h1')).toEqual({ gone: 'forgotten' });
    expect(await core.store.keyv.get(storeKeys.mentionAnswer(mention))).toBeUndefined();
    expect(await answerOfMention(core, mention)).toBeUndefined();
    expect(await readAnswerState(core, 'o1')).toBeDefined();

    await keep(core, 'late', streaming);
    expect(await findAnswerState(core, 'late')).toEqual({ gone: 'forgotten' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await keep(core, 'h2', stateOf('U5', here));
    expect(await readAnswerState(core, 'h2')).toBeDefined();
  });
});
