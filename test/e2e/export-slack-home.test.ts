/**
 * End-to-end on Slack (issue 41, item 3, "and the App Home"): the Home tab offers the user their
 * conversations with the bot (their DM's, and the channels' they spoke in and may still read),
 * each with an Export button; a press sends that conversation as `/export` does
 * (conversation.md and conversation.json, in the user's DM with the bot) and publishes the Home
 * again with the result at its top (a Home press has no response_url). Presses are checked when
 * they run: someone else's button is refused, as is a conversation the user can no longer read,
 * and the 5 exports in 10 minutes are shared with /export. The whole bot (startTestBot), real
 * Bolt, against the fakes (the Home's presses: test/fakes/slack/home-actions.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { EXPORT_LIMIT, HOME_EXPORT_SENTENCES } from '../../src/core/features/export.ts';
import type { ExportTurn } from '../../src/core/features/export-format.ts';
import { english } from '../../src/core/i18n/words.ts';
import { buttonId } from '../../src/core/keys.ts';
import { HOME_EXPORT_BUTTON } from '../../src/platforms/slack/home-export.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { birds: 'C0HOMEBIRDS', owls: 'C0HOMEOWLS', secret: 'C0HOMESECRET', quota: 'C0HOMEQUOTA' } as const;
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const DAVE = 'U0DAVE';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: {
      channels: [
        { id: CHANNELS.birds, name: 'birds' },
        { id: CHANNELS.owls, name: 'owls' },
        { id: CHANNELS.secret, name: 'secret', isPrivate: true, members: [ALICE, BOB] },
        { id: CHANNELS.quota, name: 'quota' },
      ],
    },
    beforeBot: (e2e) => {
      e2e.slack.addUser({ id: CAROL, name: 'carol' });
      e2e.slack.addUser({ id: DAVE, name: 'dave' });
    },
    bot: {},
    timeoutMs: 30_000,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

const conversationOf = (channel: string, thread?: string) =>
  `slack:${slack.teamId}:${channel}${thread ? `:${thread}` : ''}`;

/** `/chat` by `user` in `channel`, answered with `answer`. */
async function chat(channel: string, user: string, prompt: string, answer: string): Promise<void> {
  service.enqueue('chat', { stream: { text: answer } });
  const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId === conversationOf(channel));
  await slack.sendSlashCommand(botUrl, { command: '/chat', text: prompt, channel_id: channel, user_id: user });
  expect((await done)[0]!.ok).toBe(true);
}

/** A question in `user`'s DM with the bot (the Messages tab), answered in its thread; returns that conversation's key. */
async function askInDm(user: string, text: string, answer: string): Promise<string> {
  service.enqueue('chat', { stream: { text: answer } });
  const dm = slack.openIm(user).id;
  const event = slack.imMessageEvent({ channel: dm, user, text });
  const conversation = conversationOf(dm, event.ts as string);
  const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversation);
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
  expect((await done)[0]!.ok).toBe(true);
  return conversation;
}

/** The user opens the Home tab; resolves once it is published. */
async function openHome(user: string): Promise<void> {
  const before = slack.homePublishes.length;
  expect(await slack.sendEvent(botUrl, slack.appHomeOpenedEvent({ user, tab: 'home' }))).toMatchObject({
    status: 200,
    ackedInTime: true,
  });
  await vi.waitFor(() => expect(slack.homePublishes.length).toBeGreaterThan(before), { timeout: 10_000 });
}

/** The Export buttons of `user`'s Home, by action_id, each with its section's text. */
function exportButtons(user: string): Array<{ actionId: string; text: string }> {
  const blocks = slack.homeView(user)!.view.blocks as Array<{
    type: string;
    text?: { text: string };
    accessory?: { type: string; action_id: string; text: { text: string } };
  }>;
  return blocks.flatMap((b) =>
    b.accessory?.type === 'button' && b.accessory.action_id.startsWith(`${HOME_EXPORT_BUTTON}:`)
      ? [{ actionId: b.accessory.action_id, text: unescapeSlack(b.text!.text) }]
      : [],
  );
}

/** The first section's text of `user`'s Home (a press's result). */
const homeNotice = (user: string) =>
  unescapeSlack((slack.homeView(user)!.view.blocks as Array<{ text?: { text: string } }>)[0]!.text!.text);

/**
 * `user` presses `actionId` on their Home (or forges a press of `forgedFrom`'s button); resolves
 * with the `export` outcome once the Home is published again with the result.
 */
async function press(
  user: string,
  actionId: string,
  conversation: string,
  forgedFrom?: string,
): Promise<CommandOutcome> {
  const before = slack.homePublishes.length;
  const done = testBot.outcomes((o) => o.command === 'export' && o.conversationId === conversation);
  const ack = await slack.sendHomeAction(botUrl, { user, actionId, ...(forgedFrom ? { forgedFrom } : {}) });
  expect(ack).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
  const [outcome] = await done;
  await vi.waitFor(() => expect(slack.homePublishes.slice(before).some((p) => p.user === user)).toBe(true), {
    timeout: 10_000,
  });
  return outcome!;
}

/** What the bot sent to `user`'s DM since `from` messages, with the files' contents. */
function sentTo(user: string, from: number) {
  return slack
    .messages(slack.openIm(user).id)
    .slice(from)
    .filter((m) => m.user === slack.botUserId && m.files.length)
    .map((m) => {
      const files = m.files.map((id) => slack.files.get(id)!);
      return {
        text: unescapeSlack(m.text),
        names: files.map((f) => f.filename),
        markdown: files[0]!.data!.toString('utf8'),
        json: JSON.parse(files[1]!.data!.toString('utf8')) as ExportTurn[],
      };
    });
}

const dmCount = (user: string) => slack.messages(slack.openIm(user).id).length;

describe('Slack App Home exports', () => {
  it("offers the user's DM conversation and the channels they spoke in; a press sends exactly that conversation to their DM and says so on the Home", async () => {
    await chat(CHANNELS.birds, ALICE, 'What do herons eat?', 'Herons eat fish.');
    await chat(CHANNELS.birds, BOB, 'And egrets?', 'Egrets eat fish too.');
    const dmConversation = await askInDm(ALICE, 'Tell me about kestrels.', 'Kestrels hover.');
    // A conversation Alice had no part in is not hers to find on her Home.
    await chat(CHANNELS.owls, BOB, 'A secret about owls.', 'Owls keep it.');

    await openHome(ALICE);
    const dm = slack.openIm(ALICE).id;
    const dmThread = dmConversation.split(':').at(-1)!;
    const buttons = exportButtons(ALICE);
    // Her DM's conversation, the channel's, and the thread her /chat answer opened there (its own conversation).
    const dmId = buttonId(HOME_EXPORT_BUTTON, ALICE, dm, dmThread);
    const birdsId = buttonId(HOME_EXPORT_BUTTON, ALICE, CHANNELS.birds);
    const ids = buttons.map((b) => b.actionId);
    expect(ids).toHaveLength(3);
    expect(ids).toEqual(expect.arrayContaining([dmId, birdsId]));
    expect(ids.filter((id) => id !== dmId && id !== birdsId)).toEqual([
      expect.stringMatching(new RegExp(`^${birdsId}:\\d+\\.\\d+$`)),
    ]);
    const dmButton = buttons.find((b) => b.actionId === dmId)!;
    expect(dmButton.text).toContain('Our direct messages');
    expect(dmButton.text).toContain('“Tell me about kestrels.”');
    expect(buttons.find((b) => b.actionId === birdsId)!.text).toContain(`The channel <#${CHANNELS.birds}>`);
    expect(buttons.find((b) => b.actionId.startsWith(`${birdsId}:`))!.text).toContain(
      `A thread in <#${CHANNELS.birds}>`,
    );

    // The DM conversation: its own turns, nothing of the channels'.
    let from = dmCount(ALICE);
    expect((await press(ALICE, dmButton.actionId, dmConversation)).ok).toBe(true);
    let sent = sentTo(ALICE, from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.names).toEqual(['conversation.md', 'conversation.json']);
    expect(sent[0]!.json.map((t) => [t.role, t.author, t.text])).toEqual([
      ['user', ALICE, 'Tell me about kestrels.'],
      ['assistant', 'bot', 'Kestrels hover.'],
    ]);
    expect(`${sent[0]!.markdown}${JSON.stringify(sent[0]!.json)}`).not.toMatch(/herons|egrets|owls/i);
    expect(homeNotice(ALICE)).toBe(english.say(HOME_EXPORT_SENTENCES.sent));
    // The Home published again still offers the exports.
    expect(exportButtons(ALICE)).toHaveLength(3);

    // The channel's conversation: every turn there (Alice may read the channel), nothing of another.
    from = dmCount(ALICE);
    expect((await press(ALICE, birdsId, conversationOf(CHANNELS.birds))).ok).toBe(true);
    sent = sentTo(ALICE, from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.markdown).toMatch(new RegExp(`^# Conversation export: Slack channel ${CHANNELS.birds}`));
    expect(sent[0]!.json.map((t) => [t.role, t.author, t.text])).toEqual([
      ['user', ALICE, 'What do herons eat?'],
      ['assistant', 'bot', 'Herons eat fish.'],
      ['user', BOB, 'And egrets?'],
      ['assistant', 'bot', 'Egrets eat fish too.'],
    ]);
    expect(`${sent[0]!.markdown}${JSON.stringify(sent[0]!.json)}`).not.toMatch(/kestrels|owls/i);
    // Nothing was posted in the channel.
    expect(slack.messages(CHANNELS.birds).filter((m) => m.files.length)).toEqual([]);
    expect(slack.platformFailures).toEqual([]);
  });

  it("refuses a forged press of someone else's Export button, on the presser's Home, and sends nothing to anyone", async () => {
    await chat(CHANNELS.owls, ALICE, 'Owls at night?', 'Owls hunt at night.');
    await openHome(ALICE);
    const alices = buttonId(HOME_EXPORT_BUTTON, ALICE, CHANNELS.owls);
    expect(exportButtons(ALICE).map((b) => b.actionId)).toContain(alices);
    await openHome(BOB);
    const uploads = slack.callsTo('files.completeUploadExternal').length;
    const [bobs, alicesDm] = [dmCount(BOB), dmCount(ALICE)];

    const outcome = await press(BOB, alices, conversationOf(CHANNELS.owls), ALICE);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(homeNotice(BOB)).toBe(english.say(HOME_EXPORT_SENTENCES.notYours));
    expect(slack.callsTo('files.completeUploadExternal')).toHaveLength(uploads);
    expect([dmCount(BOB), dmCount(ALICE)]).toEqual([bobs, alicesDm]);
    // Alice's Home was not touched by Bob's press.
    expect(homeNotice(ALICE)).not.toBe(english.say(HOME_EXPORT_SENTENCES.notYours));
  });

  it('no longer offers, and refuses, a conversation of a private channel the user has left', async () => {
    await chat(CHANNELS.secret, BOB, 'The plan for Friday?', 'Cake at four.');
    await chat(CHANNELS.secret, ALICE, 'Who brings candles?', 'Bob does.');
    await openHome(ALICE);
    const secret = buttonId(HOME_EXPORT_BUTTON, ALICE, CHANNELS.secret);
    expect(exportButtons(ALICE).map((b) => b.actionId)).toContain(secret);

    // Alice leaves the channel; her Home still shows the old button until it is published again.
    slack.addChannel({ id: CHANNELS.secret, name: 'secret', isPrivate: true, members: [BOB] });
    const uploads = slack.callsTo('files.completeUploadExternal').length;
    const outcome = await press(ALICE, secret, conversationOf(CHANNELS.secret));
    expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(homeNotice(ALICE)).toBe(english.say(HOME_EXPORT_SENTENCES.notReadable));
    expect(slack.callsTo('files.completeUploadExternal')).toHaveLength(uploads);
    // The Home published with that refusal, and any later, no longer offers it.
    expect(exportButtons(ALICE).map((b) => b.actionId)).not.toContain(secret);
    await openHome(ALICE);
    expect(exportButtons(ALICE).map((b) => b.actionId)).not.toContain(secret);
    // Bob, still a member, is offered it.
    await openHome(BOB);
    expect(exportButtons(BOB).map((b) => b.actionId)).toContain(buttonId(HOME_EXPORT_BUTTON, BOB, CHANNELS.secret));
  });

  it('refuses a conversation the user erased with /forget me since the Home was published, and no longer offers it', async () => {
    await chat(CHANNELS.owls, DAVE, 'Dave on owls.', 'Noted, Dave.');
    await openHome(DAVE);
    const owls = buttonId(HOME_EXPORT_BUTTON, DAVE, CHANNELS.owls);
    expect(exportButtons(DAVE).map((b) => b.actionId)).toContain(owls);
    const forgotten = testBot.outcomes(
      (o) => o.command === 'forget' && o.conversationId === conversationOf(CHANNELS.owls),
    );
    await slack.sendSlashCommand(botUrl, { command: '/forget', text: 'me', channel_id: CHANNELS.owls, user_id: DAVE });
    expect((await forgotten)[0]!.ok).toBe(true);
    const uploads = slack.callsTo('files.completeUploadExternal').length;

    const outcome = await press(DAVE, owls, conversationOf(CHANNELS.owls));
    expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(homeNotice(DAVE)).toBe(english.say(HOME_EXPORT_SENTENCES.notOffered));
    expect(slack.callsTo('files.completeUploadExternal')).toHaveLength(uploads);
    expect(exportButtons(DAVE)).toEqual([]);
    expect(JSON.stringify(slack.homeView(DAVE)!.view.blocks)).toContain(english.say(HOME_EXPORT_SENTENCES.none));
  });

  it('counts Home exports with /export: 5 in 10 minutes per user, the next refused on the Home with nothing sent', async () => {
    await chat(CHANNELS.quota, CAROL, 'Count with me.', 'One, two.');
    await openHome(CAROL);
    const quota = buttonId(HOME_EXPORT_BUTTON, CAROL, CHANNELS.quota);
    const from = dmCount(CAROL);
    // One /export in the channel, then presses up to the limit.
    const exported = testBot.outcomes(
      (o) => o.command === 'export' && o.conversationId === conversationOf(CHANNELS.quota),
    );
    await slack.sendSlashCommand(botUrl, { command: '/export', text: '', channel_id: CHANNELS.quota, user_id: CAROL });
    expect((await exported)[0]!.ok).toBe(true);
    for (let i = 1; i < EXPORT_LIMIT; i++)
      expect((await press(CAROL, quota, conversationOf(CHANNELS.quota))).ok).toBe(true);
    expect(sentTo(CAROL, from)).toHaveLength(EXPORT_LIMIT);

    const outcome = await press(CAROL, quota, conversationOf(CHANNELS.quota));
    expect(outcome).toMatchObject({ ok: false, errorCode: 'quota_exceeded' });
    expect(homeNotice(CAROL)).toMatch(new RegExp(`^You can export ${EXPORT_LIMIT} times in 10 minutes\\. Try again `));
    expect(sentTo(CAROL, from)).toHaveLength(EXPORT_LIMIT);
  });
});
