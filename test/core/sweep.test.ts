/**
 * The sweep's core (core/sweep.ts) over a scripted platform and clock, on a SQLite store: which
 * conversations a sweep reads (seen within the catch-up age bound), the young messages it leaves
 * to their live delivery, the claims it shares with the live path, the missed events it counts;
 * and deafness: a reconnection only when the platform was silent for EVENT_SILENCE_MINUTES while
 * missed messages were found, once per silence, reported until a user's event arrives (HTTP mode:
 * reported, nothing to reconnect).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type CatchUpSource, claimAnswer } from '../../src/core/catch-up.ts';
import { closeCore, createCore } from '../../src/core/core.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import type { SeenConversation } from '../../src/core/state/seen.ts';
import { Sweep, type SweptConnection } from '../../src/core/sweep.ts';

const log = pino({ level: 'silent' });
const cores: Array<ReturnType<typeof createCore>> = [];
afterAll(async () => {
  await Promise.allSettled(cores.map(closeCore));
});

/** A core on a new SQLite store: catch-up's bound 15 min, a sweep every minute, deaf after 10. */
function newCore() {
  const store = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-sweep-')), 'state.sqlite'));
  const core = createCore({
    service: new ServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
    store,
    log,
    defaults: { chat: undefined, image: undefined },
    limits: { catchUpMaxAgeMinutes: 15, sweepMinutes: 1, eventSilenceMinutes: 10 },
  });
  cores.push(core);
  return core;
}

const MINUTE = 60_000;

/** A message of the scripted platform: its id (a number as text, newer is larger) and when it was sent. */
interface Msg {
  conversation: string;
  id: string;
  sentAt: number;
}

/** A scripted platform: its conversations' messages to the bot, what it reads and answers. */
function platform(messages: Msg[]) {
  const reads: string[] = [];
  const answered: string[] = [];
  const source: CatchUpSource<Msg> = {
    platform: 'discord',
    readSpacingMs: 0,
    owns: () => true,
    read: async (entry: SeenConversation) => {
      reads.push(entry.conversation);
      const found = messages.filter((m) => m.conversation === entry.conversation && Number(m.id) > Number(entry.last));
      return { messages: found, ...(found.length ? { newest: found.at(-1)!.id } : {}) };
    },
    claimKey: (m) => `claim:${m.conversation}:${m.id}`,
    sentAt: (m) => m.sentAt,
    answer: async (m) => {
      answered.push(m.id);
    },
    stopping: () => false,
  };
  return { source, reads, answered };
}

/** A connection whose last event, last delivery, reconnections and whether it looks up the test sets. */
function connection(at: number, options: { http?: boolean } = {}) {
  const state = { lastEventAt: at, lastDeliveryAt: at, reconnects: 0, up: true };
  const swept: SweptConnection = {
    lastEventAt: () => state.lastEventAt,
    lastDeliveryAt: () => state.lastDeliveryAt,
    ...(options.http
      ? {}
      : {
          reconnect: async () => {
            state.reconnects += 1;
          },
          looksUp: () => state.up,
        }),
  };
  return { state, swept };
}

describe('Sweep', () => {
  it('reads the conversations addressed within the age bound, answers the unclaimed messages older than its grace, counts them, and leaves the young ones for the next sweep', async () => {
    const core = newCore();
    // The seen notes are dated by the real clock: the sweep's starts there.
    let now = Date.now();
    core.seen.see('discord', 'discord:G:active', '100');
    core.seen.see('discord', 'discord:G:young', '100');
    const clock = () => now;
    const { source, reads, answered } = platform([
      { conversation: 'discord:G:active', id: '101', sentAt: now - 2 * MINUTE },
      { conversation: 'discord:G:active', id: '102', sentAt: now - 2 * MINUTE },
      { conversation: 'discord:G:young', id: '103', sentAt: now + 5 * MINUTE - 1_000 },
    ]);
    // 102 was answered live: its claim is taken.
    expect(await claimAnswer(core, log, 'claim:discord:G:active:102')).toBe(true);
    const counted: number[] = [];
    core.events.on('platform.missed_events', (r) => counted.push(r.count));
    const { swept } = connection(now);
    now += 5 * MINUTE;
    const sweep = new Sweep(core, source, swept, log, clock);
    const first = await sweep.sweep();
    expect(reads.sort()).toEqual(['discord:G:active', 'discord:G:young']);
    expect(answered).toEqual(['101']);
    expect(first).toMatchObject({ conversations: 2, missed: 1, claimedElsewhere: 1, deaf: false });
    expect(counted).toEqual([1]);
    // 103 was 1 s old (the grace is 30 s): left, and its conversation's newest seen kept.
    const seen = await core.seen.list('discord');
    expect(seen.find((e) => e.conversation === 'discord:G:young')?.last).toBe('100');
    expect(seen.find((e) => e.conversation === 'discord:G:active')?.last).toBe('102');
    now += MINUTE;
    const second = await sweep.sweep();
    expect(answered).toEqual(['101', '103']);
    expect(second.missed).toBe(1);
    expect(counted).toEqual([1, 1]);
    // 20 minutes later nobody addressed the bot there: past the bound, nothing is read.
    now += 20 * MINUTE;
    reads.length = 0;
    expect(await sweep.sweep()).toMatchObject({ conversations: 0, missed: 0 });
    expect(reads).toEqual([]);
  });

  it('reconnects once when the platform was silent for EVENT_SILENCE_MINUTES while missed messages were found, and reports it deaf until a user event arrives', async () => {
    const core = newCore();
    const start = Date.now();
    let now = start;
    core.seen.see('discord', 'discord:G:c', '100');
    const messages: Msg[] = [];
    const { source } = platform(messages);
    const { state, swept } = connection(start);
    const sweep = new Sweep(core, source, swept, log, () => now);
    // A missed message, but the platform sent an event 2 minutes ago: not deaf.
    messages.push({ conversation: 'discord:G:c', id: '101', sentAt: start });
    now = start + 2 * MINUTE;
    expect(await sweep.sweep()).toMatchObject({ missed: 1, deaf: false });
    expect(state.reconnects).toBe(0);
    expect(sweep.deafness()).toBeUndefined();
    // Silent for 10 minutes since its last event, with that missed message found meanwhile, but
    // disconnected: the library's to reconnect, not deaf.
    now = start + 10 * MINUTE;
    state.up = false;
    expect(await sweep.sweep()).toMatchObject({ deaf: false });
    expect(state.reconnects).toBe(0);
    // Connected (it looks healthy), silent, missed messages: deaf.
    state.up = true;
    expect(await sweep.sweep()).toMatchObject({ missed: 0, deaf: true });
    expect(state.reconnects).toBe(1);
    expect(sweep.deafness()).toMatch(/^discord deaf: 1 message/);
    // Still silent, nothing new missed: no second reconnection.
    now = start + 21 * MINUTE;
    expect(await sweep.sweep()).toMatchObject({ deaf: false });
    expect(state.reconnects).toBe(1);
    expect(sweep.deafness()).toMatch(/^discord deaf/);
    // A session's own start (an event, not a user's) does not end it; a user's event does.
    state.lastEventAt = now;
    expect(sweep.deafness()).toMatch(/^discord deaf/);
    state.lastDeliveryAt = now + 1;
    expect(sweep.deafness()).toBeUndefined();
  });

  it('in HTTP mode (nothing to reconnect) reports the deafness only; with EVENT_SILENCE_MINUTES=0 never', async () => {
    const core = newCore();
    const start = Date.now();
    let now = start;
    core.seen.see('discord', 'discord:G:c', '100');
    const messages: Msg[] = [{ conversation: 'discord:G:c', id: '101', sentAt: start }];
    const { swept } = connection(start - 11 * MINUTE, { http: true });
    const sweep = new Sweep(core, platform(messages).source, swept, log, () => now);
    now = start + MINUTE;
    expect(await sweep.sweep()).toMatchObject({ missed: 1, deaf: true });
    expect(sweep.deafness()).toMatch(/^discord deaf: 1 message/);

    const quiet = newCore();
    quiet.limits.eventSilenceMinutes = 0;
    quiet.seen.see('discord', 'discord:G:c', '100');
    const never = new Sweep(quiet, platform([...messages]).source, connection(0).swept, log, () => now);
    expect(await never.sweep()).toMatchObject({ missed: 1, deaf: false });
    expect(never.deafness()).toBeUndefined();
  });

  it('times each sweep with SWEEP_MINUTES as it is then (a reload applies), and sweeps no more while it is 0', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const core = newCore();
      const sweep = new Sweep(core, platform([]).source, connection(Date.now()).swept, log);
      const runs = vi.spyOn(sweep, 'sweep').mockResolvedValue({} as never);
      sweep.start();
      await vi.advanceTimersByTimeAsync(MINUTE);
      expect(runs).toHaveBeenCalledTimes(1);
      core.limits.sweepMinutes = 2;
      await vi.advanceTimersByTimeAsync(MINUTE);
      expect(runs).toHaveBeenCalledTimes(2); // the wait in progress was timed with 1 minute
      await vi.advanceTimersByTimeAsync(MINUTE);
      expect(runs).toHaveBeenCalledTimes(2);
      await vi.advanceTimersByTimeAsync(MINUTE);
      expect(runs).toHaveBeenCalledTimes(3);
      core.limits.sweepMinutes = 0;
      await vi.advanceTimersByTimeAsync(10 * MINUTE);
      expect(runs).toHaveBeenCalledTimes(3); // not even the one timed before the change
      // Turned on again: the loop, looking every minute while off, sweeps within a minute, then every 30 s.
      core.limits.sweepMinutes = 0.5;
      await vi.advanceTimersByTimeAsync(MINUTE);
      expect(runs).toHaveBeenCalledTimes(4);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(runs).toHaveBeenCalledTimes(5);
      sweep.stop();
      await vi.advanceTimersByTimeAsync(10 * MINUTE);
      expect(runs).toHaveBeenCalledTimes(5);
    } finally {
      vi.useRealTimers();
    }
  });
});
