/**
 * End-to-end on Discord, Regenerate and edited mentions (issue 19 item 4): the whole bot with
 * discord.js and undici unmodified, against FakeDiscord and FakeService. A finished answer of
 * /chat, /complete or a mention carries a Regenerate button in its final write; a press by the
 * asker (or an admin) sends the same request again, edits the new answer into the same message
 * (deferUpdate, then the interaction's `@original`) and replaces the exchange in the history;
 * anyone else is refused. Editing a mention within EDIT_REANSWER_MINUTES re-answers it in place,
 * once per edit (MESSAGE_UPDATE from the fake, as Discord sends it).
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { splitMessage } from '../../src/core/delivery/split.ts';
import { BOT_PERMISSIONS, P } from '../fakes/discord/constants.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage, Json } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { EDIT_REANSWER_MINUTES: '10' } }, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** A member without admin rights who asks. */
const ALICE = { id: '1290000000000000501', username: 'alice' };
/** Another member without admin rights. */
const BOB = { id: '1290000000000000502', username: 'bob' };

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** The custom ids of a message's buttons, but 👍 / 👎 (after Regenerate: feedback-discord.test.ts). */
const buttonIds = (message: FakeMessage) =>
  message.components
    .flatMap((row) => (row.components as Json[]).map((b) => String(b.custom_id)))
    .filter((id) => !id.startsWith('feedback:'));

/** The message's Regenerate button id (fails when it has none). */
function regenerateOf(message: FakeMessage): string {
  const id = buttonIds(message).find((b) => b.startsWith('regenerate:'));
  expect(id, `buttons: ${buttonIds(message).join(', ')}`).toBeDefined();
  return id!;
}

/** Resolves with the next outcome of `command` in the channel's conversation. */
async function next(command: string, channel: FakeChannel): Promise<CommandOutcome> {
  const conversationId = conversationOf(channel);
  const [outcome] = await testBot.outcomes((o) => o.command === command && o.conversationId === conversationId);
  return outcome!;
}

/** The one ephemeral message the bot sent for an interaction. */
function ephemeralOf(interaction: FakeInteraction): FakeMessage {
  const shown = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
  expect(shown).toHaveLength(1);
  return shown[0]!;
}

/** Runs /chat as `user` and waits for its answer. */
async function chat(channel: FakeChannel, prompt: string, user = ALICE): Promise<FakeInteraction> {
  const done = next('chat', channel);
  const interaction = discord.dispatchInteraction({
    channelId: channel.id,
    command: 'chat',
    options: { prompt },
    user,
  });
  expect((await done).ok).toBe(true);
  return interaction;
}

/** Presses a button and waits for the press's outcome. */
async function press(
  channel: FakeChannel,
  message: FakeMessage,
  customId: string,
  user: { id: string; username: string },
  admin = false,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = next('regenerate:button', channel);
  const interaction = discord.pressButton({ messageId: message.id, customId, user, admin });
  return { interaction, outcome: await done };
}

/** The text of the last user message of a chat request. */
const lastUserText = (body: ChatRequestBody) => {
  const content = body.messages.at(-1)!.content;
  return typeof content === 'string' ? content : (content.find((p) => p.type === 'text') as { text: string }).text;
};

/** Resolves once the bot logged, after its `since`th log line, that it left an edit of `message` alone. */
function leftAlone(channel: FakeChannel, message: FakeMessage, since = 0): Promise<void> {
  const mentionRef = `discord:${channel.id}:${message.id}`;
  return new Promise((resolve) => {
    const check = () => {
      const lines = testBot.logs.slice(since);
      if (lines.some((l) => l.msg?.startsWith('edit left alone') && l.mention === mentionRef)) resolve();
      else setTimeout(check, 20);
    };
    check();
  });
}

describe('Regenerate on Discord', () => {
  it('/chat ends with Regenerate; another member is refused; the asker gets the same request sent again, the new answer in the same message, and the history holds it once in place of the old one', async () => {
    const channel = discord.addChannel('regen-chat');
    service.enqueue('chat', { stream: { text: 'The first answer.' } });
    const interaction = await chat(channel, 'Name a colour');
    const message = interaction.original!;
    expect(message.content).toBe('The first answer.');
    const regenerate = regenerateOf(message);
    expect(regenerate).toMatch(new RegExp(`^regenerate:[0-9a-f]{18}:${ALICE.id}$`));
    expect(buttonIds(message)).toEqual([regenerate]);
    const [first] = service.chatRequests().slice(-1);

    const refused = await press(channel, message, regenerate, BOB);
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(refused.interaction).content).toBe(
      'Only the person who asked, or an admin, can regenerate this answer.',
    );
    expect(service.chatRequests()).toHaveLength(1);

    service.enqueue('chat', { stream: { text: 'The second answer.' } });
    const botMessagesBefore = discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id).length;
    const { interaction: pressed, outcome } = await press(channel, message, regenerate, ALICE);
    expect(outcome.ok).toBe(true);
    expect(pressed.response?.type).toBe(6);
    const requests = service.chatRequests();
    expect(requests).toHaveLength(2);
    // The service receives the same messages again (and the same model and sampling).
    expect(requests[1]).toEqual(first);
    // The same message shows the new answer, with a Regenerate button again; no new message.
    expect(message.content).toBe('The second answer.');
    expect(buttonIds(message)).toEqual([regenerate]);
    expect(discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id)).toHaveLength(
      botMessagesBefore,
    );
    // While it streamed, the message carried Stop.
    expect(message.revisions.some((r) => JSON.stringify(r.components ?? []).includes('"stop:'))).toBe(true);

    // The next request's history holds the new answer once, and not the old one.
    service.enqueue('chat', { stream: { text: 'The third answer.' } });
    await chat(channel, 'And another?');
    const history = service
      .chatRequests()
      .at(-1)!
      .messages.map((m) => m.content);
    expect(history).toEqual(['Name a colour', 'The second answer.', 'And another?']);
  });

  it('an admin may regenerate an answer to someone else', async () => {
    const channel = discord.addChannel('regen-admin');
    service.enqueue('chat', { stream: { text: 'Old.' } });
    const message = (await chat(channel, 'Say something')).original!;
    service.enqueue('chat', { stream: { text: 'New.' } });
    const { outcome } = await press(channel, message, regenerateOf(message), BOB, true);
    expect(outcome.ok).toBe(true);
    expect(message.content).toBe('New.');
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['Say something']);
  });

  it('/complete ends with Regenerate, which sends the same completion again into the same message', async () => {
    const channel = discord.addChannel('regen-complete');
    service.setCompletionReply(' and then it rained.');
    const done = next('complete', channel);
    const interaction = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'complete',
      options: { prompt: 'Once upon a time' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    const message = interaction.original!;
    expect(message.content).toBe('Once upon a time and then it rained.');
    const completions = () => service.requests.filter((r) => r.route === 'completions').map((r) => r.body);
    service.setCompletionReply(' and the sun came out.');
    const { outcome } = await press(channel, message, regenerateOf(message), ALICE);
    expect(outcome.ok).toBe(true);
    expect(completions()).toHaveLength(2);
    expect(completions()[1]).toEqual(completions()[0]);
    expect(message.content).toBe('Once upon a time and the sun came out.');
  });

  it("a mention's answer is regenerated in the bot's reply message, and the history keeps the new answer", async () => {
    const channel = discord.addChannel('regen-mention');
    service.enqueue('chat', { stream: { text: 'Mention answer one.' } });
    const done = next('mention', channel);
    discord.postUserMessage({ channelId: channel.id, content: `<@${discord.botUser.id}> hello`, author: ALICE });
    expect((await done).ok).toBe(true);
    const reply = discord.messagesIn(channel.id).find((m) => m.author.id === discord.botUser.id)!;
    expect(reply.content).toBe('Mention answer one.');
    service.enqueue('chat', { stream: { text: 'Mention answer two.' } });
    const { outcome } = await press(channel, reply, regenerateOf(reply), ALICE);
    expect(outcome.ok).toBe(true);
    expect(reply.content).toBe('Mention answer two.');
    const stored = await testBot.bot.core.history.get(conversationOf(channel));
    expect(stored.map((m) => m.content)).toEqual(['hello', 'Mention answer two.']);
  });
});

describe('edited mentions on Discord', () => {
  /** Posts a mention by alice and waits for its answer; returns the mention and the bot's reply. */
  async function mention(channel: FakeChannel, text: string, answer: string) {
    service.enqueue('chat', { stream: { text: answer } });
    const done = next('mention', channel);
    const message = discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> ${text}`,
      author: ALICE,
    });
    expect((await done).ok).toBe(true);
    const reply = discord.messagesIn(channel.id).findLast((m) => m.author.id === discord.botUser.id)!;
    return { message, reply };
  }

  it('an edit within the window sends one new request with the edited text and rewrites the answer in place; the same edit delivered twice answers once', async () => {
    const channel = discord.addChannel('edit-window');
    const { message, reply } = await mention(channel, 'What is 2+2?', 'It is 5.');
    const before = service.chatRequests().length;
    const first = service.chatRequests().at(-1)!;
    service.enqueue('chat', { stream: { pieces: ['It ', 'is ', '4.'], chunkDelayMs: 200 } });
    const done = next('edit', channel);
    const since = testBot.logs.length;
    const at = message.createdAt + 60_000;
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> What is 2+2, really?`, { at });
    // The same edit again (a second delivery): claimed once.
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> What is 2+2, really?`, { at });
    expect((await done).ok).toBe(true);
    await leftAlone(channel, message, since);
    const requests = service.chatRequests().slice(before);
    expect(requests).toHaveLength(1);
    expect(lastUserText(requests[0]!)).toBe('What is 2+2, really?');
    expect(requests[0]!.messages.slice(0, -1)).toEqual(first.messages.slice(0, -1));
    // The answer's own message shows the new answer; no other message was posted.
    expect(reply.content).toBe('It is 4.');
    expect(discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id)).toHaveLength(1);
    const stored = await testBot.bot.core.history.get(conversationOf(channel));
    expect(stored.map((m) => m.content)).toEqual(['What is 2+2, really?', 'It is 4.']);
  });

  it("an edit of a mention no longer in discord.js's cache (as after a restart) is read over REST and re-answered; the bot's own answers are never cached", async () => {
    const channel = discord.addChannel('edit-uncached');
    const { message, reply } = await mention(channel, 'What is 3+3?', 'It is 7.');
    const cache = testBot.bot.discord!.client.channels.cache.get(channel.id);
    if (!cache?.isTextBased()) throw new Error('the channel is not cached');
    // The bot's answer was never kept (own-messages.ts); the mention was, until now.
    expect(cache.messages.cache.has(reply.id)).toBe(false);
    expect(cache.messages.cache.has(message.id)).toBe(true);
    cache.messages.cache.delete(message.id);
    const reads = discord.requests.length;
    service.enqueue('chat', { stream: { pieces: ['It ', 'is ', '6.'] } });
    const done = next('edit', channel);
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> What is 3+3, really?`, {
      at: message.createdAt + 60_000,
    });
    expect((await done).ok).toBe(true);
    expect(reply.content).toBe('It is 6.');
    // One read of the edited message over REST.
    const fetched = discord.requests
      .slice(reads)
      .filter((r) => r.method === 'GET' && r.path.endsWith(`/messages/${message.id}`));
    expect(fetched).toHaveLength(1);
    expect(lastUserText(service.chatRequests().at(-1)!)).toBe('What is 3+3, really?');
  });

  it("the gateway's events of the bot's own messages never reach discord.js; a person's mention and its edit do", async () => {
    const channel = discord.addChannel('own-events');
    const client = testBot.bot.discord!.client;
    const seen: Array<{ t: string; author?: string }> = [];
    const onRaw = (packet: { t?: string; d?: { author?: { id?: string } } }) => {
      if (packet.t === 'MESSAGE_CREATE' || packet.t === 'MESSAGE_UPDATE')
        seen.push({ t: packet.t, author: packet.d?.author?.id });
    };
    client.on('raw', onRaw);
    try {
      const { message, reply } = await mention(channel, 'What is 5+5?', 'It is 10.');
      // The fake sent the answer's MESSAGE_CREATE and an update per edit, as Discord does (writes.ts).
      expect(reply.content).toBe('It is 10.');
      service.enqueue('chat', { stream: { pieces: ['It ', 'is ', '11.'] } });
      const done = next('edit', channel);
      discord.editUserMessage(message.id, `<@${discord.botUser.id}> What is 5+6?`, { at: message.createdAt + 1000 });
      expect((await done).ok).toBe(true);
      expect(reply.content).toBe('It is 11.');
      expect(seen.filter((e) => e.author === discord.botUser.id)).toEqual([]);
      expect(seen).toEqual([
        { t: 'MESSAGE_CREATE', author: ALICE.id },
        { t: 'MESSAGE_UPDATE', author: ALICE.id },
      ]);
    } finally {
      client.off('raw', onRaw);
    }
  });

  it('an edit after the window, or one that keeps the text, sends nothing', async () => {
    const channel = discord.addChannel('edit-late');
    const { message, reply } = await mention(channel, 'First question', 'First answer.');
    const before = service.chatRequests().length;
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> First question`, { at: message.createdAt + 1000 });
    await leftAlone(channel, message);
    const since = testBot.logs.length;
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> A later question`, {
      at: message.createdAt + 11 * 60_000,
    });
    await leftAlone(channel, message, since);
    expect(service.chatRequests()).toHaveLength(before);
    expect(reply.content).toBe('First answer.');
  });
});

describe('Regenerate and edits of answers longer than one message on Discord', () => {
  const REPLACED = '*(replaced by the text above)*';
  /** An answer of `count` paragraphs of about 1,500 characters: one Discord message each. */
  const paragraphs = (tag: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${tag} paragraph ${i + 1}: ${'word '.repeat(300).trim()}`).join('\n\n');
  /** The bot's public messages in the channel, oldest first. */
  const botMessagesIn = (channel: FakeChannel) =>
    discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id && !m.ephemeral && !m.deleted);

  it('a 3-message /chat answer regenerated into 2 messages: pages 1 and 2 over messages 1 and 2, message 3 says it was replaced and has no button, Regenerate on message 2, nothing posted; a press there writes a 1-message answer over them again', async () => {
    const channel = discord.addChannel('regen-long');
    const old = paragraphs('Old', 3);
    service.enqueue('chat', { stream: { text: old } });
    await chat(channel, 'Write three paragraphs');
    const messages = botMessagesIn(channel);
    expect(messages.map((m) => m.content)).toEqual(splitMessage(old, 2000));
    expect(messages).toHaveLength(3);
    const regenerate = regenerateOf(messages[2]!);
    expect(buttonIds(messages[0]!)).toEqual([]);

    const fresh = paragraphs('New', 2);
    const freshPages = splitMessage(fresh, 2000);
    expect(freshPages).toHaveLength(2);
    service.enqueue('chat', { stream: { text: fresh } });
    const { interaction: pressed, outcome } = await press(channel, messages[2]!, regenerate, ALICE);
    expect(outcome.ok).toBe(true);
    expect(pressed.response?.type).toBe(6);
    expect(botMessagesIn(channel)).toHaveLength(3);
    expect(messages.map((m) => m.content)).toEqual([...freshPages, REPLACED]);
    expect(messages.map(buttonIds)).toEqual([[], [regenerate], []]);
    // The earlier pages were edited with the bot token, the pressed message through the press's interaction.
    const edits = discord.writes.filter((w) => w.kind === 'edit' && w.at >= pressed.dispatchedAt);
    expect(new Set(edits.filter((w) => w.messageId !== messages[2]!.id).map((w) => w.via))).toEqual(
      new Set(['channel']),
    );
    expect(new Set(edits.filter((w) => w.messageId === messages[2]!.id).map((w) => w.via))).toEqual(
      new Set(['webhook']),
    );
    for (const write of edits) expect(write.allowedMentions).toMatchObject({ parse: [] });
    const stored = await testBot.bot.core.history.get(conversationOf(channel));
    expect(stored.map((m) => m.content)).toEqual(['Write three paragraphs', fresh]);

    // Pressed again on message 2: a 1-message answer over the same three messages.
    service.enqueue('chat', { stream: { text: 'Short now.' } });
    expect((await press(channel, messages[1]!, regenerate, ALICE)).outcome.ok).toBe(true);
    expect(messages.map((m) => m.content)).toEqual(['Short now.', REPLACED, REPLACED]);
    expect(messages.map(buttonIds)).toEqual([[regenerate], [], []]);
    expect(botMessagesIn(channel)).toHaveLength(3);
  });

  it('a 1-message answer regenerated into 2 messages: the message edited with page 1, one follow-up posted with page 2 and Regenerate; a press there writes over both', async () => {
    const channel = discord.addChannel('regen-grow');
    service.enqueue('chat', { stream: { text: 'One short answer.' } });
    const message = (await chat(channel, 'Say it briefly')).original!;
    const regenerate = regenerateOf(message);
    const longer = paragraphs('Longer', 2);
    service.enqueue('chat', { stream: { text: longer } });
    const { interaction: pressed, outcome } = await press(channel, message, regenerate, ALICE);
    expect(outcome.ok).toBe(true);
    const messages = botMessagesIn(channel);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(message);
    expect(messages.map((m) => m.content)).toEqual(splitMessage(longer, 2000));
    expect(messages.map(buttonIds)).toEqual([[], [regenerate]]);
    // The new page is a follow-up of the press.
    expect(pressed.followUps.map((m) => m.id)).toEqual([messages[1]!.id]);

    service.enqueue('chat', { stream: { text: 'Brief again.' } });
    expect((await press(channel, messages[1]!, regenerate, ALICE)).outcome.ok).toBe(true);
    expect(messages.map((m) => m.content)).toEqual(['Brief again.', REPLACED]);
    expect(messages.map(buttonIds)).toEqual([[regenerate], []]);
    expect(botMessagesIn(channel)).toHaveLength(2);
  });

  it('where the bot cannot see the channel (no View Channel: its token may not edit there), a press still writes the new answer into the pressed message', async () => {
    const channel = discord.addChannel('regen-hidden');
    service.enqueue('chat', { stream: { text: paragraphs('Seen', 2) } });
    await chat(channel, 'Two paragraphs');
    const messages = botMessagesIn(channel);
    expect(messages).toHaveLength(2);
    const regenerate = regenerateOf(messages[1]!);
    discord.setBotPermissions(BOT_PERMISSIONS & ~P.ViewChannel);
    try {
      service.enqueue('chat', { stream: { text: 'Hidden but answered.' } });
      expect((await press(channel, messages[1]!, regenerate, ALICE)).outcome.ok).toBe(true);
    } finally {
      discord.setBotPermissions(BOT_PERMISSIONS);
    }
    expect(messages[1]!.content).toBe('Hidden but answered.');
    expect(buttonIds(messages[1]!)).toEqual([regenerate]);
    expect(messages[0]!.content).toBe(splitMessage(paragraphs('Seen', 2), 2000)[0]);
  });

  /** Posts a mention by alice and waits for its answer; returns the mention and the bot's messages. */
  async function longMention(channel: FakeChannel, text: string, answer: string) {
    service.enqueue('chat', { stream: { text: answer } });
    const done = next('mention', channel);
    const message = discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> ${text}`,
      author: ALICE,
    });
    expect((await done).ok).toBe(true);
    return { message, replies: botMessagesIn(channel) };
  }

  /** Edits alice's mention a minute after it was sent and waits for the re-answer. */
  async function editMention(channel: FakeChannel, message: FakeMessage, text: string, answer: string) {
    service.enqueue('chat', { stream: { text: answer } });
    const done = next('edit', channel);
    discord.editUserMessage(message.id, `<@${discord.botUser.id}> ${text}`, { at: message.createdAt + 60_000 });
    expect((await done).ok).toBe(true);
  }

  it("an edited mention's 3-message answer re-answered in 2 messages: pages over the first two, the third replaced without a button, Regenerate on the second, nothing posted", async () => {
    const channel = discord.addChannel('edit-long');
    const { message, replies } = await longMention(channel, 'Three paragraphs please', paragraphs('Before', 3));
    expect(replies).toHaveLength(3);
    expect(replies[0]!.reference?.messageId).toBe(message.id);
    const regenerate = regenerateOf(replies[2]!);
    const after = paragraphs('After', 2);
    await editMention(channel, message, 'Two paragraphs please', after);
    expect(botMessagesIn(channel)).toHaveLength(3);
    expect(replies.map((m) => m.content)).toEqual([...splitMessage(after, 2000), REPLACED]);
    expect(replies.map(buttonIds)).toEqual([[], [regenerate], []]);
    const stored = await testBot.bot.core.history.get(conversationOf(channel));
    expect(stored.map((m) => m.content)).toEqual(['Two paragraphs please', after]);
  });

  it("an edited mention's 1-message answer re-answered in 2 messages: the reply edited with page 1, page 2 posted after it with Regenerate", async () => {
    const channel = discord.addChannel('edit-grow');
    const { message, replies } = await longMention(channel, 'Briefly', 'Brief.');
    expect(replies).toHaveLength(1);
    const regenerate = regenerateOf(replies[0]!);
    const after = paragraphs('Grown', 2);
    await editMention(channel, message, 'At length', after);
    const messages = botMessagesIn(channel);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(replies[0]);
    expect(messages.map((m) => m.content)).toEqual(splitMessage(after, 2000));
    expect(messages.map(buttonIds)).toEqual([[], [regenerate]]);
  });
});

describe('Regenerate and edited mentions after /forget on Discord', () => {
  const FORGOTTEN =
    'This answer can no longer be regenerated: its conversation was forgotten after it was given. Ask again.';

  /** Runs /forget in the channel as an admin and waits for it. */
  async function forget(channel: FakeChannel): Promise<void> {
    const done = next('forget', channel);
    discord.dispatchInteraction({ channelId: channel.id, command: 'forget', admin: true });
    expect((await done).ok).toBe(true);
  }

  it('a press on an answer given before /forget is told so and sends nothing, an edit of a mention answered before it sends nothing, and a press on an answer given after it sends none of the forgotten turns', async () => {
    const channel = discord.addChannel('regen-forget');
    service.enqueue('chat', { stream: { text: 'Your secret is safe.' } });
    const before = (await chat(channel, 'My secret is 1234')).original!;
    service.enqueue('chat', { stream: { text: 'Noted.' } });
    const mentioned = next('mention', channel);
    const mention = discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> and my PIN is 9876`,
      author: ALICE,
    });
    expect((await mentioned).ok).toBe(true);
    const reply = discord.messagesIn(channel.id).findLast((m) => m.author.id === discord.botUser.id)!;
    expect(reply.content).toBe('Noted.');

    await forget(channel);
    service.enqueue('chat', { stream: { text: 'Paris.' } });
    const after = (await chat(channel, 'What is the capital of France?')).original!;
    const fresh = service.chatRequests().at(-1)!;
    expect(fresh.messages).toEqual([{ role: 'user', content: 'What is the capital of France?' }]);
    const sentBefore = service.chatRequests().length;

    for (const message of [before, reply]) {
      const refused = await press(channel, message, regenerateOf(message), ALICE);
      expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
      expect(ephemeralOf(refused.interaction).content).toBe(FORGOTTEN);
    }
    const since = testBot.logs.length;
    discord.editUserMessage(mention.id, `<@${discord.botUser.id}> and my PIN is 0000`, {
      at: mention.createdAt + 60_000,
    });
    await leftAlone(channel, mention, since);
    expect(service.chatRequests()).toHaveLength(sentBefore);
    expect([before.content, reply.content]).toEqual(['Your secret is safe.', 'Noted.']);

    service.enqueue('chat', { stream: { text: 'Paris, again.' } });
    expect((await press(channel, after, regenerateOf(after), ALICE)).outcome.ok).toBe(true);
    expect(service.chatRequests()).toHaveLength(sentBefore + 1);
    expect(service.chatRequests().at(-1)).toEqual(fresh);
    expect(JSON.stringify(service.chatRequests().slice(sentBefore - 1))).not.toMatch(/1234|9876|secret|PIN/);
  });

  it('an answer still streaming when /forget ran, whose request carried the forgotten turns, keeps no Regenerate that would send them again', async () => {
    const channel = discord.addChannel('regen-forget-race');
    service.enqueue('chat', { stream: { text: 'Remembered.' } });
    await chat(channel, 'My secret is 1234');
    service.enqueue('chat', { stream: { pieces: ['Still ', 'answering ', 'slowly.'], chunkDelayMs: 400 } });
    const sent = service.chatRequests().length;
    const streaming = next('chat', channel);
    const interaction = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Go on' },
      user: ALICE,
    });
    // The request is out, with the turns about to be forgotten.
    while (service.chatRequests().length === sent) await new Promise((r) => setTimeout(r, 20));
    expect(JSON.stringify(service.chatRequests().at(-1))).toContain('1234');
    await forget(channel);
    expect((await streaming).ok).toBe(true);
    const message = interaction.original!;
    expect(message.content).toBe('Still answering slowly.');

    const refused = await press(channel, message, regenerateOf(message), ALICE);
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(ephemeralOf(refused.interaction).content).toBe(FORGOTTEN);
    expect(service.chatRequests()).toHaveLength(sent + 1);
  });
});
