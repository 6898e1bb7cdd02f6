/**
 * End-to-end, reloading the configuration without a restart (issue 43 item 4): the bot runs
 * in this process with discord.js unmodified against FakeDiscord and FakeService, started as
 * src/main.ts starts it (`.env` under the process's environment), and reloaded with the very
 * function its SIGHUP handler calls, after the test rewrote `.env` (helpers/reloading.ts).
 * test/start-reload.test.ts sends a real SIGHUP to `npm start`; reload-live.test.ts checks that
 * every live variable reaches the running bot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import { type Reloading, startFromEnvFile } from '../helpers/reloading.ts';
import { discordEnv, type TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;

useE2E({ discord: {}, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord } = e2e);
});

let running: TestBot | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Starts the bot with the fakes' Discord in its environment, the service's address and key in `.env`. */
async function startFrom(lines: Record<string, string>): Promise<Reloading> {
  const { SERVICE_BASE_URL: _address, SERVICE_API_KEY: _key, ...fakes } = discordEnv(service, discord);
  const inFile = { SERVICE_BASE_URL: service.baseUrl, SERVICE_API_KEY: service.apiKey };
  const started = await startFromEnvFile(fakes, inFile, lines);
  running = started.testBot;
  return started;
}

/** A channel of its own for a test's answers. */
function channel(name: string): FakeChannel {
  const made = discord.addChannel(name);
  discord.setMessageBudget(made.id, { limit: 1000, windowMs: 1000 });
  return made;
}

/** Runs /chat in `at` and resolves with its outcome and the model the service was asked for. */
async function chat(testBot: TestBot, at: FakeChannel, prompt: string) {
  const done = testBot.outcomes((o: CommandOutcome) => o.command === 'chat' && o.conversationId.endsWith(at.id));
  const interaction = discord.dispatchInteraction({ command: 'chat', channelId: at.id, options: { prompt } });
  const [outcome] = await done;
  const body = service.chatRequests().findLast((b) => JSON.stringify(b.messages).includes(prompt));
  return { outcome: outcome!, interaction, model: body?.model };
}

/** The value of `genbot_config_reloads_total{result}` in the bot's registry. */
async function reloads(testBot: TestBot, result: 'applied' | 'refused'): Promise<number | undefined> {
  const metric = await testBot.bot.metrics.registry.getSingleMetric('genbot_config_reloads_total')?.get();
  return metric?.values.find((v) => v.labels.result === result)?.value;
}

describe('reload (SIGHUP) of a changed .env', () => {
  it('a changed default model: the next /chat uses it, while the answer streaming ends exactly as the service sent it', async () => {
    const { testBot, write, reload } = await startFrom({ DEFAULT_CHAT_MODEL: 'fake-chat', LOG_LEVEL: 'info' });
    const pieces = ['The answer ', 'that was ', 'streaming ', 'when the ', 'bot reloaded.'];
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    service.enqueue('chat', { stream: { pieces, hold: { afterChunks: 3, until } } });
    const early = channel('reload-early');
    const inFlight = chat(testBot, early, 'the long one');
    // Its first text is on Discord, and the rest held back by the service: the answer is in flight.
    await discord.waitFor('write', (w) => w.channelId === early.id && w.content.startsWith('The answer '));

    write({ DEFAULT_CHAT_MODEL: 'fake-vision', LOG_LEVEL: 'info' });
    const outcome = await reload();
    expect(outcome).toMatchObject({ result: 'applied', changed: ['DEFAULT_CHAT_MODEL'], needRestart: [] });
    const after = await chat(testBot, channel('reload-after'), 'after the reload');
    expect(after.outcome.ok).toBe(true);
    expect(after.model).toBe('fake-vision');

    release();
    const streamed = await inFlight;
    expect(streamed.outcome.ok).toBe(true);
    expect(streamed.model).toBe('fake-chat');
    expect(streamed.interaction.original!.content).toBe(pieces.join(''));
    expect(testBot.bot.config.models.chat).toBe('fake-vision');
    expect(testBot.logs.filter((l) => l.msg === 'configuration reloaded')).toHaveLength(1);
    expect(await reloads(testBot, 'applied')).toBe(1);
  });

  it.each([
    ['SERVICE_BASE_URL', 'not-a-url', 'SERVICE_BASE_URL must be an http(s) URL'],
    ['QUOTA_CHAT_PER_MINUTE', 'abc', 'QUOTA_CHAT_PER_MINUTE '],
  ])(
    'a bad .env (%s=%s) is refused: the old configuration runs on and the one error line names the variable',
    async (name, value, said) => {
      const { testBot, write, reload } = await startFrom({ DEFAULT_CHAT_MODEL: 'fake-chat', LOG_LEVEL: 'info' });
      write({ DEFAULT_CHAT_MODEL: 'fake-vision', LOG_LEVEL: 'debug', [name]: value });
      const outcome = await reload();
      expect(outcome.result).toBe('refused');
      expect(outcome.problems.join('\n')).toContain(name);

      const errors = testBot.logs.filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toContain('configuration reload refused, the running configuration stays');
      expect(errors[0]!.msg).toContain('Invalid configuration:');
      expect(errors[0]!.msg).toContain(said);
      expect(errors[0]!.variables).toEqual([name]);
      expect(errors[0]!.msg).not.toContain(value);
      expect(testBot.rawLog()).not.toContain(service.apiKey);

      // Nothing of the refused file applies, the valid lines included: the old model, the old level.
      const next = await chat(testBot, channel(`refused-${name.toLowerCase()}`), `still the old one ${name}`);
      expect(next.outcome.ok).toBe(true);
      expect(next.model).toBe('fake-chat');
      expect(testBot.bot.config.models.chat).toBe('fake-chat');
      expect(testBot.logs.some((l) => l.level === 20)).toBe(false);
      expect(await reloads(testBot, 'refused')).toBe(1);
      expect(await reloads(testBot, 'applied')).toBe(0);
    },
  );

  it('LOG_LEVEL=debug on reload makes debug lines appear', async () => {
    const { testBot, write, reload } = await startFrom({ LOG_LEVEL: 'info' });
    await chat(testBot, channel('level-before'), 'before, at info');
    expect(testBot.logs.some((l) => l.level === 20)).toBe(false);

    write({ LOG_LEVEL: 'debug' });
    expect((await reload()).changed).toEqual(['LOG_LEVEL']);
    await chat(testBot, channel('level-after'), 'after, at debug');
    expect(testBot.logs.filter((l) => l.level === 20).map((l) => l.msg)).toContain('answer streamed');
  });

  it('variables that need a restart are named in one warn line, never with their values, and keep running as they were', async () => {
    const { testBot, write, reload } = await startFrom({ LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '5000' });
    const newKey = 'sk-rotated-key-not-yet-in-use-0123456789';
    write({ LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '7000', SERVICE_API_KEY: newKey, NOTIFY_AFTER_SECONDS: '99' });
    const outcome = await reload();
    expect(outcome).toMatchObject({ result: 'applied', changed: ['NOTIFY_AFTER_SECONDS'] });

    const warns = testBot.logs.filter((l) => l.level === 40);
    expect(warns).toHaveLength(1);
    expect(warns[0]!.variables).toEqual(['SERVICE_API_KEY', 'SHUTDOWN_GRACE_MS']);
    expect(testBot.rawLog()).not.toContain(newKey);
    expect(testBot.rawLog()).not.toContain('7000');
    // The running values: the start's key (the service still takes the bot's requests), the start's grace.
    expect(testBot.bot.config.service.apiKey).toBe(service.apiKey);
    expect(testBot.bot.config.shutdownGraceMs).toBe(5000);
    expect((await chat(testBot, channel('restart-only'), 'with the old key')).outcome.ok).toBe(true);
    expect(testBot.bot.core.limits.notifyAfterSeconds).toBe(99);
  });
});
