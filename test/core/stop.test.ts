/**
 * The Stop button's parts in the core: the controls a StreamingReply carries while it streams
 * (and drops in its final write), the status line before the first text, and the registry
 * that lets the requester or an admin stop an answer (src/core/delivery/stops.ts).
 */

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import { StopButtons } from '../../src/core/delivery/stops.ts';
import { StreamingReply } from '../../src/core/delivery/streaming-reply.ts';
import type {
  Button,
  ComponentContext,
  MessageHandle,
  OutgoingMessage,
  ReplyChannel,
  ReplyLimits,
} from '../../src/core/platform.ts';
import { StopRequest } from '../../src/core/running.ts';
import { LocalState } from '../../src/core/state/local-state.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis } from '../helpers/redis.ts';

/** Records what each message shows, buttons included, after every write. */
class ButtonChannel implements ReplyChannel {
  readonly limits: ReplyLimits = {
    maxChars: 40,
    minEditIntervalMs: 5,
    cards: { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' },
  };
  messages: Array<{ content: string; buttons: string[] }> = [];
  writes: Array<{ message: number; content: string; buttons: string[] }> = [];
  async defer() {}
  async send(m: OutgoingMessage): Promise<MessageHandle> {
    const index = this.messages.length;
    this.record(index, m, []);
    return { edit: async (e) => this.record(index, e, this.messages[index]!.buttons) };
  }
  private record(index: number, m: OutgoingMessage, before: string[]) {
    // As on the platforms: an edit that names no buttons keeps the ones shown.
    const buttons = m.buttons ? m.buttons.map((b) => b.label) : before;
    this.messages[index] = { content: m.content, buttons };
    this.writes.push({ message: index, content: m.content, buttons });
  }
  async sendEphemeral() {}
}

const stopButton: Button = { id: 'stop:abc:U1', label: 'Stop', style: 'danger' };
const waitFor = async (check: () => boolean, timeoutMs = 1_000) => {
  for (let i = 0; i < timeoutMs / 5 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('StreamingReply controls and status', () => {
  it('carries the controls on the message being streamed, moves them to a continuation, and drops them in the final write', async () => {
    const channel = new ButtonChannel();
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler(), controls: [stopButton] });
    reply.append('first words ');
    await waitFor(() => channel.messages.length === 1);
    expect(channel.messages[0]!.buttons).toEqual(['Stop']);
    reply.append('and then many more words that spill over into a second message ');
    await waitFor(() => channel.messages.length === 2 && channel.messages[0]!.buttons.length === 0);
    expect(channel.messages[1]!.buttons).toEqual(['Stop']);
    await reply.finish();
    expect(channel.messages.map((m) => m.buttons)).toEqual([[], []]);
    expect(channel.messages.map((m) => m.content).join('')).toContain('spill over');
  });

  it('shows a status line in the first message before any text, then replaces it with the answer', async () => {
    const channel = new ButtonChannel();
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler(), controls: [stopButton] });
    reply.status('⏳ Queued: 2 ahead of you.');
    await waitFor(() => channel.messages.length === 1);
    expect(channel.messages[0]).toEqual({ content: '⏳ Queued: 2 ahead of you.', buttons: ['Stop'] });
    expect(reply.showsStatusOnly).toBe(true);
    reply.append('The answer.');
    expect(reply.showsStatusOnly).toBe(false);
    reply.status('ignored once text came');
    await reply.finish();
    expect(channel.messages).toEqual([{ content: 'The answer.', buttons: [] }]);
    expect(channel.writes.some((w) => w.content === 'ignored once text came')).toBe(false);
  });
});

/** A button press by `userId` (an admin or not) on a Stop button, recording what the presser got. */
function pressOf(button: Button, userId: string, admin = false) {
  const told: string[] = [];
  let acknowledged = 0;
  const ctx: ComponentContext = {
    platform: 'discord',
    ref: 'TEST01',
    reply: new ButtonChannel(),
    conversationId: 'c',
    channelKey: 'c',
    user: { id: userId, name: userId, isAdmin: async () => admin, canManageMessages: async () => admin },
    args: button.id.split(':').slice(1),
    limits: new ButtonChannel().limits,
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    update: async () => undefined,
    acknowledge: async () => void acknowledged++,
    sendEphemeral: async (m) => void told.push(typeof m === 'string' ? m : m.content),
  };
  return { ctx, told, acknowledged: () => acknowledged };
}

describe('StopButtons', () => {
  it('lets the requester stop the answer (a user StopRequest, once) and acknowledges the press without a message', async () => {
    const stops = new StopButtons();
    const reasons: unknown[] = [];
    const handle = stops.register({ requesterId: 'U1', abort: (r) => reasons.push(r) });
    expect(handle.button.id).toMatch(/^stop:[0-9a-f]+:U1$/);
    const press = pressOf(handle.button, 'U1');
    await stops.press(press.ctx);
    await stops.press(press.ctx);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(StopRequest);
    expect((reasons[0] as StopRequest).kind).toBe('user');
    expect(handle.stopped).toBe(true);
    expect(press.acknowledged()).toBe(2);
    expect(press.told).toEqual([]);
  });

  it('refuses anyone else with a sentence, and lets an admin stop it', async () => {
    const stops = new StopButtons();
    const reasons: unknown[] = [];
    const handle = stops.register({ requesterId: 'U1', abort: (r) => reasons.push(r) });
    const stranger = pressOf(handle.button, 'U2');
    await stops.press(stranger.ctx);
    expect(stranger.told).toEqual(['Only the person who asked, or an admin, can stop this answer.']);
    expect(reasons).toHaveLength(0);
    const admin = pressOf(handle.button, 'U3', true);
    await stops.press(admin.ctx);
    expect(reasons).toHaveLength(1);
  });

  it('checks a press against the requester it stored, not the one the button id names: an id rewritten to name the presser is refused', async () => {
    const stops = new StopButtons();
    const reasons: unknown[] = [];
    const handle = stops.register({ requesterId: 'U1', abort: (r) => reasons.push(r) });
    const forged: Button = { ...handle.button, id: handle.button.id.replace(/:U1$/, ':U2') };
    const stranger = pressOf(forged, 'U2');
    await stops.press(stranger.ctx);
    expect(stranger.told).toEqual(['Only the person who asked, or an admin, can stop this answer.']);
    expect(reasons).toHaveLength(0);
    // The stored requester, whatever the id says, and an admin may.
    await stops.press(pressOf({ ...handle.button, id: handle.button.id.replace(/:U1$/, ':U9') }, 'U1').ctx);
    expect(reasons).toHaveLength(1);
  });

  it('says an answer that is over is no longer running (a single-process store)', async () => {
    const store = new LocalState(':memory:');
    const stops = new StopButtons(store);
    const handle = stops.register({ requesterId: 'U1', abort: () => undefined });
    handle.close();
    expect(stops.size).toBe(0);
    const press = pressOf(handle.button, 'U1');
    await stops.press(press.ctx);
    expect(press.told).toEqual(['This answer is no longer running.']);
    await store.close();
  });

  it('with instances sharing Redis, a press that lands on another process stops the answer where it runs (its one poll a second for all open answers)', async () => {
    await onTwoProcesses(async (here, there) => {
      const running = new StopButtons(here);
      const reasons: unknown[] = [];
      const handle = running.register({ requesterId: 'U1', abort: (r) => reasons.push(r) });
      const other = running.register({ requesterId: 'U2', abort: (r) => reasons.push(r) });
      const press = pressOf(handle.button, 'U1');
      await new StopButtons(there).press(press.ctx);
      expect(press.acknowledged()).toBe(1);
      await waitFor(() => reasons.length === 1, 3_000);
      expect((reasons[0] as StopRequest).kind).toBe('user');
      expect(handle.stopped).toBe(true);
      expect(other.stopped).toBe(false);
      handle.close();
      other.close();
    });
  });

  it("with instances sharing Redis, a press on another process with an id rewritten to name the presser does not stop the answer; an admin's does", async () => {
    await onTwoProcesses(async (here, there) => {
      const running = new StopButtons(here);
      const reasons: unknown[] = [];
      const handle = running.register({ requesterId: 'U1', abort: (r) => reasons.push(r) });
      const forged: Button = { ...handle.button, id: handle.button.id.replace(/:U1$/, ':U2') };
      const stranger = pressOf(forged, 'U2');
      await new StopButtons(there).press(stranger.ctx);
      // Two polls of the owning process: the request was read and refused.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(reasons).toHaveLength(0);
      expect(handle.stopped).toBe(false);
      const admin = pressOf(forged, 'U3', true);
      await new StopButtons(there).press(admin.ctx);
      await waitFor(() => reasons.length === 1, 3_000);
      handle.close();
    });
  });
});

/** Runs `test` with two stores on one new redis-server (two instances' views), closed after. */
async function onTwoProcesses(test: (here: StateStore, there: StateStore) => Promise<void>): Promise<void> {
  const redis = await startRedis();
  const [here, there] = [await openStore(redis.url), await openStore(redis.url)];
  try {
    await test(here, there);
  } finally {
    await here.close();
    await there.close();
    await redis.stop();
  }
}
