/** FakeDiscord: The gateway: HELLO and heartbeats, IDENTIFY's refusals (close codes), READY and GUILD_CREATE, INTERACTION_CREATE. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../discord.ts';
import { cleanup, connectBot, GUILD_MESSAGES, GUILDS, identify, openGateway, startFake } from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord gateway', () => {
  it('says HELLO with heartbeat_interval and acknowledges heartbeats with op 11', async () => {
    const fake = await startFake({ heartbeatIntervalMs: 12_345 });
    const gateway = openGateway(fake);
    const hello = await gateway.frame((f) => f.op === 10);
    expect(hello.d).toMatchObject({ heartbeat_interval: 12_345 });
    await gateway.send({ op: 1, d: null });
    expect(await gateway.frame((f) => f.op === 11)).toMatchObject({ op: 11 });
  });

  it('closes with 4004 when IDENTIFY carries another token, 4014 for privileged intents not enabled, 4003 for other opcodes before IDENTIFY', async () => {
    const fake = await startFake();
    const badToken = openGateway(fake);
    await badToken.send(identify('not-the-token'));
    expect((await badToken.closed).code).toBe(4004);

    const privileged = openGateway(fake);
    await privileged.send(identify(fake.token, 1 | (1 << 15)));
    expect((await privileged.closed).code).toBe(4014);

    const early = openGateway(fake);
    await early.send({ op: 3, d: { status: 'online', since: null, activities: [], afk: false } });
    expect((await early.closed).code).toBe(4003);

    const zlib = openGateway(fake, '?v=10&encoding=json&compress=zlib-stream');
    expect((await zlib.closed).code).toBe(4000);
  });

  it('answers IDENTIFY with READY (user, application, session, resume URL, unavailable guild) then a full GUILD_CREATE with channels, roles and the bot as member', async () => {
    const fake = await startFake({ guild: { channels: ['general', 'random'] } });
    const gateway = openGateway(fake);
    await gateway.send(identify(fake.token));
    const ready = await gateway.frame((f) => f.t === 'READY');
    expect(ready).toMatchObject({ op: 0, s: 1 });
    expect(ready.d).toMatchObject({
      v: 10,
      user: { id: fake.applicationId, bot: true },
      application: { id: fake.applicationId, flags: 0 },
      resume_gateway_url: fake.gatewayUrl,
      shard: [0, 1],
      guilds: [{ id: fake.guildId, unavailable: true }],
    });
    expect(typeof (ready.d as Json).session_id).toBe('string');
    const guild = (await gateway.frame((f) => f.t === 'GUILD_CREATE')).d as Json;
    expect(guild).toMatchObject({ id: fake.guildId, unavailable: false });
    expect((guild.channels as Json[]).map((c) => c.name)).toEqual(['general', 'random']);
    expect((guild.roles as Json[]).map((r) => r.name)).toContain('@everyone');
    expect((guild.members as Json[])[0]).toMatchObject({ user: { id: fake.applicationId } });

    const added = fake.addChannel('later');
    const created = await gateway.frame((f) => f.t === 'CHANNEL_CREATE');
    expect(created.d).toMatchObject({ id: added.id, name: 'later', guild_id: fake.guildId, type: 0 });
  });

  it('dispatches INTERACTION_CREATE with the full payload Discord sends, admin or not', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake);
    const admin = fake.dispatchInteraction({
      command: 'imagine',
      options: { prompt: 'a cat', aspect_ratio: 'landscape' },
      admin: true,
    });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE');
    const d = frame.d as Json;
    expect(d).toMatchObject({
      id: admin.id,
      application_id: fake.applicationId,
      type: 2,
      token: admin.token,
      version: 1,
      data: {
        name: 'imagine',
        type: 1,
        options: [
          { name: 'prompt', type: 3, value: 'a cat' },
          { name: 'aspect_ratio', type: 3, value: 'landscape' },
        ],
      },
      guild_id: fake.guildId,
      channel_id: fake.channelList[0]!.id,
      channel: { id: fake.channelList[0]!.id, type: 0 },
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': fake.guildId },
      context: 0,
      attachment_size_limit: 10 * 1024 * 1024,
    });
    for (const key of ['id', 'token', 'app_permissions']) expect(typeof d[key]).toBe('string');
    const adminPermissions = BigInt((d.member as Json).permissions as string);
    expect(adminPermissions & 8n).toBe(8n);

    const member = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
    const memberFrame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE' && (f.d as Json).id === member.id);
    expect(BigInt(((memberFrame.d as Json).member as Json).permissions as string) & 8n).toBe(0n);
  });

  it('a deaf gateway swallows every dispatch, on new sessions too, while it ACKs heartbeats and answers IDENTIFY; hearing again, it dispatches', async () => {
    const fake = await startFake();
    const channel = fake.addChannel('quiet');
    const gateway = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    fake.deafenGateway();
    const lost = fake.postUserMessage({ channelId: channel.id, content: 'never dispatched' });
    await gateway.send({ op: 1, d: null });
    await gateway.frame((f) => f.op === 11);
    expect(fake.swallowedGatewayEvents).toBe(1);
    expect(gateway.frames.some((f) => f.t === 'MESSAGE_CREATE')).toBe(false);
    // The message is there for a REST read all the same.
    expect(fake.messagesIn(channel.id).map((m) => m.id)).toContain(lost.id);
    // A new session identifies (READY, GUILD_CREATE) and gets nothing more either.
    const second = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    expect(fake.gatewayConnections).toBe(2);
    fake.postUserMessage({ channelId: channel.id, content: 'lost too' });
    expect(fake.swallowedGatewayEvents).toBe(2);
    fake.deafenGateway(false);
    const heard = fake.postUserMessage({ channelId: channel.id, content: 'heard' });
    for (const session of [gateway, second]) {
      const created = await session.frame((f) => f.t === 'MESSAGE_CREATE');
      expect(created.d).toMatchObject({ id: heard.id });
    }
  });
});
