/**
 * While the bot stops, new work is refused in the language Discord gave with it (guard.ts
 * `refuseWhileStopping`): an interaction's `locale`, a message's guild's preferred locale, else
 * DEFAULT_LOCALE; an autocomplete gets an empty list.
 */
import type { Interaction, Message } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { RESTARTING_KEY } from '../../src/core/running.ts';
import { refuseWhileStopping } from '../../src/platforms/discord/guard.ts';

const languages = { defaultLocale: 'fr' as const };

describe('refuseWhileStopping', () => {
  it("tells an interaction's user in their language, ephemerally", async () => {
    const replies: unknown[] = [];
    const interaction = {
      locale: 'de',
      isAutocomplete: () => false,
      isRepliable: () => true,
      reply: async (r: unknown) => void replies.push(r),
    } as unknown as Interaction;
    await refuseWhileStopping(interaction, languages);
    expect(replies).toEqual([{ content: wordsOf('de').t(RESTARTING_KEY), flags: 64 }]);
    expect(wordsOf('de').t(RESTARTING_KEY)).not.toBe(wordsOf('en').t(RESTARTING_KEY));
  });

  it("answers a message in its guild's language, else DEFAULT_LOCALE, pinging no one", async () => {
    const replies: Array<{ content: string; allowedMentions: unknown }> = [];
    const message = (preferredLocale?: string) =>
      ({
        author: { id: 'u' },
        guild: preferredLocale ? { preferredLocale } : null,
        reply: async (r: { content: string; allowedMentions: unknown }) => void replies.push(r),
      }) as unknown as Message;
    await refuseWhileStopping(message('ja'), languages);
    await refuseWhileStopping(message(), languages);
    expect(replies.map((r) => r.content)).toEqual([wordsOf('ja').t(RESTARTING_KEY), wordsOf('fr').t(RESTARTING_KEY)]);
    expect(replies[0]!.allowedMentions).toEqual({ parse: [], repliedUser: false });
  });

  it('gives an autocomplete an empty list', async () => {
    const responded: unknown[] = [];
    const interaction = {
      isAutocomplete: () => true,
      respond: async (r: unknown) => void responded.push(r),
    } as unknown as Interaction;
    await refuseWhileStopping(interaction, languages);
    expect(responded).toEqual([[]]);
  });
});
