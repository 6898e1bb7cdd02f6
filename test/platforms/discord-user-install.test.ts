/**
 * Where only a Discord user install answers (src/platforms/discord/user-install.ts): which
 * interactions those are, their five follow-ups, and the answer's end a minute before the
 * interaction's token does (fake timers: no waiting).
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import {
  ANSWER_TIME_UP,
  beforeTokenEnds,
  FOLLOW_UPS_USED,
  FollowUpAllowance,
  FollowUpLimitError,
  isUserInstalledOnly,
  onlyUserInstall,
  TOKEN_END_MARGIN_MS,
  userInstallKeys,
} from '../../src/platforms/discord/user-install.ts';

/** The fields the checks read, as discord.js gives them. */
function interaction(owners: { guildId?: string; userId?: string }, context: 0 | 1 | 2 | null) {
  return {
    authorizingIntegrationOwners: { guildId: owners.guildId ?? null, userId: owners.userId ?? null },
    context,
    channelId: '900',
    guildId: context === 0 ? '800' : null,
    user: { id: '700' },
  } as unknown as Parameters<typeof userInstallKeys>[0];
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Discord user install', () => {
  it('tells an interaction only a user install authorized from one of the guild install', () => {
    expect(isUserInstalledOnly(interaction({ userId: '700' }, 0))).toBe(true);
    expect(isUserInstalledOnly(interaction({ guildId: '800', userId: '700' }, 0))).toBe(false);
    expect(isUserInstalledOnly(interaction({ guildId: '800' }, 0))).toBe(false);
    // A group DM or a DM between users: the bot is never a member there.
    expect(isUserInstalledOnly(interaction({ userId: '700' }, 2))).toBe(true);
    // The bot's own DM: its token works there.
    expect(isUserInstalledOnly(interaction({ userId: '700' }, 1))).toBe(false);
    expect(onlyUserInstall(interaction({ userId: '700' }, 1))).toBe(true);
    expect(userInstallKeys(interaction({ userId: '701' }, 0))).toEqual({
      conversationId: 'discord:user:701:900',
      channelKey: 'discord:user:701:900',
    });
    expect(userInstallKeys(interaction({ guildId: '800', userId: '700' }, 0))).toBeUndefined();
  });

  it('sends five follow-ups where only a user install authorized the interaction, and refuses a sixth unsent', async () => {
    const limited = new FollowUpAllowance(true);
    const send = vi.fn(async () => 'sent');
    for (let i = 0; i < 5; i++) await expect(limited.spend(send)).resolves.toBe('sent');
    await expect(limited.spend(send)).rejects.toThrow(FollowUpLimitError);
    await expect(limited.spend(send)).rejects.toThrow(english.say(FOLLOW_UPS_USED));
    expect(send).toHaveBeenCalledTimes(5);
    // A follow-up Discord refused is not counted.
    const other = new FollowUpAllowance(true);
    await expect(other.spend(() => Promise.reject(new Error('500')))).rejects.toThrow('500');
    for (let i = 0; i < 5; i++) await other.spend(send);
    const unlimited = new FollowUpAllowance(false);
    for (let i = 0; i < 7; i++) await unlimited.spend(send);
    expect(send).toHaveBeenCalledTimes(17);
  });

  it('ends an answer a minute before the interaction token’s 15 minutes, with the line saying why', () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    const shutdown = new AbortController();
    const { signal, dispose } = beforeTokenEnds(shutdown.signal, Date.now());
    vi.advanceTimersByTime(15 * 60_000 - TOKEN_END_MARGIN_MS - 1);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as { userMessage: string }).userMessage).toBe(english.say(ANSWER_TIME_UP));
    dispose();

    // A shutdown is passed on as it is; once disposed, nothing fires.
    const second = beforeTokenEnds(shutdown.signal, Date.now());
    shutdown.abort('shutdown');
    expect(second.signal.reason).toBe('shutdown');
    const third = beforeTokenEnds(new AbortController().signal, Date.now());
    third.dispose();
    vi.advanceTimersByTime(15 * 60_000);
    expect(third.signal.aborted).toBe(false);
  });
});
