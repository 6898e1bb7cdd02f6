/**
 * Tests of DMs and of what the bot may read back: openIm creates one `D…` channel per user that
 * the bot posts in like anywhere; conversations.info / history / replies answer what people and
 * the bot wrote (messages of the event builders included, with the same ts), per Slack's rules;
 * conversations.members lists who is in a conversation, as far as the bot may see it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOT_SCOPES, FakeSlack } from '../slack.ts';
import { slackError, webClient } from './test-helpers.ts';

let fake: FakeSlack;
const client = () => webClient(fake);

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0NOBOT', name: 'nobot', botIsMember: false },
      { id: 'G0SECRET', name: 'secret', isPrivate: true, members: ['U0ALICE'] },
      { id: 'G0HIDDEN', name: 'hidden', isPrivate: true, members: ['U0ALICE'], botIsMember: false },
    ],
  });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

describe('DMs', () => {
  it('openIm creates one D… channel per user (is_im, user); the bot posts and updates there; the user writes there', async () => {
    const dm = fake.openIm('U0ALICE');
    expect(dm).toMatchObject({ isIm: true, imUser: 'U0ALICE' });
    expect(dm.id).toMatch(/^D[0-9A-F]{10}$/);
    expect(fake.openIm('U0ALICE').id).toBe(dm.id);
    expect(fake.openIm('U0BOB').id).not.toBe(dm.id);
    expect(() => fake.openIm('U0NOBODY')).toThrow(/unknown user/);

    expect((await client().conversations.info({ channel: dm.id })).channel).toMatchObject({
      id: dm.id,
      is_im: true,
      user: 'U0ALICE',
    });
    const posted = await client().chat.postMessage({ channel: dm.id, text: 'hello' });
    await client().chat.update({ channel: dm.id, ts: posted.ts!, text: 'hello again' });
    const theirs = fake.postUserMessage(dm.id, 'U0ALICE', 'hi bot');
    expect(fake.messages(dm.id).map((m) => [m.user, m.text])).toEqual([
      [fake.botUserId, 'hello again'],
      ['U0ALICE', 'hi bot'],
    ]);
    expect(await slackError(client().chat.update({ channel: dm.id, ts: theirs.ts, text: 'x' }))).toBe(
      'cant_update_message',
    );
  });

  it('a slash command typed in a DM says channel_name directmessage, as Slack does', async () => {
    const dm = fake.openIm('U0BOB');
    const result = await fake.sendSlashCommand('http://127.0.0.1:9', {
      command: '/chat',
      text: 'x',
      channel_id: dm.id,
      user_id: 'U0BOB',
    });
    expect(new URLSearchParams(result.rawBody).get('channel_name')).toBe('directmessage');
  });
});

describe('conversations.history and conversations.replies', () => {
  it('history: top-level messages newest first, a thread parent with reply_count, reply_users and latest_reply', async () => {
    const mention = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'question' });
    const answer = await client().chat.postMessage({
      channel: 'C0ONE',
      text: 'answer',
      thread_ts: mention.ts as string,
    });
    const later = await client().chat.postMessage({ channel: 'C0ONE', text: 'later' });
    const history = await client().conversations.history({ channel: 'C0ONE' });
    expect(history.messages?.map((m) => m.ts)).toEqual([later.ts, mention.ts]);
    expect(history.messages?.[1]).toMatchObject({
      user: 'U0ALICE',
      text: `<@${fake.botUserId}> question`,
      thread_ts: mention.ts,
      reply_count: 1,
      reply_users: [fake.botUserId],
      latest_reply: answer.ts,
    });
    expect(history.has_more).toBe(false);
  });

  it('replies: the parent first, then replies oldest first, for the ts of the parent or of a reply; an unknown ts is thread_not_found', async () => {
    const parent = await client().chat.postMessage({ channel: 'C0ONE', text: 'parent' });
    const userReply = fake.mentionEvent({
      channel: 'C0ONE',
      user: 'U0BOB',
      text: 'in the thread',
      threadTs: parent.ts!,
    });
    const botReply = await client().chat.postMessage({ channel: 'C0ONE', text: 'bot reply', thread_ts: parent.ts! });
    for (const ts of [parent.ts!, userReply.ts as string]) {
      const thread = await client().conversations.replies({ channel: 'C0ONE', ts });
      expect(thread.messages?.map((m) => m.ts)).toEqual([parent.ts, userReply.ts, botReply.ts]);
      expect(thread.messages?.[1]).toMatchObject({
        user: 'U0BOB',
        thread_ts: parent.ts,
        parent_user_id: fake.botUserId,
      });
    }
    expect(await slackError(client().conversations.replies({ channel: 'C0ONE', ts: '1700000000.000001' }))).toBe(
      'thread_not_found',
    );
  });

  it('pages with limit and cursor; a malformed cursor is invalid_cursor; a channel without the bot is not_in_channel', async () => {
    const posted: string[] = [];
    for (let i = 0; i < 5; i++) posted.push(fake.postUserMessage('C0ONE', 'U0ALICE', `m${i}`).ts);
    const first = await client().conversations.history({ channel: 'C0ONE', limit: 2 });
    expect(first.messages?.map((m) => m.text)).toEqual(['m4', 'm3']);
    expect(first.has_more).toBe(true);
    const second = await client().conversations.history({
      channel: 'C0ONE',
      limit: 2,
      cursor: first.response_metadata!.next_cursor!,
    });
    expect(second.messages?.map((m) => m.text)).toEqual(['m2', 'm1']);
    const bounded = await client().conversations.history({
      channel: 'C0ONE',
      oldest: posted[1]!,
      latest: posted[3]!,
      inclusive: true,
    });
    expect(bounded.messages?.map((m) => m.text)).toEqual(['m3', 'm2', 'm1']);
    expect(await slackError(client().conversations.history({ channel: 'C0ONE', cursor: 'bm9wZQ==' }))).toBe(
      'invalid_cursor',
    );
    expect(await slackError(client().conversations.history({ channel: 'C0NOBOT' }))).toBe('not_in_channel');
  });

  it('deleted messages are gone from both', async () => {
    const parent = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'oops' });
    fake.messageDeletedEvent({ channel: 'C0ONE', ts: parent.ts as string });
    expect((await client().conversations.history({ channel: 'C0ONE' })).messages).toEqual([]);
    expect(await slackError(client().conversations.replies({ channel: 'C0ONE', ts: parent.ts as string }))).toBe(
      'thread_not_found',
    );
  });
});

describe('conversations.members', () => {
  it("lists a channel's members and the bot, by pages; a private channel without the bot is channel_not_found, a public one is listed", async () => {
    expect((await client().conversations.members({ channel: 'G0SECRET' })).members).toEqual([
      'U0ALICE',
      fake.botUserId,
    ]);
    const first = await client().conversations.members({ channel: 'C0ONE', limit: 1 });
    expect(first.members).toEqual(['U0ALICE']);
    const rest = await client().conversations.members({
      channel: 'C0ONE',
      limit: 1000,
      cursor: first.response_metadata!.next_cursor!,
    });
    expect(rest.members).toEqual(['U0BOB', fake.botUserId]);
    expect(rest.response_metadata?.next_cursor).toBe('');
    // Removing someone from a private channel shows at once.
    fake.addChannel({ id: 'G0SECRET', name: 'secret', isPrivate: true, members: [] });
    expect((await client().conversations.members({ channel: 'G0SECRET' })).members).toEqual([fake.botUserId]);
    expect(await slackError(client().conversations.members({ channel: 'G0HIDDEN' }))).toBe('channel_not_found');
    expect((await client().conversations.members({ channel: 'C0NOBOT' })).members).toEqual(['U0ALICE', 'U0BOB']);
    fake.setScopes(['groups:read']);
    try {
      expect(await slackError(client().conversations.members({ channel: 'C0ONE' }))).toBe('missing_scope');
    } finally {
      fake.setScopes([...DEFAULT_BOT_SCOPES]);
    }
    fake.addChannel({ id: 'G0SECRET', name: 'secret', isPrivate: true, members: ['U0ALICE'] });
  });
});
