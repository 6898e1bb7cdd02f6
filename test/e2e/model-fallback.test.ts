/**
 * End-to-end, model fallback (issue 43 item 5): with FALLBACK_CHAT_MODELS / FALLBACK_IMAGE_MODELS
 * set, a model the service says is unavailable before any text (5xx, model-not-found, no headers
 * in time; a stream that opened but sends an error or nothing before its first text) gives way to
 * the next one, whose answer names it; `genbot_fallbacks_total{from,to}`
 * counts each step and a warn line logs it; spend is settled at the prices of the model that
 * answered. What does not fall back: an answer cut in the middle (shown as cut, asked once), a
 * 400 that is the user's. A reload that changes FALLBACK_CHAT_MODELS applies to the next request.
 * The bot runs in this process against FakeDiscord, FakeSlack and FakeService, each model's
 * failure scripted with `service.setModelBehaviour`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { readAnswerState } from '../../src/core/features/answer-state.ts';
import type { FakeDiscord, FakeInteraction, OptionValue } from '../fakes/discord.ts';
import { DEFAULT_MODELS, type FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import { type Reloading, startFromEnvFile } from '../helpers/reloading.ts';
import { discordEnv, type TestBot } from './harness.ts';

const MODELS = [...DEFAULT_MODELS, { id: 'model-a' }, { id: 'model-b' }, { id: 'model-c' }];
const CHANNELS = { mention: 'C0FALLBACK' } as const;

/** A price table: model-b dearer than model-a, so that a settlement at the wrong prices shows. */
function priceFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'genbot-fallback-prices-')), 'prices.json');
  const chat = {
    'model-a': { prompt: 1, completion: 1 },
    'model-b': { prompt: 1000, completion: 1000 },
    'model-c': { prompt: 2, completion: 2 },
  };
  writeFileSync(path, JSON.stringify({ currency: 'USD', chat }));
  return path;
}

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;
let opsUrl: string;

useE2E(
  {
    discord: {},
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: (e2e) => {
      e2e.service.setModels(MODELS);
      return undefined;
    },
    resetServiceAfterEach: true,
    bot: {
      env: {
        HTTP_PORT: '0',
        DEFAULT_CHAT_MODEL: 'model-a',
        FALLBACK_CHAT_MODELS: 'model-b,model-c',
        DEFAULT_IMAGE_MODEL: 'Fake Image',
        FALLBACK_IMAGE_MODELS: 'Fake Image XL',
        PRICES_FILE: priceFile(),
      },
    },
  },
  (e2e) => {
    ({ service, discord, slack, bot: testBot, botUrl } = e2e);
    opsUrl = `http://127.0.0.1:${testBot.bot.ops!.port}`;
  },
);

/** The value of a series of /metrics (0 when it is not there). */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (match[2]!.split(',').sort().join(',') === wanted) return Number(match[3]);
  }
  return 0;
}

const fallbacks = (from: string, to: string) => metric('genbot_fallbacks_total', { from, to });

/** Dispatches a slash command in a channel of its own and waits until the bot has finished with it. */
async function run(
  command: string,
  options: Record<string, OptionValue>,
  channelName: string,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const channel = discord.addChannel(channelName);
  const conversationId = `discord:${discord.guildId}:${channel.id}`;
  const done = testBot.outcomes((o) => o.conversationId === conversationId);
  const interaction = discord.dispatchInteraction({ command, options, channelId: channel.id });
  const [outcome] = await done;
  return { interaction, outcome: outcome! };
}

/** The models of the chat requests the service received, in order. */
const chatModels = () => service.chatRequests().map((b) => b.model);

/** The warn lines of fallbacks logged so far. */
const fallbackLines = () => testBot.logs.filter((l) => l.fallback !== undefined);

const MODEL_A_DOWN = { status: 503 } as const;

/** A 404 model_not_found for `model` (not retried by the client). */
const notFound = (model: string) => ({
  status: 404,
  body: {
    error: { message: `The model '${model}' does not exist`, type: 'invalid_request_error', code: 'model_not_found' },
  },
});

/**
 * The control of a test of what does not fall back: the same model failing before any text does
 * (the chain is configured and working), so the refusal to fall back was the rule's, not chance's.
 */
async function expectFallbackStillWorks(channelName: string): Promise<void> {
  service.setModelBehaviour('model-a', notFound('model-a'));
  const asked = service.chatRequests().length;
  const { outcome } = await run('chat', { prompt: 'And now?' }, channelName);
  expect(outcome.ok).toBe(true);
  expect(chatModels().slice(asked)).toEqual(['model-a', 'model-b']);
}

describe('model fallback on Discord /chat', () => {
  it('model-a answering 503 (after the retries) → model-b answers, named under the answer, counted, logged, and spend settled at model-b', async () => {
    const before = await fallbacks('model-a', 'model-b');
    const spentA = await metric('genbot_spend_total', { model: 'model-a', currency: 'USD' });
    const spentB = await metric('genbot_spend_total', { model: 'model-b', currency: 'USD' });
    const lines = fallbackLines().length;
    service.setModelBehaviour('model-a', MODEL_A_DOWN);
    service.setChatReply((body) => `Hello from ${body.model}.`);

    const { interaction, outcome } = await run('chat', { prompt: 'Are you there?' }, 'fallback-503');
    expect(outcome.ok).toBe(true);
    // The client's two retries of model-a, then model-b once.
    expect(chatModels()).toEqual(['model-a', 'model-a', 'model-a', 'model-b']);
    expect(interaction.original!.content).toBe(
      'Hello from model-b.\n\n_⚠️ Answered by model-b: model-a is unavailable right now._',
    );
    expect(interaction.followUps.filter((m) => m.ephemeral)).toEqual([]);
    expect(await fallbacks('model-a', 'model-b')).toBe(before + 1);
    const logged = fallbackLines().slice(lines);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 40, fallback: 'chat', from: 'model-a', to: 'model-b', status: 503 });
    expect(JSON.stringify(logged[0])).not.toContain(service.apiKey);
    // Regenerate's state keeps the request as asked (the same chain again) and names the model that answered.
    const regenerate = interaction
      .original!.components.flatMap((row) => (row.components as Array<{ custom_id?: string }>).map((b) => b.custom_id))
      .find((id) => id?.startsWith('regenerate:'));
    const state = await readAnswerState(testBot.bot.core, regenerate!.split(':')[1]!);
    expect(state).toMatchObject({ answeredBy: 'model-b', request: { body: { model: 'model-a' } } });
    // Paid once, at the prices of the model that answered; model-a's reservation given back.
    expect(await metric('genbot_spend_total', { model: 'model-a', currency: 'USD' })).toBe(spentA);
    expect(await metric('genbot_spend_total', { model: 'model-b', currency: 'USD' })).toBeGreaterThan(spentB);
  });

  it('a chain of two: model-a 503 and model-b 500 → model-c answers, and each step is counted', async () => {
    const ab = await fallbacks('model-a', 'model-b');
    const bc = await fallbacks('model-b', 'model-c');
    service.setModelBehaviour('model-a', MODEL_A_DOWN);
    service.setModelBehaviour('model-b', { status: 500 });
    service.setChatReply((body) => `Hello from ${body.model}.`);

    const { interaction, outcome } = await run('chat', { prompt: 'Anyone?' }, 'fallback-chain');
    expect(outcome.ok).toBe(true);
    expect(chatModels()).toEqual(['model-a', 'model-a', 'model-a', 'model-b', 'model-b', 'model-b', 'model-c']);
    expect(interaction.original!.content).toBe(
      'Hello from model-c.\n\n_⚠️ Answered by model-c: model-a is unavailable right now._',
    );
    expect(await fallbacks('model-a', 'model-b')).toBe(ab + 1);
    expect(await fallbacks('model-b', 'model-c')).toBe(bc + 1);
  });

  it("every model of the chain down → each asked once (no loop), and the asked model's failure is told as today", async () => {
    for (const model of ['model-a', 'model-b', 'model-c']) service.setModelBehaviour(model, notFound(model));
    const { interaction, outcome } = await run('chat', { prompt: 'Nobody?' }, 'fallback-all-down');
    expect(outcome).toMatchObject({ ok: false, errorCode: 'not_found' });
    expect(chatModels()).toEqual(['model-a', 'model-b', 'model-c']);
    const told = interaction.followUps.find((m) => m.ephemeral)?.content;
    expect(told).toMatch(/model-a/);
    expect(told).not.toMatch(/model-[bc]/);
  });

  it('a stream that opened (200) but reports an error before any text → model-b answers, named, and model-a showed nothing', async () => {
    const before = await fallbacks('model-a', 'model-b');
    service.setModelBehaviour('model-a', {
      stream: { errorMidStream: { error: { message: 'overloaded', type: 'server_error' } }, afterChunks: 1 },
    });
    service.setChatReply((body) => `Hello from ${body.model}.`);
    const logged = fallbackLines().length;
    const { interaction, outcome } = await run('chat', { prompt: 'Anyone?' }, 'fallback-error-event');
    expect(outcome.ok).toBe(true);
    expect(chatModels()).toEqual(['model-a', 'model-b']);
    expect(interaction.original!.content).toBe(
      'Hello from model-b.\n\n_⚠️ Answered by model-b: model-a is unavailable right now._',
    );
    expect(fallbackLines().slice(logged)).toEqual([
      expect.objectContaining({ from: 'model-a', to: 'model-b', code: 'stream_interrupted' }),
    ]);
    expect(await fallbacks('model-a', 'model-b')).toBe(before + 1);
  });

  it('/complete whose model fails before any text: the prompt is shown once, then model-b continues it', async () => {
    service.setModelBehaviour('model-a', {
      stream: { errorMidStream: { error: { message: 'overloaded', type: 'server_error' } }, afterChunks: 0 },
    });
    service.setCompletionReply((body) => ` went on with ${body.model}.`);
    const { interaction, outcome } = await run('complete', { prompt: 'It' }, 'fallback-complete');
    expect(outcome.ok).toBe(true);
    const asked = service.requests
      .filter((r) => r.route === 'completions')
      .map((r) => (r.body as { model: string }).model);
    expect(asked).toEqual(['model-a', 'model-b']);
    expect(interaction.original!.content).toBe(
      'It went on with model-b.\n\n_⚠️ Answered by model-b: model-a is unavailable right now._',
    );
  });

  it('a stream cut after some text is not asked again: exactly one request, shown as cut, nothing counted', async () => {
    const before = await fallbacks('model-a', 'model-b');
    service.setModelBehaviour('model-a', { stream: { pieces: ['Going ', 'well ', 'so ', 'far'], dropAfterChunks: 3 } });
    const { interaction, outcome } = await run('chat', { prompt: 'Tell me' }, 'fallback-cut');
    expect(outcome).toMatchObject({ ok: false, errorCode: 'stream_interrupted' });
    expect(chatModels()).toEqual(['model-a']);
    expect(interaction.original!.content).toMatch(
      /^Going well \n\n⚠️ The answer was cut off because the generation service stopped sending\. Try again\. \(ref [2-9A-Z]{6}\)$/,
    );
    expect(await fallbacks('model-a', 'model-b')).toBe(before);
    await expectFallbackStillWorks('fallback-cut-control');
  });

  it("a 400 that is the user's (a bad parameter) does not fall back: one request, the service's refusal told", async () => {
    const before = await fallbacks('model-a', 'model-b');
    service.setModelBehaviour('model-a', {
      status: 400,
      body: {
        error: {
          message: "Invalid 'temperature': too hot.",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'invalid_value',
        },
      },
    });
    const { interaction, outcome } = await run('chat', { prompt: 'Hot?' }, 'fallback-400');
    expect(outcome).toMatchObject({ ok: false, errorCode: 'bad_request' });
    expect(chatModels()).toEqual(['model-a']);
    expect(interaction.followUps.find((m) => m.ephemeral)?.content).toMatch(/too hot/);
    expect(await fallbacks('model-a', 'model-b')).toBe(before);
    await expectFallbackStillWorks('fallback-400-control');
  });
});

describe('model fallback on Slack and /imagine', () => {
  it('a Slack mention whose model is not found (404 model_not_found) is answered by model-b in its thread, named', async () => {
    const before = await fallbacks('model-a', 'model-b');
    service.setModelBehaviour('model-a', {
      status: 404,
      body: {
        error: {
          message: "The model 'model-a' does not exist",
          type: 'invalid_request_error',
          code: 'model_not_found',
        },
      },
    });
    service.setChatReply((body) => `Hello from ${body.model}.`);
    const event = slack.mentionEvent({ channel: CHANNELS.mention, user: 'U0ALICE', text: 'Hello there' });
    const conversationId = `slack:${slack.teamId}:${CHANNELS.mention}:${event.ts as string}`;
    const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationId);
    await slack.sendEvent(botUrl, event);
    const [outcome] = await done;
    expect(outcome!.ok).toBe(true);
    // A 404 is not retried: model-a once, then model-b.
    expect(chatModels()).toEqual(['model-a', 'model-b']);
    const answers = slack.messages(CHANNELS.mention).filter((m) => m.user === slack.botUserId);
    expect(answers).toHaveLength(1);
    expect(unescapeSlack(answers[0]!.text)).toContain('Hello from model-b.');
    expect(unescapeSlack(answers[0]!.text)).toContain('Answered by model-b: model-a is unavailable right now.');
    expect(await fallbacks('model-a', 'model-b')).toBe(before + 1);
  });

  it('/imagine whose image model answers 503 → the fallback image model makes it; the caption names it', async () => {
    const before = await fallbacks('Fake Image', 'Fake Image XL');
    service.setModelBehaviour('Fake Image', { status: 503 });
    const { interaction, outcome } = await run('imagine', { prompt: 'a lighthouse' }, 'fallback-imagine');
    expect(outcome.ok).toBe(true);
    const asked = service.requests
      .filter((r) => r.route === 'images')
      .map((r) => (r.body as { user_selected_model?: string }).user_selected_model);
    expect(asked).toEqual(['Fake Image', 'Fake Image', 'Fake Image', 'Fake Image XL']);
    const message = interaction.original!;
    expect(message.attachments).toHaveLength(1);
    expect(message.text).toContain('_Fake Image XL · vivid · 1024×1024');
    expect(message.text).toContain('Answered by Fake Image XL: Fake Image is unavailable right now.');
    expect(await fallbacks('Fake Image', 'Fake Image XL')).toBe(before + 1);
  });
});

describe('a model that is slow to answer', () => {
  // A bot and a Discord of this block's own (the file's bot would answer the same interactions).
  let own: TestBot;
  let ownDiscord: FakeDiscord;
  useE2E(
    {
      service: () => service,
      discord: {},
      bot: {
        env: {
          SERVICE_HEADERS_TIMEOUT_MS: '1000',
          STREAM_IDLE_TIMEOUT_MS: '1000',
          DEFAULT_CHAT_MODEL: 'model-a',
          FALLBACK_CHAT_MODELS: 'model-b',
        },
      },
    },
    (e2e) => {
      ({ bot: own, discord: ownDiscord } = e2e);
    },
  );

  /**
   * A /chat on this block's bot while model-a behaves as `behaviour`: model-b answers, named, and
   * the one fallback logged carries `logged` (its status or code).
   */
  async function expectModelBAnswers(
    behaviour: Parameters<FakeService['setModelBehaviour']>[1],
    channelName: string,
    logged: Record<string, string>,
  ): Promise<void> {
    service.setModelBehaviour('model-a', behaviour);
    service.setChatReply((body) => `Hello from ${body.model}.`);
    const linesBefore = own.logs.length;
    const channel = ownDiscord.addChannel(channelName);
    const done = own.outcomes((o) => o.conversationId === `discord:${ownDiscord.guildId}:${channel.id}`);
    const interaction = ownDiscord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'Anyone there?' },
      channelId: channel.id,
    });
    const [outcome] = await done;
    expect(outcome!.ok).toBe(true);
    // A timeout is not retried: model-a once, then model-b.
    expect(chatModels()).toEqual(['model-a', 'model-b']);
    expect(interaction.original!.content).toBe(
      'Hello from model-b.\n\n_⚠️ Answered by model-b: model-a is unavailable right now._',
    );
    expect(own.logs.slice(linesBefore).filter((l) => l.fallback !== undefined)).toEqual([
      expect.objectContaining({ from: 'model-a', to: 'model-b', ...logged }),
    ]);
  }

  it('past SERVICE_HEADERS_TIMEOUT_MS, the next model answers', async () => {
    await expectModelBAnswers({ hang: true }, 'fallback-headers', { status: 'timeout' });
  });

  it('a stream that opened but sends no text past STREAM_IDLE_TIMEOUT_MS (keep-alives only) → the next model answers', async () => {
    await expectModelBAnswers({ stream: { stallAfterChunks: 1, keepAliveMs: 100 } }, 'fallback-idle', {
      code: 'stream_idle',
    });
  });
});

describe('FALLBACK_CHAT_MODELS reloaded', () => {
  let ownDiscord: FakeDiscord;
  useE2E({ service: () => service, discord: {} }, (e2e) => {
    ownDiscord = e2e.discord;
  });
  let reloading: Reloading | undefined;
  afterEach(async () => {
    await reloading?.testBot.stop();
    reloading = undefined;
  });

  it('a SIGHUP reload that sets FALLBACK_CHAT_MODELS applies to the next /chat', async () => {
    reloading = await startFromEnvFile(discordEnv(service, ownDiscord), {}, { DEFAULT_CHAT_MODEL: 'model-a' });
    const bot = reloading.testBot;
    service.setModelBehaviour('model-a', {
      status: 404,
      body: { error: { message: 'no such model', code: 'model_not_found' } },
    });
    service.setChatReply((body) => `Hello from ${body.model}.`);
    const chat = async (name: string) => {
      const channel = ownDiscord.addChannel(name);
      const done = bot.outcomes((o) => o.conversationId === `discord:${ownDiscord.guildId}:${channel.id}`);
      const interaction = ownDiscord.dispatchInteraction({
        command: 'chat',
        options: { prompt: 'Hi' },
        channelId: channel.id,
      });
      return { interaction, outcome: (await done)[0]! };
    };
    expect((await chat('reload-before')).outcome).toMatchObject({ ok: false, errorCode: 'not_found' });
    expect(chatModels()).toEqual(['model-a']);

    reloading.write({ DEFAULT_CHAT_MODEL: 'model-a', FALLBACK_CHAT_MODELS: 'model-c' });
    expect((await reloading.reload()).changed).toEqual(['FALLBACK_CHAT_MODELS']);
    const after = await chat('reload-after');
    expect(after.outcome.ok).toBe(true);
    expect(chatModels()).toEqual(['model-a', 'model-a', 'model-c']);
    expect(after.interaction.original!.content).toBe(
      'Hello from model-c.\n\n_⚠️ Answered by model-c: model-a is unavailable right now._',
    );
  });
});
