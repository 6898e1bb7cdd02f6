/**
 * The model catalog behind autocomplete, /models and /settings: choices filtered by what was
 * typed (at most 25), answered at once from the cache, and an empty answer in time when the
 * service is down.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelCatalog, type ModelLists, modelChoices } from '../../src/core/models/catalog.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { FakeService } from '../fakes/service.ts';

let fake: FakeService;
let service: ServiceClient;
beforeAll(async () => {
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
});
afterAll(async () => {
  await service.close();
  await fake.close();
});

const lists = (text: string[], image: Array<[string, string]> = []): ModelLists => ({
  text,
  imageIds: [],
  image: image.map(([display_name, description]) => ({ display_name, description })),
  fetchedAt: 0,
});

describe('modelChoices', () => {
  it('filters by what was typed, prefix matches first, case-insensitively, at most 25', () => {
    const many = lists([...Array.from({ length: 40 }, (_, i) => `gpt-${i}`), 'my-gpt', 'claude']);
    expect(modelChoices(many, 'text', '')).toHaveLength(25);
    expect(modelChoices(many, 'text', 'GPT-3').map((c) => c.value)).toEqual([
      'gpt-3',
      'gpt-30',
      'gpt-31',
      'gpt-32',
      'gpt-33',
      'gpt-34',
      'gpt-35',
      'gpt-36',
      'gpt-37',
      'gpt-38',
      'gpt-39',
    ]);
    expect(modelChoices(many, 'text', 'y-g').map((c) => c.value)).toEqual(['my-gpt']);
    expect(modelChoices(undefined, 'text', 'x')).toEqual([]);
  });

  it('labels image models with their description and sends the display name, within 100 characters', () => {
    const choices = modelChoices(
      lists(
        [],
        [
          ['Painter', 'Oil paintings'],
          ['Long', 'x'.repeat(200)],
        ],
      ),
      'image',
      '',
    );
    expect(choices[0]).toEqual({ name: 'Painter — Oil paintings', value: 'Painter' });
    expect(choices[1]!.name).toHaveLength(100);
    expect(choices[1]!.value).toBe('Long');
  });
});

describe('ModelCatalog', () => {
  it('fetches both lists once within the TTL, text without image models', async () => {
    fake.reset();
    const catalog = new ModelCatalog(service, { ttlMs: 60_000 });
    const first = await catalog.lists();
    await catalog.lists();
    expect(first.text).toEqual(['fake-chat', 'fake-vision']);
    expect(first.imageIds).toEqual(['fake-image', 'fake-image-xl']);
    expect(first.image.map((m) => m.display_name)).toEqual(['Fake Image', 'Fake Image XL']);
    expect(fake.requests.map((r) => r.route).sort()).toEqual(['imageModels', 'models']);
  });

  it('answers autocomplete from stale lists at once, refreshing behind, and with nothing in time when the service is down', async () => {
    let now = 0;
    const catalog = new ModelCatalog(service, { ttlMs: 1000, now: () => now });
    await catalog.lists();
    fake.reset();
    now = 5000;
    expect((await catalog.quick(50))?.text).toEqual(['fake-chat', 'fake-vision']);

    // A service that accepts connections and never answers.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const down = new ServiceClient({
      baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`,
      apiKey: 'sk-x',
      maxRetries: 0,
    });
    try {
      const started = performance.now();
      expect(await new ModelCatalog(down).quick(300)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      silent.closeAllConnections();
      await down.close();
      silent.close();
    }
  });
});
