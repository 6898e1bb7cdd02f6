/**
 * Refusals and failures in the user's language on Discord (issue 42, "Done when": a Discord user
 * with `locale: de` gets the German refusal): every interaction carries the user's client language
 * (`locale`); what only they see (an option refused, a spending cap reached, the 80 % notice, a
 * service failure with its reference) is in that language, numbers and dates formatted its way
 * (`0,07 EUR`). A tag without a catalog falls back to its base language (`es-419` → Spanish), then
 * to English (`ko`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OptionValue } from '../fakes/discord/types.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** fake-chat at 4 EUR a million prompt tokens and 25 a million completion tokens. */
const PRICES = join(mkdtempSync(join(tmpdir(), 'genbot-e2e-i18n-prices-')), 'prices.json');
writeFileSync(PRICES, JSON.stringify({ currency: 'EUR', chat: { 'fake-chat': { prompt: 4, completion: 25 } } }));

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E(
  {
    discord: {},
    bot: {
      env: {
        PRICES_FILE: PRICES,
        SPEND_CAP_USER_DAY: '0.07',
        MAX_TOKENS_LIMIT: '1000',
        DEFAULT_CHAT_MODEL: 'fake-chat',
      },
    },
  },
  (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
    // Each answer: 250 × 4 + 1,000 × 25 micro-units = 0.026 EUR.
    service.setStreamUsage({ prompt_tokens: 250, completion_tokens: 1_000 });
  },
);

let users = 0;

/** Runs /chat with `options` as a new user whose Discord client speaks `locale`; resolves with the outcome and what they alone read. */
async function chat(
  locale: string,
  options: Record<string, OptionValue>,
  user = { id: `12900000000000009${users++}`, username: 'sprecher' },
) {
  const channel = discord.addChannel(`i18n-${users}`);
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
  const interaction = discord.dispatchInteraction({ command: 'chat', options, channelId: channel.id, user, locale });
  const [outcome] = await done;
  const ephemerals = [...interaction.messages, ...interaction.followUps]
    .filter((m) => m.ephemeral && !m.deleted)
    .map((m) => m.content ?? '');
  return { outcome: outcome!, ephemerals: [...new Set(ephemerals)], user };
}

describe('refusals and failures in the Discord user’s language', () => {
  it('locale de: an option out of range, in German, the option name as written', async () => {
    const { outcome, ephemerals } = await chat('de', { prompt: 'heiße Frage', temperature: 5 });
    expect(outcome.errorCode).toBe('invalid_option');
    expect(ephemerals).toEqual(['`temperature` muss zwischen 0 und 2 liegen.']);
  });

  it('locale de: a service failure in German, with its reference', async () => {
    for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 500 });
    const { outcome, ephemerals } = await chat('de', { prompt: 'Geht es dir gut?' });
    expect(outcome.errorCode).toBe('server_error');
    expect(ephemerals).toEqual([
      expect.stringMatching(
        /^Der Generierungsdienst hat Probleme \(HTTP 500\)\. Versuche es in einer Minute erneut\. \(Ref\. [2-9A-Z]{6}\)$/,
      ),
    ]);
  });

  it('locale de: the 80 % notice and the spending cap refusal in German, amounts with a decimal comma and the reset as a German date', async () => {
    const user = { id: '1290000000000000888', username: 'sparer' };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await chat('de', { prompt: `Frage ${i}` }, user));
    expect(results.map((r) => r.outcome.ok)).toEqual([true, true, true, false]);
    expect(results[2]!.ephemerals).toEqual([
      expect.stringMatching(
        /^Hinweis: dein tägliches Ausgabenlimit ist aufgebraucht \(0,078 EUR von 0,07 EUR\): Weitere Anfragen werden abgelehnt\. Es wird in (\d+ s|\d+ Min\.|\d+ Std\. \d+ Min\.) zurückgesetzt \(\d{1,2}\. [A-Z][a-zä]{2,3}\.? \d{4}, 00:00 UTC\)\.$/,
      ),
    ]);
    expect(results[3]!.outcome.errorCode).toBe('quota_exceeded');
    expect(results[3]!.ephemerals).toEqual([
      expect.stringMatching(
        /^Diese Anfrage würde dein tägliches Ausgabenlimit von 0,07 EUR überschreiten: 0,00 EUR übrig\. Es wird in (\d+ s|\d+ Min\.|\d+ Std\. \d+ Min\.) zurückgesetzt \(\d{1,2}\. [A-Z][a-zä]{2,3}\.? \d{4}, 00:00 UTC\)\.$/,
      ),
    ]);
    expect(service.chatRequests().filter((b) => b.messages.at(-1)?.content === 'Frage 3')).toEqual([]);
  });

  it('locale de: a file the bot does not read, given to /chat image, refused in German naming the file', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>');
    const { outcome, ephemerals } = await chat('de', {
      prompt: 'Was zeigt das?',
      image: { filename: 'zeichnung.svg', contentType: 'image/svg+xml', data: svg },
    });
    expect(outcome.errorCode).toBe('invalid_option');
    expect(ephemerals).toEqual([
      '`image`: zeichnung.svg ist eine SVG-Zeichnung, die der Bot nicht liest (JPEG, PNG, WebP, GIF, AVIF und TIFF funktionieren).',
    ]);
  });

  it('locale es-419 falls back to Spanish; ko, which has no catalog, gets English', async () => {
    const spanish = await chat('es-419', { prompt: 'pregunta', temperature: 5 });
    expect(spanish.ephemerals).toEqual(['`temperature` debe estar entre 0 y 2.']);
    const korean = await chat('ko', { prompt: '질문', temperature: 5 });
    expect(korean.ephemerals).toEqual(['`temperature` must be from 0 to 2.']);
  });
});
