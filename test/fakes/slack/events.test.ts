/**
 * Tests of the event builders: each stores what the person wrote (same ts as the event) and
 * returns the event in Slack's exact shape — app_mention with `<@BOT>`, rich_text blocks and
 * files; a DM message with `channel_type: 'im'` and `file_share`; another app's bot_message;
 * the bot's own message; message_changed; message_deleted — and refuses what Slack never sends.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { webClient } from './test-helpers.ts';

let fake: FakeSlack;

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0SMALL', name: 'small', members: ['U0ALICE'] },
    ],
  });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('app_mention', () => {
  it('is exactly what Slack sends: the bot mentioned first, user text escaped, rich_text blocks, the message stored with the same ts', () => {
    const event = fake.mentionEvent({
      channel: 'C0ONE',
      user: 'U0ALICE',
      text: 'is 1 < 2 & <!here> see <https://x.test/a|this>?',
    });
    const text = `<@${fake.botUserId}> is 1 &lt; 2 &amp; <!here> see <https://x.test/a|this>?`;
    expect(event).toEqual({
      user: 'U0ALICE',
      type: 'app_mention',
      ts: expect.stringMatching(/^\d{10}\.\d{6}$/),
      client_msg_id: expect.stringMatching(UUID),
      text,
      team: fake.teamId,
      blocks: [
        {
          type: 'rich_text',
          block_id: expect.any(String),
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'user', user_id: fake.botUserId },
                { type: 'text', text: ' is 1 < 2 & ' },
                { type: 'broadcast', range: 'here' },
                { type: 'text', text: ' see ' },
                { type: 'link', url: 'https://x.test/a', text: 'this' },
                { type: 'text', text: '?' },
              ],
            },
          ],
        },
      ],
      channel: 'C0ONE',
      event_ts: event.ts,
    });
    expect(fake.message('C0ONE', event.ts as string)).toMatchObject({
      user: 'U0ALICE',
      text,
      via: 'user',
      threadTs: undefined,
    });
  });

  it('keeps a mention of the bot where the user wrote it; in a thread it has thread_ts and parent_user_id; files come with upload: false', async () => {
    const parent = await webClient(fake).chat.postMessage({ channel: 'C0ONE', text: 'earlier answer' });
    const file = fake.addUserFile({ name: 'cat.png', mimetype: 'image/png', data: Buffer.from('png'), user: 'U0BOB' });
    const event = fake.mentionEvent({
      channel: 'C0ONE',
      user: 'U0BOB',
      text: `what is this, <@${fake.botUserId}>?`,
      threadTs: parent.ts!,
      files: [file],
    });
    expect(event).toMatchObject({
      text: `what is this, <@${fake.botUserId}>?`,
      thread_ts: parent.ts,
      parent_user_id: fake.botUserId,
      upload: false,
      display_as_bot: false,
      files: [
        {
          id: file.id,
          name: 'cat.png',
          mimetype: 'image/png',
          url_private: file.urlPrivate,
          url_private_download: file.urlPrivateDownload,
          user: 'U0BOB',
          size: 3,
        },
      ],
    });
    expect(event).not.toHaveProperty('subtype');
    expect(file).toMatchObject({ channel: 'C0ONE', threadTs: parent.ts, messageTs: event.ts });
    expect(fake.thread('C0ONE', parent.ts!).map((m) => m.ts)).toEqual([event.ts]);
  });

  it("refuses what Slack never sends: a mention in a DM, by a user not in the channel, in a thread that does not exist, with someone else's file", () => {
    const dm = fake.openIm('U0ALICE');
    const bobs = fake.addUserFile({ name: 'b.png', mimetype: 'image/png', data: Buffer.from('b'), user: 'U0BOB' });
    expect(() => fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hi', files: [bobs] })).toThrow(
      /belongs to U0BOB/,
    );
    expect(() => fake.mentionEvent({ channel: dm.id, user: 'U0ALICE', text: 'hi' })).toThrow(/no app_mention in a DM/);
    expect(() => fake.mentionEvent({ channel: 'C0SMALL', user: 'U0BOB', text: 'hi' })).toThrow(/not a member/);
    expect(() =>
      fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hi', threadTs: '1700000000.000001' }),
    ).toThrow(/thread_not_found/);
    expect(() => fake.mentionEvent({ channel: 'C0NOPE', user: 'U0ALICE', text: 'hi' })).toThrow(/unknown channel/);
    expect(fake.messages()).toEqual([]);
  });
});

describe('messages in a DM', () => {
  it('a plain message: type message, channel_type im, no subtype; with files: subtype file_share, upload: true', () => {
    const dm = fake.openIm('U0BOB');
    const plain = fake.imMessageEvent({ channel: dm.id, user: 'U0BOB', text: 'hello' });
    expect(plain).toEqual({
      user: 'U0BOB',
      type: 'message',
      ts: expect.any(String),
      client_msg_id: expect.stringMatching(UUID),
      text: 'hello',
      team: fake.teamId,
      blocks: [
        {
          type: 'rich_text',
          block_id: expect.any(String),
          elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'hello' }] }],
        },
      ],
      channel: dm.id,
      event_ts: plain.ts,
      channel_type: 'im',
    });
    const file = fake.addUserFile({ name: 'a.jpg', mimetype: 'image/jpeg', data: Buffer.from('jpg'), user: 'U0BOB' });
    const withFile = fake.imMessageEvent({ channel: dm.id, user: 'U0BOB', text: '', files: [file] });
    expect(withFile).toMatchObject({
      type: 'message',
      subtype: 'file_share',
      upload: true,
      display_as_bot: false,
      text: '',
      channel_type: 'im',
      files: [{ id: file.id, filetype: 'jpg' }],
    });
    expect(withFile).not.toHaveProperty('blocks');
  });

  it("refuses a channel that is not a DM, and a user who is not the DM's", () => {
    const dm = fake.openIm('U0BOB');
    expect(() => fake.imMessageEvent({ channel: 'C0ONE', user: 'U0BOB', text: 'x' })).toThrow(/not a DM/);
    expect(() => fake.imMessageEvent({ channel: dm.id, user: 'U0ALICE', text: 'x' })).toThrow(/cannot write in the DM/);
  });
});

describe('events the bot must ignore', () => {
  it("another app's bot_message: bot_id, username, icons, no user", () => {
    const event = fake.botMessageEvent({ channel: 'C0ONE', text: 'deploy done', username: 'ci' });
    expect(event).toEqual({
      type: 'message',
      subtype: 'bot_message',
      text: 'deploy done',
      ts: expect.any(String),
      username: 'ci',
      bot_id: 'B0OTHERAPP',
      icons: {},
      channel: 'C0ONE',
      event_ts: event.ts,
      channel_type: 'channel',
    });
    expect(fake.message('C0ONE', event.ts as string)).toMatchObject({ via: 'other_app', botId: 'B0OTHERAPP' });
  });

  it("the bot's own message echoed: user is the bot, bot_id, app_id, bot_profile, no subtype", async () => {
    const dm = fake.openIm('U0ALICE');
    const posted = await webClient(fake).chat.postMessage({ channel: dm.id, text: 'my answer' });
    const event = fake.ownMessageEvent({ channel: dm.id, ts: posted.ts! });
    expect(event).toMatchObject({
      type: 'message',
      user: fake.botUserId,
      bot_id: fake.botId,
      app_id: fake.appId,
      text: 'my answer',
      ts: posted.ts,
      channel_type: 'im',
      bot_profile: { id: fake.botId },
    });
    expect(event).not.toHaveProperty('subtype');
    expect(() => fake.ownMessageEvent({ channel: dm.id, ts: '1700000000.000001' })).toThrow(/no message of the bot/);
  });

  it('message_changed updates the message and carries it with edited and the previous one; message_deleted deletes it', () => {
    const dm = fake.openIm('U0ALICE');
    const original = fake.imMessageEvent({ channel: dm.id, user: 'U0ALICE', text: 'helo' });
    const changed = fake.messageChangedEvent({ channel: dm.id, ts: original.ts as string, text: 'hello' });
    expect(changed).toMatchObject({
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: dm.id,
      channel_type: 'im',
      message: {
        type: 'message',
        user: 'U0ALICE',
        text: 'hello',
        ts: original.ts,
        edited: { user: 'U0ALICE', ts: changed.ts },
      },
      previous_message: { type: 'message', user: 'U0ALICE', text: 'helo', ts: original.ts },
    });
    expect(changed.ts).not.toBe(original.ts);
    expect(changed.event_ts).toBe(changed.ts);
    expect(fake.message(dm.id, original.ts as string)?.revisions.map((r) => r.text)).toEqual(['helo', 'hello']);
    const deleted = fake.messageDeletedEvent({ channel: dm.id, ts: original.ts as string });
    expect(deleted).toMatchObject({
      type: 'message',
      subtype: 'message_deleted',
      hidden: true,
      deleted_ts: original.ts,
      previous_message: { text: 'hello' },
      channel_type: 'im',
    });
    expect(fake.messages(dm.id)).toEqual([]);
  });
});
