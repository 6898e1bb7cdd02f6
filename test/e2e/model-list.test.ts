/**
 * A `/v1/models` list without a chat model (issue 18, item 4), end to end on Discord with no
 * DEFAULT_CHAT_MODEL: a lookup that finds no chat model fetches the list again once before
 * failing, so one bad answer of the service is not trusted for the catalog's minute; and when
 * the service really lists none, the sentence says what is missing and which setting fixes it,
 * not that an answer could not be read.
 */
import { describe, expect, it } from 'vitest';
import type { FakeDiscord } from '../fakes/discord.ts';
import { DEFAULT_MODELS, type FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** The listed image models only: what `/v1/models` holds when it lists no chat model. */
const IMAGE_ONLY = DEFAULT_MODELS.filter((m) => m.type === 'image');

/** Runs /chat in a channel of its own; resolves with the interaction once the bot is done. */
async function chatIn(discord: FakeDiscord, testBot: TestBot, name: string, prompt: string) {
  const channel = discord.addChannel(name);
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel.id}`));
  const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt }, channelId: channel.id });
  const [outcome] = await done;
  return { interaction, outcome: outcome! };
}

/** GET /v1/models requests the service received. */
const modelRequests = (service: FakeService) =>
  service.requests.filter((r) => r.route === 'models' && r.method === 'GET').length;

describe('a list with only image models, then a good one', () => {
  let service: FakeService;
  let discord: FakeDiscord;
  let testBot: TestBot;
  useE2E({ discord: {}, bot: {} }, (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  });

  it('the /chat that got it fetches the list again and answers at once', async () => {
    const imagesOnly = IMAGE_ONLY.map((m) => ({ ...m, object: 'model' }));
    service.enqueue('models', { status: 200, body: { object: 'list', data: imagesOnly } });
    const before = modelRequests(service);
    const { interaction, outcome } = await chatIn(discord, testBot, 'models-once', 'hello there');
    expect(outcome.ok).toBe(true);
    expect(interaction.original!.content).toBe('Echo: hello there');
    expect(modelRequests(service) - before).toBe(2);
    expect(service.chatRequests().at(-1)!.model).toBe('fake-chat');
  });
});

describe('a list with only image models all along', () => {
  let service: FakeService;
  let discord: FakeDiscord;
  let testBot: TestBot;
  useE2E({ service: { models: IMAGE_ONLY }, discord: {}, bot: {} }, (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  });

  it('/chat says the service lists no chat model and names DEFAULT_CHAT_MODEL, with a reference, after one more look', async () => {
    const before = modelRequests(service);
    const { interaction, outcome } = await chatIn(discord, testBot, 'models-never', 'hello?');
    expect(outcome.ok).toBe(false);
    // Told to the user alone (the "thinking…" reply removed).
    const told = interaction.messages.filter((m) => m.ephemeral).map((m) => m.content);
    expect(told).toEqual([
      expect.stringMatching(
        /^The generation service lists no chat model \(only image models, or none\)\. An admin can set DEFAULT_CHAT_MODEL to the model to use\. \(ref [2-9A-Z]{6}\)$/,
      ),
    ]);
    expect(modelRequests(service) - before).toBe(2);
    expect(service.chatRequests()).toEqual([]);
  });
});
