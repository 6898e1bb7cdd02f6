/**
 * Discord's gateway failing under a running bot, seen from the operator's side (HTTP_PORT):
 *
 * - an outage (the fake drops every session, then refuses or holds reconnects) turns /healthz
 *   503 naming discord until discord.js has resumed the same session, then 200 again, and a
 *   /chat is answered after it;
 * - Discord ending the session with 4004 (the token was reset) is logged as an error naming the
 *   authentication failure, fails /healthz for good and tells the bot it lost the platform; run
 *   as `node src/main.ts` with Discord as its only platform, the process exits 1;
 * - with DISCORD_SHARDS=2 one process identifies both shards, and a guild's interaction
 *   reaches the shard that holds the guild and is answered.
 *
 * Each scenario has its own FakeDiscord and bot (a 4004 ends Discord for that bot); waits are
 * on events or polled states, never on fixed sleeps.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Events } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { FakeDiscord, type FakeInteraction, shardOfGuild } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { discordEnv, slackEnv, startTestBot, type TestBot } from './harness.ts';

const root = resolve(import.meta.dirname, '../..');

/** pino's level number for `error`. */
const ERROR = 50;

let service: FakeService;

useE2E({}, (e2e) => {
  service = e2e.service;
});

interface Health {
  status: number;
  body: { status: string; checks: Record<string, string>; reasons?: string[] };
}

/** GET /healthz of a bot's ops server. */
async function health(port: number): Promise<Health> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  return { status: response.status, body: (await response.json()) as Health['body'] };
}

/** Polls /healthz until it answers `status` (at most `timeoutMs`, default 15 s), then returns that answer. */
async function healthBecomes(port: number, status: number, timeoutMs = 15_000): Promise<Health> {
  let last: Health | undefined;
  await expect
    .poll(
      async () => {
        last = await health(port);
        return last.status;
      },
      { timeout: timeoutMs, interval: 50 },
    )
    .toBe(status);
  return last!;
}

/** Runs `/chat prompt` in a new channel and resolves once the bot has finished with it. */
async function chat(
  testBot: TestBot,
  discord: FakeDiscord,
  channelName: string,
  prompt: string,
): Promise<FakeInteraction> {
  const channel = discord.addChannel(channelName);
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
  const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt }, channelId: channel.id });
  const [outcome] = await done;
  expect(outcome!.ok).toBe(true);
  return interaction;
}

describe('Discord gateway outage: /healthz', () => {
  let discord: FakeDiscord;
  let testBot: TestBot;
  let port: number;

  useE2E({ service: () => service, discord: {}, bot: { env: { HTTP_PORT: '0' } } }, (e2e) => {
    ({ discord, bot: testBot } = e2e);
    port = testBot.bot.ops!.port;
  });

  it('is 200 while connected, 503 naming discord while the gateway is down and reconnects are refused, 200 once the same session has resumed; a /chat is answered after', async () => {
    expect(await health(port)).toEqual({ status: 200, body: { status: 'ok', checks: { discord: 'ok', store: 'ok' } } });
    expect(discord.gatewayIdentifies).toHaveLength(1);
    const session = discord.gatewayIdentifies[0]!.sessionId;

    // Discord closes the session with 4000 (a resumable "Unknown error.") and its edge answers 503.
    expect(discord.dropGateway({ close: 4000, whileDown: 'refuse' })).toBe(1);
    const down = await healthBecomes(port, 503);
    expect(down.body.status).toBe('unhealthy');
    expect(down.body.checks.store).toBe('ok');
    expect(down.body.checks.discord).toMatch(/^discord gateway not connected \(shard 0: \w+\)$/);
    expect(down.body.reasons).toEqual([down.body.checks.discord]);
    // Still 503 while discord.js keeps trying and Discord keeps refusing (two attempts refused).
    await expect
      .poll(() => discord.refusedGatewayConnections, { timeout: 10_000, interval: 50 })
      .toBeGreaterThanOrEqual(2);
    expect((await health(port)).status).toBe(503);
    expect(discord.gatewaySessions).toEqual([]);

    const resumed = discord.waitFor('resume');
    discord.restoreGateway();
    expect((await healthBecomes(port, 200)).body).toEqual({ status: 'ok', checks: { discord: 'ok', store: 'ok' } });
    // discord.js resumed the session it had (RESUME answered RESUMED) instead of starting a new one.
    expect((await resumed)[0].sessionId).toBe(session);
    expect(discord.gatewayIdentifies).toHaveLength(1);
    expect(discord.gatewayResumes.map((r) => r.sessionId)).toEqual([session]);

    service.setChatReply('Back after the outage.');
    const interaction = await chat(testBot, discord, 'after-outage', 'are you there?');
    expect(interaction.original!.content).toBe('Back after the outage.');
    // No error was logged for an outage that discord.js recovers from on its own.
    expect(testBot.logs.filter((l) => l.level >= ERROR)).toEqual([]);
  });

  it('also flips on a connection cut without a close frame (1006) while reconnects hang without HELLO, and back once they are answered', async () => {
    const resumesBefore = discord.gatewayResumes.length;
    const identifiesBefore = discord.gatewayIdentifies.length;
    expect((await health(port)).status).toBe(200);

    expect(discord.dropGateway({ close: 'terminate', whileDown: 'hold' })).toBe(1);
    const down = await healthBecomes(port, 503);
    expect(down.body.checks.discord).toMatch(/^discord gateway not connected/);
    // discord.js has reconnected and waits for HELLO on a connection the fake holds: still down.
    await expect
      .poll(() => discord.gatewaySessions.some((s) => !s.identified), { timeout: 10_000, interval: 50 })
      .toBe(true);
    expect(discord.gatewaySessions).toEqual([expect.objectContaining({ identified: false, sessionId: undefined })]);
    expect((await health(port)).status).toBe(503);

    discord.restoreGateway();
    await healthBecomes(port, 200);
    expect(discord.gatewayResumes).toHaveLength(resumesBefore + 1);
    expect(discord.gatewayIdentifies).toHaveLength(identifiesBefore);

    service.setChatReply('Still here.');
    const interaction = await chat(testBot, discord, 'after-cut', 'and now?');
    expect(interaction.original!.content).toBe('Still here.');
  });
});

describe('Discord closing the gateway with 4004 (authentication failed)', () => {
  it('in process, Discord only: an error log line names the failure, /healthz is 503 for good, and the bot is told it has no platform left', async () => {
    const discord = await FakeDiscord.start();
    const testBot = await startTestBot({ ...discordEnv(service, discord), HTTP_PORT: '0' });
    try {
      const port = testBot.bot.ops!.port;
      expect((await health(port)).status).toBe(200);
      const lost = new Promise<{ reason: string; platformsLeft: number }>((done) => {
        testBot.bot.onPlatformLost = (reason, platformsLeft) => done({ reason, platformsLeft });
      });

      expect(discord.closeGatewaySessions(4004)).toBe(1);
      const { reason, platformsLeft } = await lost;
      expect(reason).toBe('discord gateway closed for good: 4004 AuthenticationFailed');
      expect(platformsLeft).toBe(0);

      const errors = testBot.logs.filter((l) => l.level >= ERROR);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 4004, shard: 0 });
      expect(errors[0]!.msg).toMatch(
        /^discord gateway closed for good: 4004 AuthenticationFailed \(check DISCORD_TOKEN/,
      );

      const down = await health(port);
      expect(down.status).toBe(503);
      expect(down.body.checks).toEqual({ discord: reason, store: 'ok' });
      // discord.js does not come back after 4004: no new session, no resume, nothing open.
      expect(discord.gatewayIdentifies).toHaveLength(1);
      expect(discord.gatewayResumes).toEqual([]);
      expect(discord.gatewaySessions).toEqual([]);
    } finally {
      await testBot.stop();
      await discord.close();
    }
  });

  it('in process, with Slack also configured: the bot is told one platform is left, /healthz names discord only, and Slack still answers', async () => {
    const discord = await FakeDiscord.start();
    const slack = await FakeSlack.start({ channels: [{ id: 'C0LEFT', name: 'left' }] });
    const testBot = await startTestBot({
      ...slackEnv(service, slack),
      ...discordEnv(service, discord),
      SERVICE_BASE_URL: `${service.baseUrl}/v1`,
      HTTP_PORT: '0',
    });
    try {
      const port = testBot.bot.ops!.port;
      const lost = new Promise<{ reason: string; platformsLeft: number }>((done) => {
        testBot.bot.onPlatformLost = (reason, platformsLeft) => done({ reason, platformsLeft });
      });
      discord.closeGatewaySessions(4004);
      expect(await lost).toEqual({
        reason: 'discord gateway closed for good: 4004 AuthenticationFailed',
        platformsLeft: 1,
      });
      const down = await health(port);
      expect(down.status).toBe(503);
      expect(down.body.checks).toEqual({
        discord: 'discord gateway closed for good: 4004 AuthenticationFailed',
        slack: 'ok',
        store: 'ok',
      });

      service.setChatReply('Slack carries on.');
      const done = testBot.outcomes((o) => o.command === 'chat');
      const ack = await slack.sendSlashCommand(`http://127.0.0.1:${testBot.bot.slack!.port}`, {
        command: '/chat',
        text: 'still there?',
        channel_id: 'C0LEFT',
      });
      expect(ack.ackedInTime).toBe(true);
      expect((await done)[0]!.ok).toBe(true);
    } finally {
      await testBot.stop();
      await slack.close();
      await discord.close();
    }
  });

  it('as `node src/main.ts` with Discord only: logs the failure as an error, then "no platform left", and exits 1', async () => {
    const discord = await FakeDiscord.start();
    const dir = mkdtempSync(join(tmpdir(), 'genbot-4004-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      // INIT_CWD: where main.ts looks for .env (an empty folder: a developer's own .env is not read).
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        INIT_CWD: dir,
        ...discordEnv(service, discord),
        STORE_URL: `sqlite://${join(dir, 'history.sqlite')}`,
        HTTP_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      await new Promise<void>((started, failed) => {
        child.stdout.on('data', (d) => {
          stdout += String(d);
          if (stdout.includes('"msg":"bot started"')) started();
        });
        void exited.then((code) => failed(new Error(`the bot exited ${code} before starting: ${stderr}`)));
      });
      const lines = () =>
        stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown> & { level: number; msg: string });
      const port = lines().find((l) => l.msg === 'health and metrics listening')!.port as number;
      expect((await health(port)).status).toBe(200);

      expect(discord.closeGatewaySessions(4004)).toBe(1);
      expect(await exited).toBe(1);

      const errors = lines().filter((l) => l.level >= ERROR);
      expect(errors.map((l) => l.msg)).toEqual([
        expect.stringMatching(/^discord gateway closed for good: 4004 AuthenticationFailed \(check DISCORD_TOKEN/),
        'no platform left: stopping',
      ]);
      expect(errors[0]).toMatchObject({ code: 4004 });
      expect(errors[1]).toMatchObject({ reason: 'discord gateway closed for good: 4004 AuthenticationFailed' });
      expect(stderr).toBe('');
      expect(stdout).not.toContain(discord.token);
      expect(discord.gatewayIdentifies).toHaveLength(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await discord.close();
    }
  });
});

describe('DISCORD_SHARDS=2 in one process', () => {
  let discord: FakeDiscord;
  let testBot: TestBot;

  // discord.js identifies one shard per 5 s (max_concurrency 1): this takes about 5 s.
  useE2E({ service: () => service, discord: {}, bot: { env: { DISCORD_SHARDS: '2', HTTP_PORT: '0' } } }, (e2e) => {
    ({ discord, bot: testBot } = e2e);
  });

  it('identifies shards [0, 2] and [1, 2], and a /chat in the guild arrives on the shard that holds it and is answered', async () => {
    expect(discord.gatewayIdentifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(
      discord.gatewaySessions
        .filter((s) => s.identified)
        .map((s) => s.shard)
        .sort(),
    ).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(await health(testBot.bot.ops!.port)).toEqual({
      status: 200,
      body: { status: 'ok', checks: { discord: 'ok', store: 'ok' } },
    });

    const owner = shardOfGuild(discord.guildId, 2);
    const interactionShards: number[] = [];
    const onRaw = (packet: { t?: string }, shardId: number) => {
      if (packet.t === 'INTERACTION_CREATE') interactionShards.push(shardId);
    };
    const client = testBot.bot.discord!.client;
    client.on(Events.Raw, onRaw);
    try {
      service.setChatReply('Answered from the right shard.');
      const interaction = await chat(testBot, discord, 'sharded', 'which shard?');
      expect(interaction.original!.content).toBe('Answered from the right shard.');
      expect(interactionShards).toEqual([owner]);
    } finally {
      client.off(Events.Raw, onRaw);
    }
    // The guild lives on the shard that owns it in the bot's cache too.
    expect(client.guilds.cache.get(discord.guildId)!.shardId).toBe(owner);
  });
});
