/**
 * The admin commands and the history budget in the core, against the strict fake service:
 * /models pages within each platform's limits, /settings per channel (checked against the
 * live lists, surviving a restart), /forget with its rights, and the history trimmed to
 * HISTORY_TOKEN_BUDGET with a notice.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import forgetCommand from '../../commands/forget.ts';
import modelsCommand from '../../commands/models.ts';
import settingsCommand from '../../commands/settings.ts';
import { runCommand, runComponent, runInvocation } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { AUTO_THREAD_ON_SLACK } from '../../src/core/features/settings.ts';
import { english } from '../../src/core/i18n/words.ts';
import type { ComponentContext, OutgoingMessage } from '../../src/core/platform.ts';
import type { CardLimits } from '../../src/core/platform-cards.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { estimateMessageTokens } from '../../src/core/tokens.ts';
import {
  DEFAULT_IMAGE_MODELS,
  DEFAULT_MODELS,
  type FakeImageModel,
  type FakeModel,
  FakeService,
} from '../fakes/service.ts';
import { type Recorder, recorder } from './recorder.ts';

let fake: FakeService;
let service: ServiceClient;
let storePath: string;
let core: Core;

/** A core on the test's SQLite file (a "restart" is a new core on the same file). */
function makeCore(limits: { historyTokenBudget?: number } = {}): Core {
  // Lists are fetched afresh each time: the tests change them between commands.
  return createCore({
    service,
    store: openLocalStore(storePath),
    log: pino({ level: 'silent' }),
    defaults: { chat: undefined, image: undefined },
    limits,
    catalogTtlMs: 0,
  });
}

beforeAll(async () => {
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  storePath = join(mkdtempSync(join(tmpdir(), 'genbot-admin-')), 'state.sqlite');
  core = makeCore();
});
beforeEach(() => {
  fake.reset();
  fake.setModels([...DEFAULT_MODELS], [...DEFAULT_IMAGE_MODELS]);
});
afterAll(async () => {
  await closeCore(core);
  await service.close();
  await fake.close();
});

const DISCORD_CARDS: CardLimits = { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' };
const SLACK_CARDS: CardLimits = { maxFields: 40, maxChars: 100_000, maxValueChars: 2900, paging: 'messages' };

/** An admin's context with a platform's card limits. */
function adminContext(
  conversationId: string,
  options: Record<string, string | boolean>,
  cards: CardLimits,
  admin = true,
): Recorder {
  const r = recorder(conversationId, options, { admin });
  (r.ctx.reply as { limits: unknown }).limits = { ...r.ctx.reply.limits, cards };
  return r;
}

/** 50 text and 10 image models, with long descriptions. */
function sixtyModels(): { models: FakeModel[]; images: FakeImageModel[] } {
  const models: FakeModel[] = Array.from({ length: 50 }, (_, i) => ({
    id: `text-model-${String(i).padStart(2, '0')}`,
  }));
  const images: FakeImageModel[] = Array.from({ length: 10 }, (_, i) => ({
    display_name: `Painter ${i}`,
    description: `Paints in style number ${i}. `.repeat(8),
  }));
  models.push(...images.map((m) => ({ id: m.display_name, type: 'image' })));
  return { models, images };
}

function cardChars(message: OutgoingMessage): number {
  return (message.cards ?? []).reduce(
    (n, c) =>
      n + c.title.length + (c.footer?.length ?? 0) + c.fields.reduce((m, f) => m + f.name.length + f.value.length, 0),
    0,
  );
}

describe('/models', () => {
  it('pages 60 models for Discord within 25 fields and 6,000 characters, with Previous/Next buttons that turn the page', async () => {
    const { models, images } = sixtyModels();
    fake.setModels(models, images);
    const r = adminContext('a:models', {}, DISCORD_CARDS);
    expect(await runCommand(modelsCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(r.messages).toEqual([]);
    expect(r.ephemeralMessages).toHaveLength(1);
    const first = r.ephemeralMessages[0]!;
    expect(first.cards![0]!.fields).toHaveLength(25);
    expect(cardChars(first)).toBeLessThanOrEqual(6000);
    expect(first.cards![0]!.footer).toMatch(/^Page 1 of 3/);
    expect(first.buttons!.map((b) => [b.id, b.disabled === true])).toEqual([
      ['models:-1:0', true],
      ['models:1:0', false],
    ]);

    // Next, as the adapter hands it over: the list continues where the first page ended.
    const shown: string[] = [...first.cards![0]!.fields.map((f) => f.name)];
    let page = first;
    for (let i = 0; i < 2; i++) {
      const next = page.buttons!.find((b) => b.label.startsWith('Next'))!;
      let updated: OutgoingMessage | undefined;
      const press: ComponentContext = {
        platform: 'discord',
        conversationId: 'a:models',
        channelKey: 'a:models',
        user: r.ctx.user,
        ref: 'TEST01',
        reply: r.ctx.reply,
        args: next.id.split(':').slice(1),
        limits: r.ctx.reply.limits,
        signal: new AbortController().signal,
        log: pino({ level: 'silent' }),
        update: async (m) => {
          updated = m;
        },
        acknowledge: async () => undefined,
        sendEphemeral: async () => undefined,
      };
      await modelsCommand.onComponent(press, core);
      page = updated!;
      expect(cardChars(page)).toBeLessThanOrEqual(6000);
      shown.push(...page.cards![0]!.fields.map((f) => f.name));
    }
    expect(page.buttons!.find((b) => b.label.startsWith('Next'))!.disabled).toBe(true);
    expect(shown).toEqual([
      ...models.filter((m) => m.type !== 'image').map((m) => m.id),
      ...images.map((m) => `🖼️ ${m.display_name}`),
    ]);
    expect(page.cards![0]!.fields.at(-1)!.value).toMatch(/^image model: Paints in style number 9\..*\(id Painter 9\)$/);
  });

  it('on Slack rolls 60 models over messages of at most 40 fields (within 50 blocks), and public:true shows them to the channel', async () => {
    const { models, images } = sixtyModels();
    fake.setModels(models, images);
    const r = adminContext('a:models-slack', { public: true }, SLACK_CARDS);
    await runCommand(modelsCommand, r.ctx, core);
    expect(r.ephemeralMessages).toEqual([]);
    expect(r.messages.map((m) => m.content)).toEqual(['', '']);
    expect(fake.requests.filter((q) => q.route === 'models')).toHaveLength(1);
  });

  it('is refused at run time to a non-admin, without calling the service', async () => {
    const r = adminContext('a:models-member', {}, DISCORD_CARDS, false);
    expect(await runCommand(modelsCommand, r.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(r.ephemerals).toEqual(['/models is for admins only.']);
    expect(fake.requests).toEqual([]);
  });

  it('a page button of a list shown to one admin is checked when pressed: an admin no longer one is refused and the page does not turn; a public list anyone may page', async () => {
    const { models, images } = sixtyModels();
    fake.setModels(models, images);
    const pressBy = (args: string[], admin: boolean) => {
      const told: string[] = [];
      let updated: OutgoingMessage | undefined;
      const ctx: ComponentContext = {
        platform: 'discord',
        conversationId: 'a:models-press',
        channelKey: 'a:models-press',
        ref: 'TEST01',
        reply: adminContext('a:models-press', {}, DISCORD_CARDS).ctx.reply,
        args,
        user: { id: 'u9', name: 'former admin', isAdmin: async () => admin, canManageMessages: async () => false },
        limits: { maxChars: 2000, minEditIntervalMs: 0, cards: DISCORD_CARDS },
        signal: new AbortController().signal,
        log: pino({ level: 'silent' }),
        update: async (m) => {
          updated = m;
        },
        acknowledge: async () => undefined,
        sendEphemeral: async (m) => void told.push(typeof m === 'string' ? m : m.content),
      };
      return { ctx, told, updated: () => updated };
    };
    // models:1:0 — page 2 of a list shown only to the admin who asked.
    const demoted = pressBy(['1', '0'], false);
    expect(
      await runInvocation(
        'models:button',
        { ...demoted.ctx, reply: { sendEphemeral: demoted.ctx.sendEphemeral } },
        core,
        () => runComponent(modelsCommand, demoted.ctx, core),
      ),
    ).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(demoted.told).toEqual(['/models is for admins only.']);
    expect(demoted.updated()).toBeUndefined();
    const admin = pressBy(['1', '0'], true);
    await runComponent(modelsCommand, admin.ctx, core);
    expect(admin.updated()!.cards![0]!.footer).toMatch(/^Page 2 of 3/);
    const member = pressBy(['1', '1'], false);
    await runComponent(modelsCommand, member.ctx, core);
    expect(member.updated()!.cards![0]!.footer).toMatch(/^Page 2 of 3/);
  });
});

describe('/settings', () => {
  it("a channel's chat_model changes the next /chat there and not in another channel, and survives a restart", async () => {
    const set = adminContext('discord:g:settings-a', { chat_model: 'FAKE-VISION' }, DISCORD_CARDS);
    expect(await runCommand(settingsCommand, set.ctx, core)).toMatchObject({ ok: true });
    const shown = set.ephemeralMessages[0]!.cards![0]!.fields;
    expect(shown.find((f) => f.name === 'chat_model')!.value).toBe('`fake-vision` — set for this channel');
    expect(shown.find((f) => f.name === 'image_model')!.value).toBe("the service's choice — the service's choice");

    const restarted = makeCore();
    try {
      await runCommand(chatCommand, recorder('discord:g:settings-a', { prompt: 'hi' }).ctx, restarted);
      await runCommand(chatCommand, recorder('discord:g:settings-b', { prompt: 'hi' }).ctx, restarted);
      expect(fake.chatRequests().map((q) => q.model)).toEqual(['fake-vision', 'fake-chat']);
    } finally {
      await closeCore(restarted);
    }
  });

  it("sends the channel's system prompt first, uses its image model, and reset puts the defaults back", async () => {
    const channel = 'discord:g:settings-prompt';
    await runCommand(
      settingsCommand,
      adminContext(channel, { system_prompt: 'Answer in French.', image_model: 'fake image xl' }, DISCORD_CARDS).ctx,
      core,
    );
    await runCommand(chatCommand, recorder(channel, { prompt: 'hello' }).ctx, core);
    expect(fake.chatRequests()[0]!.messages[0]).toEqual({ role: 'system', content: 'Answer in French.' });
    const show = adminContext(channel, {}, DISCORD_CARDS);
    await runCommand(settingsCommand, show.ctx, core);
    expect(show.ephemeralMessages[0]!.cards![0]!.fields.find((f) => f.name === 'image_model')!.value).toBe(
      '`Fake Image XL` — set for this channel',
    );
    await runCommand(settingsCommand, adminContext(channel, { reset: 'all' }, DISCORD_CARDS).ctx, core);
    expect(await core.settings.get(channel)).toEqual({});
  });

  it('refuses a model the service does not list, naming close ones, and changes nothing', async () => {
    const r = adminContext('discord:g:settings-bad', { chat_model: 'vision' }, DISCORD_CARDS);
    expect(await runCommand(settingsCommand, r.ctx, core)).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(r.ephemerals).toEqual([
      '`chat_model`: the service lists no text model `vision`. Try `fake-vision`, or see /models.',
    ]);
    expect(await core.settings.get('discord:g:settings-bad')).toEqual({});
  });

  it('auto_thread: kept for a Discord channel (shown, reset by reset:auto_thread), refused on Slack where every answer is threaded', async () => {
    const channel = 'discord:g:settings-threads';
    const set = adminContext(channel, { auto_thread: true }, DISCORD_CARDS);
    expect(await runCommand(settingsCommand, set.ctx, core)).toMatchObject({ ok: true });
    expect(await core.settings.get(channel)).toEqual({ autoThread: true });
    const field = set.ephemeralMessages[0]!.cards![0]!.fields.find((f) => f.name === 'auto_thread');
    expect(field?.value).toMatch(/^on — /);
    await runCommand(settingsCommand, adminContext(channel, { reset: 'auto_thread' }, DISCORD_CARDS).ctx, core);
    expect(await core.settings.get(channel)).toEqual({});

    const slack = adminContext('slack:T1:C1', { auto_thread: true }, SLACK_CARDS);
    (slack.ctx as { platform: string }).platform = 'slack';
    expect(await runCommand(settingsCommand, slack.ctx, core)).toMatchObject({
      ok: false,
      errorCode: 'invalid_option',
    });
    expect(slack.ephemerals).toEqual([english.say(AUTO_THREAD_ON_SLACK)]);
    expect(await core.settings.get('slack:T1:C1')).toEqual({});
  });

  it('is refused at run time to a non-admin', async () => {
    const r = adminContext('discord:g:settings-member', { chat_model: 'fake-chat' }, DISCORD_CARDS, false);
    expect(await runCommand(settingsCommand, r.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(await core.settings.get('discord:g:settings-member')).toEqual({});
  });
});

describe('/forget and the history budget', () => {
  it('/forget empties the history: the next /chat carries no earlier turn', async () => {
    const channel = 'discord:g:forget';
    await runCommand(chatCommand, recorder(channel, { prompt: 'remember 42' }).ctx, core);
    const r = recorder(channel, {}, { admin: true });
    expect(await runCommand(forgetCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(r.messages[0]!.content).toBe(
      '🧹 History cleared (2 messages forgotten): the next message starts a new conversation.',
    );
    await runCommand(chatCommand, recorder(channel, { prompt: 'what number?' }).ctx, core);
    expect(fake.chatRequests().at(-1)!.messages).toEqual([{ role: 'user', content: 'what number?' }]);
  });

  it('/forget in a channel is refused to a member without the right, and allowed to anyone in a DM', async () => {
    await core.history.append('discord:dm:d1', { role: 'user', content: 'x', at: 1 });
    const member = recorder('discord:g:forget2', {});
    expect(await runCommand(forgetCommand, member.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
    const dm = recorder('discord:dm:d1', {}, { directMessage: true });
    expect(await runCommand(forgetCommand, dm.ctx, core)).toMatchObject({ ok: true });
    expect(await core.history.get('discord:dm:d1')).toEqual([]);
  });

  it('with 200 stored turns of 2,000 characters the request stays within the budget, keeps the system prompt and the newest turns, and says how many were left out', async () => {
    const budgeted = makeCore({ historyTokenBudget: 6000 });
    const channel = 'discord:g:budget';
    try {
      const turns = Array.from({ length: 200 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: `${i}:`.padEnd(2000, 'x'),
        at: i,
      }));
      await budgeted.store.keyv.set(`history:${channel}`, { version: 1, messages: turns });
      await budgeted.settings.update(channel, { systemPrompt: 'Be brief.' });
      fake.setChatReply('Sure.');
      const r = recorder(channel, { prompt: 'and now?' });
      await runCommand(chatCommand, r.ctx, budgeted);
      const sent = fake.chatRequests()[0]!.messages;
      expect(estimateMessageTokens(sent as never)).toBeLessThanOrEqual(6000);
      expect(sent[0]).toEqual({ role: 'system', content: 'Be brief.' });
      expect(sent.at(-1)).toEqual({ role: 'user', content: 'and now?' });
      expect(sent[1]!.role).toBe('user');
      expect(String(sent.at(-2)!.content).startsWith('199:')).toBe(true);
      const kept = sent.length - 2;
      expect(kept).toBeGreaterThan(4);
      expect(r.messages[0]!.content).toBe(
        `Sure.\n\n_⚠️ ${200 - kept} earlier messages were left out to keep the conversation within the history budget; an admin or a member who may manage messages can start afresh with /forget._`,
      );
    } finally {
      await closeCore(budgeted);
    }
  });

  it('the budget notice names the way to clear the history where the user is: /forget in a Slack channel; in a Slack thread, a mention with forget or the shortcut', async () => {
    const budgeted = makeCore({ historyTokenBudget: 300 });
    const notice = async (conversationId: string) => {
      const turns = Array.from({ length: 6 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: `${i}:`.padEnd(400, 'x'),
        at: i,
      }));
      await budgeted.store.keyv.set(`history:${conversationId}`, { version: 1, messages: turns });
      fake.setChatReply('Sure.');
      const r = recorder(conversationId, { prompt: 'and now?' });
      await runCommand(chatCommand, { ...r.ctx, platform: 'slack' }, budgeted);
      return r.messages[0]!.content;
    };
    try {
      expect(await notice('slack:T1:C1')).toMatch(
        /left out to keep the conversation within the history budget; an admin can start afresh with \/forget\._$/,
      );
      const inThread = await notice('slack:T1:C1:1700000000.000100');
      expect(inThread).toMatch(/left out to keep the conversation within the history budget; /);
      expect(inThread).toContain('mention me with `forget`');
      expect(inThread).toContain('“Forget this thread”');
      expect(inThread).not.toContain('/forget');
    } finally {
      await closeCore(budgeted);
    }
  });

  it('a service error about the context length says who may /forget in a channel', async () => {
    fake.enqueue('chat', {
      status: 400,
      body: {
        error: {
          message: "This model's maximum context length is 8192 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
    });
    const r = recorder('discord:g:context', { prompt: 'hi' });
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: false, errorCode: 'context_length' });
    expect(r.ephemerals).toEqual([
      'The conversation is too long for the model. An admin or a member who may manage messages can start afresh with /forget (or ask a shorter question). (ref TESTREF)',
    ]);
  });
});
