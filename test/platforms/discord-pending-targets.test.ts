/** The messages kept for a Discord message action's modal (message-actions.ts PendingTargets): by user and message, for 15 minutes, taken once. */
import type { Message } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PENDING_TARGET_TTL_MS, PendingTargets } from '../../src/platforms/discord/message-actions.ts';

const message = (id: string) => ({ id }) as Message;

afterEach(() => {
  vi.useRealTimers();
});

describe('PendingTargets', () => {
  it("gives a user's chosen message back once, and only to that user", () => {
    const pending = new PendingTargets();
    pending.keep('alice', message('1'));
    expect(pending.take('bob', '1')).toBeUndefined();
    expect(pending.take('alice', '1')?.id).toBe('1');
    expect(pending.take('alice', '1')).toBeUndefined();
  });

  it('forgets a message after PENDING_TARGET_TTL_MS', () => {
    vi.useFakeTimers();
    const pending = new PendingTargets();
    pending.keep('alice', message('1'));
    pending.keep('alice', message('2'));
    vi.advanceTimersByTime(PENDING_TARGET_TTL_MS - 1);
    expect(pending.take('alice', '1')?.id).toBe('1');
    vi.advanceTimersByTime(2);
    expect(pending.take('alice', '2')).toBeUndefined();
  });

  it('keeps at most 1,000 messages, dropping the oldest first', () => {
    const pending = new PendingTargets();
    for (let i = 0; i < 1_001; i++) pending.keep('alice', message(String(i)));
    expect(pending.take('alice', '0')).toBeUndefined();
    expect(pending.take('alice', '1')?.id).toBe('1');
    expect(pending.take('alice', '1000')?.id).toBe('1000');
  });
});
