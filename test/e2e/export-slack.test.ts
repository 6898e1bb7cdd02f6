/**
 * End-to-end on Slack (issue 41, item 3): `/export` in a channel sends the asker the channel's
 * conversation as `conversation.md` and `conversation.json`, uploaded into their DM with the bot
 * (conversations.open, files.getUploadURLExternal, files.completeUploadExternal), says so in an
 * ephemeral line (response_url), posts nothing in the channel, and carries nothing of another
 * channel's conversation; the message shortcut "Export this thread" does the same for a thread's
 * own conversation (no slash command runs in a Slack thread). The whole bot (startTestBot), real Bolt, against the fakes.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { EXPORT_SENTENCES } from '../../src/core/features/export.ts';
import type { ExportTurn } from '../../src/core/features/export-format.ts';
import { english } from '../../src/core/i18n/words.ts';
import { storeKeys } from '../../src/core/keys.ts';
import { IM_WRITE_MISSING } from '../../src/platforms/slack/direct.ts';
import { EXPORT_THREAD_SHORTCUT } from '../../src/platforms/slack/shortcuts.ts';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_BOT_SCOPES, type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  here: 'C0EXPORTHERE',
  elsewhere: 'C0EXPORTELSE',
  empty: 'C0EXPORTEMPTY',
  scope: 'C0EXPORTSCOPE',
} as const;
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E({ slack: { channels: slackChannels(CHANNELS) }, bot: {}, timeoutMs: 30_000 }, (e2e) => {
  ({ service, slack, bot: testBot, botUrl } = e2e);
});

const conversationOf = (channel: string) => `slack:${slack.teamId}:${channel}`;

/** Runs a slash command by `user` in `channel` and waits for its outcome. */
async function run(command: string, text: string, channel: string, user: string): Promise<CommandOutcome> {
  const done = testBot.outcomes(
    (o) => o.command === command && o.conversationId === conversationOf(channel),
    1,
    30_000,
  );
  const ack = await slack.sendSlashCommand(botUrl, {
    command: `/${command}`,
    text,
    channel_id: channel,
    user_id: user,
  });
  expect(ack).toMatchObject({ ackedInTime: true });
  return (await done)[0]!;
}

async function chat(channel: string, user: string, prompt: string, answer: string): Promise<void> {
  service.enqueue('chat', { stream: { text: answer } });
  expect((await run('chat', prompt, channel, user)).ok).toBe(true);
}

/** A mention by `user` in `channel` (a new thread), answered with `answer`; returns the thread's ts. */
async function mentionIn(channel: string, user: string, text: string, answer: string): Promise<string> {
  service.enqueue('chat', { stream: { text: answer } });
  const event = slack.mentionEvent({ channel, user, text });
  const thread = event.ts as string;
  const done = testBot.outcomes((o) => o.conversationId === `${conversationOf(channel)}:${thread}`, 1, 30_000);
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
  expect((await done)[0]!.ok).toBe(true);
  return thread;
}

describe('Slack /export', () => {
  it("sends the asker this channel's conversation as two files in their DM, says so ephemerally, posts nothing in the channel, nothing of another channel", async () => {
    await chat(CHANNELS.here, ALICE, 'What do herons eat?', 'Herons eat fish.');
    await chat(CHANNELS.elsewhere, ALICE, 'A secret about owls.', 'Owls keep it.');
    await chat(CHANNELS.here, BOB, 'And egrets?', 'Egrets eat fish too.');
    const inChannel = slack.messages(CHANNELS.here).length;
    const posts = slack.responsePosts().length;

    expect((await run('export', '', CHANNELS.here, ALICE)).ok).toBe(true);

    const answers = slack.responsePosts().slice(posts);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ status: 200, responseType: 'ephemeral' });
    expect(unescapeSlack(answers[0]!.text)).toBe(english.say(EXPORT_SENTENCES.sentByDm));
    expect(slack.messages(CHANNELS.here)).toHaveLength(inChannel);

    const dm = slack.openIm(ALICE);
    const sent = slack.messages(dm.id).filter((m) => m.user === slack.botUserId);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.via).toBe('files.completeUploadExternal');
    expect(unescapeSlack(sent[0]!.text)).toContain(`Slack channel ${CHANNELS.here}`);
    const files = sent[0]!.files.map((id) => slack.files.get(id)!);
    expect(files.map((f) => f.filename)).toEqual(['conversation.md', 'conversation.json']);
    const markdown = files[0]!.data!.toString('utf8');
    const json = JSON.parse(files[1]!.data!.toString('utf8')) as ExportTurn[];
    expect(markdown).toMatch(new RegExp(`^# Conversation export: Slack channel ${CHANNELS.here}`));
    expect(json.map((t) => [t.role, t.author, t.text])).toEqual([
      ['user', ALICE, 'What do herons eat?'],
      ['assistant', 'bot', 'Herons eat fish.'],
      ['user', BOB, 'And egrets?'],
      ['assistant', 'bot', 'Egrets eat fish too.'],
    ]);
    for (const turn of json) expect(new Date(turn.time).toISOString()).toBe(turn.time);
    expect(`${markdown}${JSON.stringify(json)}`).not.toMatch(/owls/i);
    // Bob's DM got nothing: the export went to the asker alone.
    expect(slack.messages(slack.openIm(BOB).id).filter((m) => m.user === slack.botUserId)).toEqual([]);
  });

  it("exports a thread's own conversation by the message shortcut “Export this thread”, to the user's DM, nothing of the channel's or another thread's", async () => {
    const thread = await mentionIn(CHANNELS.here, ALICE, 'Thread question about kestrels?', 'Kestrels hover.');
    await mentionIn(CHANNELS.here, BOB, 'Another thread about owls.', 'Owls hoot.');
    const reply = slack.thread(CHANNELS.here, thread).find((m) => m.user === slack.botUserId)!;
    const dm = slack.openIm(BOB);
    const before = slack.messages(dm.id).length;
    const done = testBot.outcomes(
      (o) => o.command === 'export' && o.conversationId === `${conversationOf(CHANNELS.here)}:${thread}`,
      1,
      30_000,
    );
    const ack = await slack.sendMessageShortcut(botUrl, {
      user: BOB,
      channel: CHANNELS.here,
      messageTs: reply.ts,
      callbackId: EXPORT_THREAD_SHORTCUT.callbackId,
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    expect((await done)[0]!.ok).toBe(true);
    const told = slack.responsePosts().filter((p) => p.command === 'message_action' && p.user === BOB);
    expect(told.map((p) => unescapeSlack(p.text))).toEqual([english.say(EXPORT_SENTENCES.sentByDm)]);
    const sent = slack.messages(dm.id).slice(before);
    expect(sent).toHaveLength(1);
    const json = JSON.parse(slack.files.get(sent[0]!.files[1]!)!.data!.toString('utf8')) as ExportTurn[];
    expect(json.map((t) => [t.role, t.text])).toEqual([
      ['user', 'Thread question about kestrels?'],
      ['assistant', 'Kestrels hover.'],
    ]);
    expect(JSON.stringify(json)).not.toMatch(/owls|herons/i);
  });

  it('without the im:write scope (an app installed before /export), tells the asker that an admin must add it, and sends nothing', async () => {
    await chat(CHANNELS.scope, BOB, 'Something to export.', 'Noted.');
    const posts = slack.responsePosts().length;
    const uploads = slack.callsTo('files.completeUploadExternal').length;
    slack.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'im:write'));
    try {
      expect((await run('export', '', CHANNELS.scope, BOB)).ok).toBe(false);
    } finally {
      slack.setScopes([...DEFAULT_BOT_SCOPES]);
    }
    const answers = slack.responsePosts().slice(posts);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ responseType: 'ephemeral' });
    expect(unescapeSlack(answers[0]!.text)).toContain(english.say(IM_WRITE_MISSING));
    expect(slack.callsTo('files.completeUploadExternal')).toHaveLength(uploads);
    // The failed export was not counted against the user's 5 in 10 minutes.
    const counter = await testBot.bot.core.store.counter(storeKeys.quota('export', `slack:${slack.teamId}:${BOB}`));
    expect(counter.value).toBe(1);
  });

  it('says there is nothing to export where nothing is stored, and sends no DM', async () => {
    const posts = slack.responsePosts().length;
    const dm = slack.openIm(BOB);
    const before = slack.messages(dm.id).length;
    expect((await run('export', '', CHANNELS.empty, BOB)).ok).toBe(true);
    const answers = slack.responsePosts().slice(posts);
    expect(answers.map((a) => unescapeSlack(a.text))).toEqual([english.say(EXPORT_SENTENCES.empty)]);
    expect(slack.messages(dm.id)).toHaveLength(before);
  });
});
