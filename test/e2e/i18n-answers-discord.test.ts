/**
 * End-to-end on Discord (issue 42): what surrounds an answer speaks its readers' language. The
 * public lines of an answer (its queue line, its notes, its buttons, the long answer's notice)
 * are in the place's language (the interaction's `guild_locale`); what only the presser sees (a
 * refusal of Stop or Regenerate, a vote's acknowledgement and its button) is in the presser's
 * (the interaction's `locale`). Each block runs the whole bot (startTestBot) with discord.js
 * unmodified against a FakeDiscord whose guild has its own preferred locale, and FakeService.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage, Json } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** The asker, whose Discord client is in German. */
const ANNA = { id: '1290000000000000421', username: 'anna' };
/** Another member, whose Discord client is in German too. */
const BERND = { id: '1290000000000000422', username: 'bernd' };

/** The labels of the buttons in a list of components (action rows, Containers, Sections). */
function labelsIn(components: readonly Json[] | undefined): string[] {
  const labels: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) for (const child of node) walk(child);
    else if (node && typeof node === 'object') {
      const json = node as Json;
      if (json.type === 2) labels.push(String(json.label ?? ''));
      walk(json.components);
      walk(json.accessory);
    }
  };
  walk(components);
  return labels;
}

/** The one ephemeral message the bot sent for an interaction. */
function ephemeralOf(interaction: FakeInteraction): FakeMessage {
  const shown = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
  expect(shown).toHaveLength(1);
  return shown[0]!;
}

/** The parts a block's tests share. */
interface Block {
  service: FakeService;
  discord: FakeDiscord;
  bot: TestBot;
}

/** Starts the fakes and the bot for a describe block, the guild's preferred locale `guildLocale`. */
function useGuild(guildLocale: string, env: Record<string, string> = {}): Block {
  const block = {} as Block;
  useE2E({ discord: { guild: { preferredLocale: guildLocale } }, bot: { env } }, async (e2e) => {
    Object.assign(block, { service: e2e.service, discord: e2e.discord, bot: e2e.bot });
    await deployCommands({
      token: e2e.discord.token,
      applicationId: e2e.discord.applicationId,
      apiUrl: e2e.discord.apiUrl,
    });
  });
  return block;
}

/** Resolves with the next outcome of `command` (a command, `<name>:button` for a press) in `channel`. */
function outcomeIn(block: Block, channel: FakeChannel, command = 'chat'): Promise<CommandOutcome> {
  const conversationId = `discord:${block.discord.guildId}:${channel.id}`;
  return block.bot
    .outcomes((o) => o.conversationId === conversationId && o.command === command, 1, 30_000)
    .then(([o]) => o!);
}

/** Resolves once the service has received `count` more chat requests than it had. */
function chatRequests(service: FakeService, count: number): Promise<void> {
  const target = service.chatRequests().length + count;
  return new Promise((resolve) => {
    const check = () => {
      if (service.chatRequests().length < target) return;
      service.events.off('request', check);
      resolve();
    };
    service.events.on('request', check);
    check();
  });
}

describe('a guild whose language is German, and an asker whose client is in German', () => {
  const block = useGuild('de', { SERVICE_MAX_CONCURRENCY: '1' });

  it('/chat while the service is busy: the queue line, its Stop button and the finished answer’s buttons are German', async () => {
    const { service, discord } = block;
    const busy = discord.addChannel('beschaeftigt');
    const channel = discord.addChannel('warteschlange');
    // The first answer holds the only slot of the service for 6 s.
    service.enqueue('chat', { delayHeadersMs: 6_000, stream: { text: 'Erste Antwort.' } });
    const first = outcomeIn(block, busy);
    const started = chatRequests(service, 1);
    discord.dispatchInteraction({ channelId: busy.id, command: 'chat', options: { prompt: 'Langsam' } });
    await started;

    service.enqueue('chat', { stream: { text: 'Zweite Antwort.' } });
    const done = outcomeIn(block, channel);
    const asked = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Wie spät ist es?' },
      user: ANNA,
      locale: 'de',
    });
    const queued = () => asked.original?.revisions.find((r) => r.content.startsWith('⏳'));
    await expect
      .poll(() => queued()?.content, { timeout: 5_500 })
      .toBe('⏳ In der Warteschlange: du bist als Nächstes dran.');
    expect(labelsIn(queued()!.components)).toEqual(['Stopp']);

    expect((await first).ok).toBe(true);
    expect((await done).ok).toBe(true);
    const answer = asked.original!;
    expect(answer.content).toBe('Zweite Antwort.');
    expect(labelsIn(answer.components)).toEqual(['🔄 Neu generieren', '👍', '👎']);
  }, 40_000);
});

describe('a guild whose language is English, and members whose clients are in German', () => {
  const block = useGuild('en-US');

  it('the answer’s public buttons are English; a refused Stop, a refused Regenerate and the asker’s 👎 are told in German to the presser alone', async () => {
    const { service, discord } = block;
    const channel = discord.addChannel('mixed');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    const pieces = Array.from({ length: 40 }, (_, i) => `Wort${i + 1} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 60 } });
    const done = outcomeIn(block, channel);
    const asked = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Zähl langsam' },
      user: ANNA,
      locale: 'de',
    });
    await discord.waitFor(
      'write',
      (w) => w.interactionId === asked.id && discord.message(w.messageId)!.buttons.length > 0,
    );
    const message = asked.original!;
    expect(labelsIn(message.components)).toEqual(['Stop']);
    const stop = String(message.buttons[0]!.custom_id);

    const stopRefused = outcomeIn(block, channel, 'stop:button');
    const pressedStop = discord.pressButton({ messageId: message.id, customId: stop, user: BERND, locale: 'de' });
    await stopRefused;
    expect(ephemeralOf(pressedStop).content).toBe(
      'Nur die Person, die gefragt hat, oder ein Admin kann diese Antwort stoppen.',
    );

    expect((await done).ok).toBe(true);
    expect(labelsIn(message.components)).toEqual(['🔄 Regenerate', '👍', '👎']);
    const idOf = (start: string, end = '') =>
      message.buttons.map((b) => String(b.custom_id)).find((id) => id.startsWith(start) && id.endsWith(end))!;

    const regenerateRefused = outcomeIn(block, channel, 'regenerate:button');
    const pressedRegenerate = discord.pressButton({
      messageId: message.id,
      customId: idOf('regenerate:'),
      user: BERND,
      locale: 'de',
    });
    expect(await regenerateRefused).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(pressedRegenerate).content).toBe(
      'Nur die Person, die gefragt hat, oder ein Admin kann diese Antwort neu generieren.',
    );

    const voted = outcomeIn(block, channel, 'feedback:button');
    const down = discord.pressButton({
      messageId: message.id,
      customId: idOf('feedback:', ':down'),
      user: ANNA,
      locale: 'de',
    });
    await voted;
    const acknowledgement = ephemeralOf(down);
    expect(acknowledgement.content).toBe('Danke – 👎 vermerkt. Was war falsch? Du kannst einen Grund angeben.');
    expect(labelsIn(acknowledgement.components)).toEqual(['✍️ Grund angeben']);
    // The answer itself is as it was: still in the place's words.
    expect(labelsIn(message.components)).toEqual(['🔄 Regenerate', '👍', '👎']);
  }, 40_000);
});

describe('a guild whose language is French, and an asker whose client is in English', () => {
  const block = useGuild('fr', { NOTIFY_AFTER_SECONDS: '1' });

  it('a public answer cut at its length limit ends with its note in French, and its notice is French', async () => {
    const { service, discord } = block;
    const channel = discord.addChannel('general-fr');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    const pieces = ['Une ', 'réponse ', 'longue ', 'qui ', 's’arrête'];
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 300, finishReason: 'length' } });
    const done = outcomeIn(block, channel);
    const asked = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Write a long answer' },
      locale: 'en-US',
    });
    expect((await done).ok).toBe(true);
    expect(asked.original!.content).toBe(
      'Une réponse longue qui s’arrête\n\n_⚠️ La réponse s’est arrêtée à sa limite de longueur (max_tokens)._',
    );
    expect(labelsIn(asked.original!.components)).toEqual(['🔄 Régénérer', '👍', '👎']);
    const notice = discord
      .messagesIn(channel.id)
      .find((m) => m.author.id === discord.botUser.id && m.id !== asked.original!.id && !m.ephemeral);
    expect(notice?.content).toBe(`<@${asked.user.id}> votre réponse est prête ↑`);
  }, 40_000);
});
