/**
 * What a finished answer keeps for Regenerate (core/features/answer-state.ts): kept and read back
 * under its button's id; a state over ANSWER_STATE_MAX_BYTES for the store is not kept, and its
 * answer gets no button.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { closeCore, createCore } from '../../src/core/core.ts';
import {
  ANSWER_STATE_MAX_BYTES,
  type AnswerState,
  answerKeeper,
  keepAnswerState,
  readAnswerState,
} from '../../src/core/features/answer-state.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';

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
