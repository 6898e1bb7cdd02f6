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
  keepAnswerState,
  readAnswerState,
} from '../../src/core/features/answer-state.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';

const log = pino({ level: 'silent' });
const core = createCore({
  // Never called here: no request is sent.
  service: new ServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
  store: openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-answer-state-')), 'state.sqlite')}`),
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
});
