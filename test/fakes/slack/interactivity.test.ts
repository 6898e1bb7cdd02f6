/**
 * Tests of button presses sent by the fake Slack: `block_actions` payloads POSTed as a signed
 * form (`payload=<JSON>`) to a real Bolt app (its HTTPReceiver verifies and parses them, its
 * `app.action` listeners get them), the same over Socket Mode in `interactive` envelopes, the
 * 3 s ack, the response_url of a press (replace / delete the message, ephemeral answers), and
 * presses no user could make.
 */
import type { BlockAction, ButtonAction, RespondArguments } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { boltHttpApp, boltSocketApp, webClient } from './test-helpers.ts';

let fake: FakeSlack;
let client: WebClient;

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0SMALL', name: 'small', members: ['U0ALICE'] },
      { id: 'C0PRIV', name: 'secret', isPrivate: true },
    ],
  });
  client = webClient(fake);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

/** Blocks with a Stop button (in an actions block with a block_id), Retry buttons and an accessory button without block_ids. */
const BLOCKS = [
  {
    type: 'section',
    text: { type: 'mrkdwn', text: 'Answering…' },
    accessory: { type: 'button', action_id: 'info', text: { type: 'plain_text', text: 'Info' } },
  },
  {
    type: 'actions',
    block_id: 'controls',
    elements: [
      {
        type: 'button',
        action_id: 'stop',
        text: { type: 'plain_text', text: 'Stop' },
        value: 'run-1',
        style: 'danger',
      },
      { type: 'button', action_id: 'retry', text: { type: 'plain_text', text: 'Retry fast' }, value: 'fast' },
      { type: 'button', action_id: 'retry', text: { type: 'plain_text', text: 'Retry slow' }, value: 'slow' },
    ],
  },
];

/** The bot posts a message with {@link BLOCKS}. */
async function postWithButtons(channel = 'C0ONE', threadTs?: string): Promise<string> {
  const posted = await client.chat.postMessage({
    channel,
    text: 'Answering…',
    blocks: BLOCKS,
    ...(threadTs ? { thread_ts: threadTs } : {}),
  });
  return posted.ts!;
}

/** What a Bolt action listener saw. */
interface Pressed {
  body: BlockAction<ButtonAction>;
  action: ButtonAction;
}

describe('button presses over HTTP, to a Bolt app', () => {
  let bolt: Awaited<ReturnType<typeof boltHttpApp>>;
  let seen: Pressed[] = [];
  /** What the listener answers through respond() after its ack, if anything. */
  let answer: RespondArguments | undefined;

  beforeAll(async () => {
    bolt = await boltHttpApp(fake, (app) => {
      app.action<BlockAction<ButtonAction>>({ type: 'block_actions' }, async ({ ack, body, action, respond }) => {
        await ack();
        seen.push({ body, action });
        if (answer) await respond(answer);
      });
    });
  });
  afterEach(() => {
    seen = [];
    answer = undefined;
  });
  afterAll(async () => {
    await bolt.stop();
  });

  it('posts the block_actions payload as Slack does; Bolt verifies it, routes it by action_id and acks within 3 s', async () => {
    const parent = fake.postUserMessage('C0ONE', 'U0ALICE', 'question').ts;
    const ts = await postWithButtons('C0ONE', parent);
    const result = await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'stop',
    });
    expect(result).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    expect(result.rawBody.startsWith('payload=')).toBe(true);
    expect(JSON.parse(new URLSearchParams(result.rawBody).get('payload')!)).toEqual(result.payload);
    expect(result.payload).toMatchObject({
      type: 'block_actions',
      user: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: fake.teamId },
      api_app_id: fake.appId,
      token: fake.verificationToken,
      container: { type: 'message', message_ts: ts, channel_id: 'C0ONE', is_ephemeral: false, thread_ts: parent },
      trigger_id: result.triggerId,
      team: { id: fake.teamId, domain: fake.teamDomain },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: 'C0ONE', name: 'one' },
      message: {
        type: 'message',
        ts,
        thread_ts: parent,
        text: 'Answering…',
        user: fake.botUserId,
        bot_id: fake.botId,
        app_id: fake.appId,
      },
      state: { values: {} },
      response_url: result.responseUrl,
      actions: [
        {
          action_id: 'stop',
          block_id: 'controls',
          text: { type: 'plain_text', text: 'Stop' },
          value: 'run-1',
          style: 'danger',
          type: 'button',
          action_ts: expect.stringMatching(/^\d{10}\.\d{6}$/),
        },
      ],
    });
    expect(result.responseUrl.startsWith(`${fake.baseUrl}/response/`)).toBe(true);
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    expect(seen[0]!.body).toEqual(result.payload);
    expect(seen[0]!.action.action_id).toBe('stop');
    expect(fake.blockActions).toEqual([
      {
        via: 'http',
        user: 'U0ALICE',
        channel: 'C0ONE',
        messageTs: ts,
        actionId: 'stop',
        blockId: 'controls',
        value: 'run-1',
        status: 200,
        ackedInTime: true,
        at: expect.any(Number),
      },
    ]);
    expect(fake.platformFailures).toEqual([]);
  });

  it('blocks without a block_id get one, as Slack generates them, stable across presses; value and blockId pick the button', async () => {
    const ts = await postWithButtons();
    const first = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'info',
    });
    const again = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'info',
    });
    const blockId = (first.payload.actions as Array<{ block_id: string }>)[0]!.block_id;
    expect(blockId).toMatch(/^[\w-]{5}$/);
    expect((again.payload.actions as Array<{ block_id: string }>)[0]!.block_id).toBe(blockId);
    const sentBlocks = (first.payload.message as { blocks: Array<{ block_id: string }> }).blocks;
    expect(sentBlocks.map((b) => b.block_id)).toEqual([blockId, 'controls']);
    // No value on the button, no value in the action.
    expect((first.payload.actions as object[])[0]).not.toHaveProperty('value');
    // The message as stored is what the bot sent.
    expect(fake.message('C0ONE', ts)!.blocks).toEqual(BLOCKS);

    const slow = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'retry',
      value: 'slow',
    });
    expect(slow.payload.actions).toMatchObject([{ action_id: 'retry', value: 'slow', text: { text: 'Retry slow' } }]);
    const fast = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'retry',
      blockId: 'controls',
    });
    expect(fast.payload.actions).toMatchObject([{ value: 'fast' }]);
  });

  it('a press no user could make throws: no such button, value or block, a user outside the conversation, a deleted or unknown message', async () => {
    const ts = await postWithButtons();
    const press = (input: Partial<Parameters<FakeSlack['sendBlockAction']>[1]>) =>
      fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: 'C0ONE', messageTs: ts, actionId: 'stop', ...input });
    await expect(press({ actionId: 'regenerate' })).rejects.toThrow(
      /no button with action_id regenerate.*its buttons: info \(block \w+, value undefined\); stop \(block controls, value run-1\)/,
    );
    await expect(press({ actionId: 'retry', value: 'medium' })).rejects.toThrow(
      /no button with action_id retry, value medium/,
    );
    await expect(press({ blockId: 'other' })).rejects.toThrow(/block_id other/);
    await expect(press({ user: 'U0NOBODY' })).rejects.toThrow(/unknown user/);
    const small = await postWithButtons('C0SMALL');
    await expect(press({ user: 'U0BOB', channel: 'C0SMALL', messageTs: small })).rejects.toThrow(
      /U0BOB is not in C0SMALL/,
    );
    const plain = await client.chat.postMessage({ channel: 'C0ONE', text: 'no buttons' });
    await expect(press({ messageTs: plain.ts! })).rejects.toThrow(/its buttons: none/);
    await client.chat.delete({ channel: 'C0ONE', ts });
    await expect(press({})).rejects.toThrow(/no message/);
    expect(fake.blockActions).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("the press's response_url: replace_original replaces the message, delete_original deletes it, otherwise an ephemeral answer to the presser", async () => {
    const ts = await postWithButtons();
    answer = { response_type: 'ephemeral', replace_original: false, text: 'Only you see this' };
    await fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: 'C0ONE', messageTs: ts, actionId: 'stop' });
    await vi.waitFor(() => expect(fake.ephemerals).toHaveLength(1));
    expect(fake.ephemerals[0]).toMatchObject({
      channel: 'C0ONE',
      user: 'U0ALICE',
      text: 'Only you see this',
      via: 'response_url',
    });
    expect(fake.message('C0ONE', ts)!.text).toBe('Answering…');

    answer = {
      replace_original: true,
      text: 'Stopped.',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Stopped.' } }],
    };
    await fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: 'C0ONE', messageTs: ts, actionId: 'stop' });
    await vi.waitFor(() => expect(fake.message('C0ONE', ts)!.text).toBe('Stopped.'));
    expect(fake.message('C0ONE', ts)).toMatchObject({
      blocks: [{ type: 'section' }],
      revisions: [{ method: 'chat.postMessage' }, { method: 'response_url' }],
    });

    const other = await postWithButtons();
    answer = { delete_original: true };
    await fake.sendBlockAction(bolt.url, { user: 'U0BOB', channel: 'C0ONE', messageTs: other, actionId: 'info' });
    await vi.waitFor(() => expect(fake.message('C0ONE', other)!.deleted).toBe(true));
    expect(fake.responsePosts().map((p) => [p.command, p.status])).toEqual([
      ['block_actions', 200],
      ['block_actions', 200],
      ['block_actions', 200],
    ]);
  });

  it('a private channel is privategroup and a DM directmessage in the payload, as in slash commands', async () => {
    const secret = await postWithButtons('C0PRIV');
    const inPrivate = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: 'C0PRIV',
      messageTs: secret,
      actionId: 'stop',
    });
    expect(inPrivate.payload.channel).toEqual({ id: 'C0PRIV', name: 'privategroup' });
    const dm = fake.openIm('U0BOB');
    const inDm = await postWithButtons(dm.id);
    await expect(
      fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: dm.id, messageTs: inDm, actionId: 'stop' }),
    ).rejects.toThrow(/cannot see/);
    const pressed = await fake.sendBlockAction(bolt.url, {
      user: 'U0BOB',
      channel: dm.id,
      messageTs: inDm,
      actionId: 'stop',
    });
    expect(pressed.payload).toMatchObject({
      channel: { id: dm.id, name: 'directmessage' },
      container: { channel_id: dm.id },
    });
    expect(pressed.payload.container).not.toHaveProperty('thread_ts');
  });

  it('a button under a streamed answer (chat.stopStream blocks) can be pressed', async () => {
    const parent = fake.postUserMessage('C0ONE', 'U0ALICE', 'question').ts;
    const started = await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: parent,
      markdown_text: 'Answer',
      recipient_team_id: fake.teamId,
      recipient_user_id: 'U0ALICE',
    });
    await expect(
      fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: 'C0ONE', messageTs: started.ts!, actionId: 'stop' }),
    ).rejects.toThrow(/its buttons: none/);
    await client.chat.stopStream({ channel: 'C0ONE', ts: started.ts!, blocks: [BLOCKS[1]!] });
    const result = await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: started.ts!,
      actionId: 'stop',
    });
    expect(result.ackedInTime).toBe(true);
    expect(result.payload.message).toMatchObject({ text: 'Answer', blocks: [BLOCKS[1]] });
  });

  it('a button of an ephemeral message: only its user can press it, the payload has is_ephemeral and no message, and respond() replaces or deletes it', async () => {
    const posted = await client.chat.postEphemeral({
      channel: 'C0ONE',
      user: 'U0ALICE',
      text: 'Streaming; stop it here.',
      blocks: [BLOCKS[1]!],
    });
    const ts = posted.message_ts!;
    await expect(
      fake.sendBlockAction(bolt.url, { user: 'U0BOB', channel: 'C0ONE', messageTs: ts, actionId: 'stop' }),
    ).rejects.toThrow(/shown to U0ALICE only/);
    answer = { replace_original: true, text: 'Stopping…' };
    const result = await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'stop',
    });
    expect(result.payload).toMatchObject({
      container: { type: 'message', message_ts: ts, channel_id: 'C0ONE', is_ephemeral: true },
      actions: [{ action_id: 'stop', block_id: 'controls' }],
    });
    expect(result.payload).not.toHaveProperty('message');
    await vi.waitFor(() =>
      expect(fake.ephemerals.filter((e) => e.shown).map((e) => [e.ts, e.text])).toEqual([[ts, 'Stopping…']]),
    );
    answer = { delete_original: true };
    await expect(
      fake.sendBlockAction(bolt.url, { user: 'U0ALICE', channel: 'C0ONE', messageTs: ts, actionId: 'stop' }),
    ).rejects.toThrow(/no button/);
    const again = await client.chat.postEphemeral({
      channel: 'C0ONE',
      user: 'U0ALICE',
      text: 'Once more',
      blocks: [BLOCKS[1]!],
    });
    await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: again.message_ts!,
      actionId: 'stop',
    });
    await vi.waitFor(() =>
      expect(fake.ephemerals.filter((e) => e.shown)).toEqual([expect.objectContaining({ text: 'Stopping…' })]),
    );
    expect(seen.map((p) => p.body.container)).toMatchObject([{ is_ephemeral: true }, { is_ephemeral: true }]);
  });

  it('a wrong signature is refused by Bolt (HTTP 401) and is no platform failure', async () => {
    const ts = await postWithButtons();
    const result = await fake.sendBlockAction(
      bolt.url,
      { user: 'U0ALICE', channel: 'C0ONE', messageTs: ts, actionId: 'stop' },
      { signingSecret: 'wrong' },
    );
    expect(result).toMatchObject({ status: 401, ackedInTime: false, failure: undefined });
    expect(seen).toEqual([]);
    expect(fake.platformFailures).toEqual([]);
  });
});

describe('the ack deadline', () => {
  it('an ack later than the deadline is a platform failure (operation_timeout, block_actions)', async () => {
    const patient = await FakeSlack.start({ ackTimeoutMs: 200 });
    const bolt = await boltHttpApp(patient, (app) => {
      app.action('stop', async ({ ack }) => {
        await new Promise((resolve) => setTimeout(resolve, 600));
        await ack();
      });
    });
    try {
      const posted = await webClient(patient).chat.postMessage({ channel: 'C0GENERAL', text: 'x', blocks: BLOCKS });
      const result = await patient.sendBlockAction(bolt.url, {
        user: 'U0ALICE',
        channel: 'C0GENERAL',
        messageTs: posted.ts!,
        actionId: 'stop',
      });
      expect(result).toMatchObject({
        status: undefined,
        ackedInTime: false,
        failure: { kind: 'operation_timeout', command: 'block_actions' },
      });
      expect(patient.platformFailures).toEqual([result.failure]);
      expect(patient.blockActions).toMatchObject([{ ackedInTime: false, status: undefined }]);
    } finally {
      await bolt.stop();
      await patient.close();
    }
  });
});

describe('button presses over Socket Mode', () => {
  it("an interactive envelope reaches Bolt's action listener and is acked", async () => {
    const seen: Pressed[] = [];
    const bolt = await boltSocketApp(fake, (app) => {
      app.action<BlockAction<ButtonAction>>('stop', async ({ ack, body, action }) => {
        await ack();
        seen.push({ body, action });
      });
    });
    try {
      const ts = await postWithButtons();
      const result = await fake.sendSocketBlockAction({
        user: 'U0BOB',
        channel: 'C0ONE',
        messageTs: ts,
        actionId: 'stop',
      });
      const [connection] = fake.openSocketConnections();
      expect(result).toMatchObject({ connectionId: connection!.id, ackedInTime: true, failure: undefined });
      expect(result.payload).toMatchObject({
        type: 'block_actions',
        user: { id: 'U0BOB' },
        response_url: result.responseUrl,
        actions: [{ action_id: 'stop', block_id: 'controls' }],
      });
      await vi.waitFor(() => expect(seen).toHaveLength(1));
      expect(seen[0]!.body).toEqual(result.payload);
      expect(fake.envelopes.map((e) => [e.type, e.connectionId, e.ack?.late])).toEqual([
        ['interactive', connection!.id, false],
      ]);
      expect(connection!.received).toContainEqual({ envelope_id: result.envelopeId, payload: {} });
      expect(fake.blockActions).toMatchObject([{ via: 'socket', actionId: 'stop', ackedInTime: true }]);
    } finally {
      await bolt.stop();
    }
  });

  it('with no open connection the press is dispatch_failed', async () => {
    // The app of the test before has stopped; its connection closes shortly after.
    await vi.waitFor(() => expect(fake.openSocketConnections()).toEqual([]));
    const ts = await postWithButtons();
    const result = await fake.sendSocketBlockAction({
      user: 'U0BOB',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'stop',
    });
    expect(result).toMatchObject({
      connectionId: undefined,
      ackedInTime: false,
      failure: { kind: 'dispatch_failed', command: 'block_actions' },
    });
    expect(fake.platformFailures).toEqual([result.failure]);
  });
});

describe('message shortcuts over HTTP, to a Bolt app', () => {
  it('posts the message_action payload as Slack does; Bolt routes it by callback_id to app.shortcut, and respond() answers through its response_url', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const bolt = await boltHttpApp(fake, (app) => {
      app.shortcut({ callback_id: 'forget_thread', type: 'message_action' }, async ({ ack, shortcut, respond }) => {
        await ack();
        seen.push(shortcut as unknown as Record<string, unknown>);
        await respond({ response_type: 'ephemeral', text: 'done' });
      });
    });
    try {
      const parent = fake.postUserMessage('C0ONE', 'U0ALICE', 'question').ts;
      const reply = await postWithButtons('C0ONE', parent);
      const result = await fake.sendMessageShortcut(bolt.url, {
        user: 'U0ALICE',
        channel: 'C0ONE',
        messageTs: reply,
        callbackId: 'forget_thread',
      });
      expect(result).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
      expect(result.payload).toMatchObject({
        type: 'message_action',
        token: fake.verificationToken,
        action_ts: expect.stringMatching(/^\d{10}\.\d{6}$/),
        team: { id: fake.teamId, domain: fake.teamDomain },
        user: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: fake.teamId },
        channel: { id: 'C0ONE', name: 'one' },
        is_enterprise_install: false,
        enterprise: null,
        callback_id: 'forget_thread',
        trigger_id: result.triggerId,
        response_url: result.responseUrl,
        message_ts: reply,
        message: { type: 'message', ts: reply, thread_ts: parent, text: 'Answering…', bot_id: fake.botId },
      });
      await vi.waitFor(() => expect(seen).toHaveLength(1));
      expect(seen[0]).toEqual(result.payload);
      await vi.waitFor(() =>
        expect(fake.responsePosts().filter((p) => p.command === 'message_action')).toMatchObject([
          { status: 200, text: 'done', channel: 'C0ONE', user: 'U0ALICE' },
        ]),
      );
      // A shortcut no user could use throws.
      const input = { user: 'U0ALICE', channel: 'C0ONE', messageTs: reply, callbackId: 'forget_thread' };
      await expect(fake.sendMessageShortcut(bolt.url, { ...input, messageTs: '1.000001' })).rejects.toThrow(
        /no message/,
      );
      await expect(fake.sendMessageShortcut(bolt.url, { ...input, user: 'U0NOBODY' })).rejects.toThrow(/unknown user/);
      await expect(fake.sendMessageShortcut(bolt.url, { ...input, channel: 'C0SMALL', user: 'U0BOB' })).rejects.toThrow(
        /cannot see/,
      );
    } finally {
      await bolt.stop();
    }
  });
});
