/**
 * End-to-end, uninstall and revocation (issue 40, item 4), single-token mode: a Slack workspace
 * with history, channel settings, feedback (a record, a vote, its tally), an /imagine result's
 * button state, Regenerate states, catch-up entries and quota use removes the app; Slack sends
 * `app_uninstalled` and `tokens_revoked` (test/fakes/slack/uninstall.ts), in either order, over
 * HTTP or Socket Mode. Then every key of the store that names the workspace or belongs to it is
 * gone (read from the store itself), its quota and usage counters stay, an event of it still on
 * its way is dropped, and the bot answers on Discord with Discord's data untouched. The whole
 * bot (startTestBot), real @slack/bolt and discord.js, against the fakes.
 */
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { storeKeys } from '../../src/core/keys.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack, FakeSlackMessage, SlackEvent } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { main: 'C0UNINSTALL', other: 'C0UNINSTALL2' } as const;
const ADMIN = 'U0ALICE';
const BOB = 'U0BOB';
const QUOTAS = { QUOTA_CHAT_PER_MINUTE: '50', QUOTA_IMAGES_PER_DAY: '50', QUOTA_TOKENS_PER_DAY: '1000000' };

/** Every key of the store now (store.ts `scanKeys`). */
async function allKeys(store: StateStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of store.scanKeys('')) keys.push(...batch);
  return [...new Set(keys)].sort();
}

/** The action ids of a Slack message's buttons. */
const actionIds = (message: FakeSlackMessage): string[] =>
  ((message.blocks ?? []) as Array<{ elements?: Array<{ action_id?: string }> }>).flatMap((b) =>
    (b.elements ?? []).map((e) => String(e.action_id ?? '')),
  );

/** The keys that are counters an uninstall keeps: quotas and usage, and Slack's startStream window. */
const isCounter = (key: string) => /^(quota|usage):/.test(key) || key.startsWith('slack:startStream:');

/** Builds a workspace's data through the bot as users would; returns the ids of its records. */
async function useWorkspace(slack: FakeSlack, service: FakeService, bot: TestBot, io: SlackInput) {
  const { send, command, press } = io;
  const outcome = (command: string) =>
    bot.outcomes((o) => o.command === command && o.conversationId.includes(CHANNELS.main), 1, 30_000);
  const settings = outcome('settings');
  await command({
    command: '/settings',
    text: '--system_prompt "Be brief."',
    channel_id: CHANNELS.main,
    user_id: ADMIN,
  });
  expect((await settings)[0]!.ok).toBe(true);

  service.enqueue('chat', { stream: { text: 'An answer to keep.' } });
  const mentioned = outcome('mention');
  await send(slack.mentionEvent({ channel: CHANNELS.main, user: BOB, text: 'A question' }));
  expect((await mentioned)[0]!.ok).toBe(true);
  const answer = slack
    .messages(CHANNELS.main)
    .filter((m) => m.user === slack.botUserId)
    .at(-1)!;
  const ids = actionIds(answer);
  const regenerate = ids.find((id) => id.startsWith('regenerate:'))!;
  const feedback = ids.find((id) => id.startsWith('feedback:'))!;
  expect(regenerate).toBeDefined();
  expect(feedback).toBeDefined();

  const voted = outcome('feedback:button');
  await press({ user: BOB, channel: CHANNELS.main, messageTs: answer.ts, actionId: feedback, value: 'up' });
  expect((await voted)[0]!.ok).toBe(true);

  const imagined = outcome('imagine');
  await command({ command: '/imagine', text: 'a lighthouse', channel_id: CHANNELS.main, user_id: BOB });
  expect((await imagined)[0]!.ok).toBe(true);
  const image = slack
    .messages(CHANNELS.main)
    .filter((m) => m.user === slack.botUserId)
    .at(-1)!;
  const imagine = actionIds(image).find((id) => id.startsWith('imagine:reroll:'))!;
  expect(imagine).toBeDefined();
  await bot.bot.core.seen.flush();
  await bot.bot.core.quotas.flush();
  return {
    records: [
      storeKeys.answerState(regenerate.split(':')[1]!),
      storeKeys.feedback(feedback.split(':')[1]!),
      storeKeys.feedbackVote(feedback.split(':')[1]!, BOB),
      storeKeys.imagineState(imagine.split(':')[2]!),
    ],
  };
}

/** How a test's Slack requests reach the bot (HTTP or Socket Mode), each checked for its ack. */
interface SlackInput {
  send(event: SlackEvent): Promise<unknown>;
  command(input: { command: string; text: string; channel_id: string; user_id: string }): Promise<unknown>;
  press(input: { user: string; channel: string; messageTs: string; actionId: string; value: string }): Promise<unknown>;
}

/** What the store holds of the workspace now: the keys naming the team (counters apart), and the records found. */
async function workspaceLeft(store: StateStore, team: string, records: string[]) {
  const keys = await allKeys(store);
  const seen = (await store.keyv.get<{ conversations: Record<string, unknown> }>(storeKeys.seenConversations('slack')))
    ?.conversations;
  return {
    naming: keys.filter((k) => k.includes(team) && !isCounter(k)),
    counters: keys.filter((k) => isCounter(k) && (k.includes(team) || k.includes(`slack:${BOB}`))),
    records: keys.filter((k) => records.includes(k)),
    seen: Object.keys(seen ?? {}).filter((c) => c.includes(team)),
  };
}

/** Waits until the purge of `team` was logged, and returns its log line. */
async function purged(bot: TestBot, count = 1) {
  await vi.waitFor(
    () => expect(bot.logs.filter((l) => l.msg?.startsWith('workspace data purged'))).toHaveLength(count),
    { timeout: 20_000, interval: 50 },
  );
  return bot.logs.filter((l) => l.msg?.startsWith('workspace data purged')).at(-1)!;
}

describe('app_uninstalled over HTTP', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let testBot: TestBot;
  let botUrl: string;
  useE2E(
    { discord: {}, slack: { channels: slackChannels(CHANNELS) }, bot: { env: QUOTAS }, timeoutMs: 30_000 },
    async (e2e) => {
      ({ service, slack, discord, bot: testBot, botUrl } = e2e);
      await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
    },
  );

  /** Runs /chat on Discord in `channel` and waits for its outcome. */
  async function discordChat(channelId: string, prompt: string): Promise<CommandOutcome> {
    const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channelId}`), 1, 30_000);
    discord.dispatchInteraction({ channelId, command: 'chat', options: { prompt } });
    return (await done)[0]!;
  }

  it('purges the workspace (history, settings, feedback, button and Regenerate states, catch-up entries, claims), keeps its quota counters, drops its event still on the way, and the bot answers on Discord with its data untouched', async () => {
    const store = testBot.bot.core.store;
    const guildChannel = discord.addChannel('still-here');
    service.enqueue('chat', { stream: { text: 'Discord remembers.' } });
    expect((await discordChat(guildChannel.id, 'Remember the word heron.')).ok).toBe(true);
    const send = async (event: SlackEvent) =>
      expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
    const { records } = await useWorkspace(slack, service, testBot, {
      send,
      command: async (input) =>
        expect(await slack.sendSlashCommand(botUrl, input)).toMatchObject({ ackedInTime: true }),
      press: async (input) => expect(await slack.sendBlockAction(botUrl, input)).toMatchObject({ ackedInTime: true }),
    });
    const discordBefore = (await allKeys(store)).filter((k) => k.includes('discord:'));
    const before = await workspaceLeft(store, slack.teamId, records);
    // The workspace's data is there, by key and by record, and the quota and usage counters of its use.
    expect(before.naming).toEqual(
      expect.arrayContaining([
        `settings:slack:${slack.teamId}:${CHANNELS.main}`,
        `settings-channels:slack:${slack.teamId}`,
        `feedback-tally:slack:${slack.teamId}`,
      ]),
    );
    expect(before.naming.some((k) => k.startsWith(`history:slack:${slack.teamId}:${CHANNELS.main}`))).toBe(true);
    expect(before.naming.some((k) => k.startsWith(`mention-answer:slack:${slack.teamId}:`))).toBe(true);
    expect(before.naming.some((k) => k.startsWith(`answer-states:conversation:slack:${slack.teamId}:`))).toBe(true);
    expect(before.naming.some((k) => k.startsWith(`claim:slack:message:${slack.teamId}:`))).toBe(true);
    expect(before.records.sort()).toEqual([...records].sort());
    expect(before.seen.length).toBeGreaterThan(0);
    expect(before.counters.some((k) => k.startsWith('quota:chat:'))).toBe(true);
    expect(before.counters.some((k) => k.startsWith('usage:chat:'))).toBe(true);
    const quotaBefore = await store.counter(storeKeys.quota('chat', `slack:${slack.teamId}:${BOB}`));
    expect(quotaBefore.value).toBeGreaterThan(0);

    // A question already on its way when the app is removed, delivered after.
    const late = slack.mentionEvent({ channel: CHANNELS.other, user: BOB, text: 'Too late' });
    const { appUninstalled } = slack.uninstallApp();
    const chatsBefore = service.chatRequests().length;
    await send(appUninstalled);
    const line = await purged(testBot);
    expect(line).toMatchObject({ team: slack.teamId, trigger: 'app_uninstalled' });
    expect(line.records).toBeGreaterThanOrEqual(records.length);
    expect(JSON.stringify(line)).not.toContain('Be brief');

    const after = await workspaceLeft(store, slack.teamId, records);
    expect(after.naming).toEqual([]);
    expect(after.records).toEqual([]);
    expect(after.seen).toEqual([]);
    // Usage and quota counters stay until they expire: an uninstall lifts no quota.
    expect(after.counters).toEqual(before.counters);
    expect((await store.counter(storeKeys.quota('chat', `slack:${slack.teamId}:${BOB}`))).value).toBe(
      quotaBefore.value,
    );
    expect(await store.keyv.get(storeKeys.userAnswerStates(`slack:${slack.teamId}:${BOB}`))).toBeUndefined();

    // The event on its way is acknowledged and dropped, logged once; nothing is asked of the service.
    await send(late);
    await vi.waitFor(() =>
      expect(
        testBot.logs.filter((l) => l.msg?.startsWith('requests of an uninstalled workspace dropped')),
      ).toHaveLength(1),
    );
    expect(service.chatRequests()).toHaveLength(chatsBefore);
    // The revoked token is refused as Slack refuses it.
    const refused = await fetch(`${slack.apiUrl}auth.test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${slack.botToken}` },
    });
    expect(await refused.json()).toEqual({ ok: false, error: 'token_revoked' });

    // Discord: its keys are all there, and the conversation goes on with its history.
    expect((await allKeys(store)).filter((k) => k.includes('discord:'))).toEqual(expect.arrayContaining(discordBefore));
    service.enqueue('chat', { stream: { text: 'It was heron.' } });
    expect((await discordChat(guildChannel.id, 'Which word?')).ok).toBe(true);
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(expect.arrayContaining(['Remember the word heron.', 'Discord remembers.']));
  }, 90_000);
});

describe('tokens_revoked, then app_uninstalled, over Socket Mode', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let testBot: TestBot;
  useE2E(
    { slack: { channels: slackChannels(CHANNELS) }, bot: { env: QUOTAS, socketMode: true }, timeoutMs: 30_000 },
    (e2e) => {
      ({ service, slack, bot: testBot } = e2e);
    },
  );

  it('a revocation of user tokens alone changes nothing; of the bot token it purges the workspace; app_uninstalled after it, and a retry of either, purge nothing more', async () => {
    const store = testBot.bot.core.store;
    const send = async (event: SlackEvent, options: { eventId?: string; retryNum?: number } = {}) => {
      const result = await slack.sendSocketEvent(event, options);
      expect(result.ackedInTime).toBe(true);
      return result;
    };
    const { records } = await useWorkspace(slack, service, testBot, {
      send,
      command: async (input) => expect((await slack.sendSocketSlashCommand(input)).ackedInTime).toBe(true),
      press: async (input) => expect((await slack.sendSocketBlockAction(input)).ackedInTime).toBe(true),
    });
    const before = await workspaceLeft(store, slack.teamId, records);
    expect(before.records.sort()).toEqual([...records].sort());

    // A user's token revoked (the bot's still good): nothing is dropped or deleted.
    await send({ type: 'tokens_revoked', tokens: { oauth: [BOB], bot: [] } });
    const { appUninstalled, tokensRevoked } = slack.uninstallApp();
    const revoked = await send(tokensRevoked);
    const line = await purged(testBot);
    expect(line).toMatchObject({ team: slack.teamId, trigger: 'tokens_revoked' });
    const after = await workspaceLeft(store, slack.teamId, records);
    expect(after).toEqual({ naming: [], counters: before.counters, records: [], seen: [] });

    // Slack retries the revocation, then sends app_uninstalled (and retries it): one more purge at most, finding nothing.
    await send(tokensRevoked, { eventId: revoked.eventId, retryNum: 1 });
    const uninstalled = await send(appUninstalled);
    await send(appUninstalled, { eventId: uninstalled.eventId, retryNum: 1 });
    const second = await purged(testBot, 2);
    expect(second).toMatchObject({ trigger: 'app_uninstalled', records: 0 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(testBot.logs.filter((l) => l.msg?.startsWith('workspace data purged'))).toHaveLength(2);
    expect(await workspaceLeft(store, slack.teamId, records)).toEqual(after);
  }, 90_000);
});
