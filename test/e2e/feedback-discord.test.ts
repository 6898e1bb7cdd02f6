/**
 * End-to-end on Discord, feedback on answers (issue 21 item 2): the whole bot with discord.js and
 * undici unmodified, against FakeDiscord and FakeService. A finished answer (/chat, /complete, a
 * mention, a regenerated one) carries 👍 / 👎 beside Regenerate in its row, an /imagine image
 * after Reroll, Upscale and Vary; a press is stored with the answer's kind, command, model and
 * channel and the presser (one vote per user and answer, changeable), told to the presser alone,
 * and counted in /metrics (`genbot_feedback_total{kind,vote,model}`); a 👎's **Add a reason**
 * opens a modal whose submit keeps the reason with the 👎; admins see the votes summed per model
 * in `/usage feedback:true`.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { placeOf } from '../../src/core/keys.ts';
import { readTally, readVote } from '../../src/core/state/feedback.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import { FORM_INPUT_ID } from '../../src/platforms/discord/feedback.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage, Json } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;
let opsUrl: string;

useE2E({ discord: {}, bot: { env: { HTTP_PORT: '0' } }, resetServiceAfterEach: true }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  opsUrl = `http://127.0.0.1:${testBot.bot.ops!.port}`;
  // The message commands, registered as an operator registers them.
  const { token, applicationId, apiUrl, guildId } = discord;
  await deployCommands({ token, applicationId, apiUrl, guildId });
  return undefined;
});

const ALICE = { id: '1290000000000000601', username: 'alice' };
const BOB = { id: '1290000000000000602', username: 'bob' };

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** The custom ids of a message's buttons. */
const buttonIds = (message: FakeMessage) => message.buttons.map((b) => String(b.custom_id));

/** The message's 👍 and 👎 ids and its feedback id (fails when it has none). */
function feedbackOf(message: FakeMessage): { up: string; down: string; id: string } {
  const up = buttonIds(message).find((b) => /^feedback:[0-9a-f]{18}:up$/.test(b));
  expect(up, `buttons: ${buttonIds(message).join(', ')}`).toBeDefined();
  const id = up!.split(':')[1]!;
  return { up: up!, down: `feedback:${id}:down`, id };
}

/** Resolves with the next outcome of `command` in the channel's conversation. */
async function next(command: string, channel: FakeChannel): Promise<CommandOutcome> {
  const conversationId = conversationOf(channel);
  const [outcome] = await testBot.outcomes((o) => o.command === command && o.conversationId === conversationId);
  return outcome!;
}

/** Runs /chat as alice and waits for its answer message. */
async function chat(channel: FakeChannel, answer: string): Promise<FakeMessage> {
  service.enqueue('chat', { stream: { text: answer } });
  const done = next('chat', channel);
  const interaction = discord.dispatchInteraction({
    channelId: channel.id,
    command: 'chat',
    options: { prompt: 'A question' },
    user: ALICE,
  });
  expect((await done).ok).toBe(true);
  return interaction.original!;
}

/** Presses a button as `user` and waits for the press's outcome. */
async function press(
  channel: FakeChannel,
  message: FakeMessage,
  customId: string,
  user: { id: string; username: string },
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = next('feedback:button', channel);
  const interaction = discord.pressButton({ messageId: message.id, customId, user });
  return { interaction, outcome: await done };
}

/** The one ephemeral message the bot sent for an interaction. */
function ephemeralOf(interaction: FakeInteraction): FakeMessage {
  const shown = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
  expect(shown).toHaveLength(1);
  return shown[0]!;
}

/** The `genbot_feedback_total` samples of /metrics, as `kind/vote/model` → value. */
async function feedbackMetrics(): Promise<Record<string, number>> {
  const response = await fetch(`${opsUrl}/metrics`);
  expect(response.status).toBe(200);
  const families = parsePrometheusTextFormat(await response.text()) as Array<{
    name: string;
    type: string;
    metrics: Array<{ labels: Record<string, string>; value: string }>;
  }>;
  const family = families.find((f) => f.name === 'genbot_feedback_total');
  expect(family?.type).toBe('GAUGE');
  return Object.fromEntries(
    family!.metrics.map((m) => [`${m.labels.kind}/${m.labels.vote}/${m.labels.model}`, Number(m.value)]),
  );
}

describe('feedback on Discord', () => {
  it('👍 then 👎 by one member and 👍 by another leave two votes, one 👎 and one 👍, in the store and in /metrics; each press is told to its presser alone', async () => {
    const channel = discord.addChannel('fb-votes');
    const message = await chat(channel, 'An answer to rate.');
    const model = service.chatRequests().at(-1)!.model;
    const { up, down, id } = feedbackOf(message);
    // Beside Regenerate, in its row.
    expect(message.components).toHaveLength(1);
    expect(buttonIds(message)).toEqual([expect.stringMatching(/^regenerate:/), up, down]);
    const labels = (message.components[0]!.components as Json[]).map((b) => b.label);
    expect(labels.slice(1)).toEqual(['👍', '👎']);

    const first = await press(channel, message, up, ALICE);
    expect(first.outcome.ok).toBe(true);
    expect(first.interaction.response).toMatchObject({ type: 4 });
    expect(ephemeralOf(first.interaction).content).toBe('Thanks — noted 👍.');
    const changed = await press(channel, message, down, ALICE);
    const told = ephemeralOf(changed.interaction);
    expect(told.content).toBe('Thanks — your vote is now 👎. What was wrong? You may add a reason.');
    expect(buttonIds(told)).toEqual([`feedback:${id}:reason`]);
    const other = await press(channel, message, up, BOB);
    expect(ephemeralOf(other.interaction).content).toBe('Thanks — noted 👍.');
    // The answer itself is left as it was.
    expect(message.content).toBe('An answer to rate.');
    expect(buttonIds(message)).toHaveLength(3);

    const store = testBot.bot.core.store;
    expect(await readVote(store, id, ALICE.id)).toMatchObject({
      vote: 'down',
      userId: ALICE.id,
      kind: 'chat',
      command: 'chat',
      model,
      channelKey: conversationOf(channel),
    });
    expect(await readVote(store, id, BOB.id)).toMatchObject({ vote: 'up', userId: BOB.id, model });
    expect(await readTally(store)).toEqual([{ kind: 'chat', model, up: 1, down: 1 }]);
    expect(await readTally(store, placeOf(conversationOf(channel)))).toEqual([{ kind: 'chat', model, up: 1, down: 1 }]);
    expect(await feedbackMetrics()).toEqual({ [`chat/up/${model}`]: 1, [`chat/down/${model}`]: 1 });
  });

  it("a 👎's Add a reason opens a modal as the press's first answer; its submit is kept with the 👎, and refused once the vote is no longer a 👎", async () => {
    const channel = discord.addChannel('fb-reason');
    const message = await chat(channel, 'A wrong answer.');
    const { down, up, id } = feedbackOf(message);
    const told = ephemeralOf((await press(channel, message, down, ALICE)).interaction);
    expect(told.content).toBe('Thanks — noted 👎. What was wrong? You may add a reason.');

    const opened = await press(channel, told, `feedback:${id}:reason`, ALICE);
    expect(opened.outcome.ok).toBe(true);
    expect(opened.interaction.response).toMatchObject({ type: 9 });
    expect(opened.interaction.modal).toMatchObject({
      custom_id: `feedback:${id}:reason`,
      title: 'What was wrong?',
      components: [{ type: 18, component: { type: 4, custom_id: FORM_INPUT_ID, required: true, max_length: 1000 } }],
    });
    // Discord's client takes no more than the modal's max_length.
    expect(() =>
      discord.submitModal({ interactionId: opened.interaction.id, values: { [FORM_INPUT_ID]: 'x'.repeat(1001) } }),
    ).toThrow();
    const done = next('feedback:reason', channel);
    const submit = discord.submitModal({
      interactionId: opened.interaction.id,
      values: { [FORM_INPUT_ID]: '  It gave last year’s date.  ' },
    });
    expect(await done).toMatchObject({ ok: true });
    expect(ephemeralOf(submit).content).toBe('Thanks — your reason is noted with your 👎.');
    expect(await readVote(testBot.bot.core.store, id, ALICE.id)).toMatchObject({
      vote: 'down',
      reason: 'It gave last year’s date.',
    });

    // A 👍 drops the reason; a reason form opened again is then refused.
    await press(channel, message, up, ALICE);
    expect((await readVote(testBot.bot.core.store, id, ALICE.id))?.reason).toBeUndefined();
    const refused = await press(channel, told, `feedback:${id}:reason`, ALICE);
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(ephemeralOf(refused.interaction).content).toBe('A reason goes with a 👎: press 👎 under the answer first.');
  });

  it('/complete and a mention end with 👍 / 👎 too, and a regenerated answer gets new ones', async () => {
    const channel = discord.addChannel('fb-kinds');
    service.setCompletionReply(' and then it rained.');
    const completed = next('complete', channel);
    const interaction = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'complete',
      options: { prompt: 'Once upon a time' },
      user: ALICE,
    });
    expect((await completed).ok).toBe(true);
    const completion = feedbackOf(interaction.original!);
    await press(channel, interaction.original!, completion.up, ALICE);
    expect(await readVote(testBot.bot.core.store, completion.id, ALICE.id)).toMatchObject({
      kind: 'complete',
      command: 'complete',
    });

    // In a channel of its own: the channel's write budget (5 per 5 s) is not the /complete's.
    const mentions = discord.addChannel('fb-kinds-mention');
    service.enqueue('chat', { stream: { text: 'A mention answer.' } });
    const mentioned = next('mention', mentions);
    discord.postUserMessage({ channelId: mentions.id, content: `<@${discord.botUser.id}> hello`, author: ALICE });
    expect((await mentioned).ok).toBe(true);
    const reply = discord.messagesIn(mentions.id).findLast((m) => m.author.id === discord.botUser.id)!;
    const first = feedbackOf(reply);

    service.enqueue('chat', { stream: { text: 'Another mention answer.' } });
    const regenerate = buttonIds(reply).find((b) => b.startsWith('regenerate:'))!;
    const regenerated = next('regenerate:button', mentions);
    discord.pressButton({ messageId: reply.id, customId: regenerate, user: ALICE });
    expect((await regenerated).ok).toBe(true);
    expect(reply.content).toBe('Another mention answer.');
    const second = feedbackOf(reply);
    expect(second.id).not.toBe(first.id);
    await press(mentions, reply, second.down, BOB);
    expect(await readVote(testBot.bot.core.store, second.id, BOB.id)).toMatchObject({
      vote: 'down',
      kind: 'mention',
      command: 'mention',
    });
  });

  it("a message action's answer (Summarize) ends with 👍 / 👎, its votes stored under the action's id", async () => {
    const channel = discord.addChannel('fb-action');
    const target = discord.postUserMessage({
      channelId: channel.id,
      content: 'The ferry leaves at 7:15.',
      author: BOB,
    });
    service.enqueue('chat', { stream: { text: 'A ferry leaves at 7:15.' } });
    const done = next('summarize_message', channel);
    discord.dispatchMessageCommand({ command: 'Summarize', messageId: target.id, user: ALICE });
    expect((await done).ok).toBe(true);
    const reply = discord.messagesIn(channel.id).findLast((m) => m.author.id === discord.botUser.id)!;
    expect(reply.content).toBe('A ferry leaves at 7:15.');
    const { up, id } = feedbackOf(reply);
    await press(channel, reply, up, BOB);
    expect(await readVote(testBot.bot.core.store, id, BOB.id)).toMatchObject({
      vote: 'up',
      kind: 'mention',
      command: 'summarize_message',
    });
  });

  it("/imagine's image carries Reroll, Upscale, Vary, 👍 and 👎 in one row; a vote counts under kind image", async () => {
    const channel = discord.addChannel('fb-image');
    const done = next('imagine', channel);
    const interaction = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'imagine',
      options: { prompt: 'a red fox' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    const image = interaction.original!;
    expect(image.attachments).toHaveLength(1);
    const { up, down, id } = feedbackOf(image);
    expect(buttonIds(image)).toEqual([
      expect.stringMatching(/^imagine:reroll:/),
      expect.stringMatching(/^imagine:upscale:/),
      expect.stringMatching(/^imagine:vary:/),
      up,
      down,
    ]);
    await press(channel, image, down, ALICE);
    expect(await readVote(testBot.bot.core.store, id, ALICE.id)).toMatchObject({
      vote: 'down',
      kind: 'image',
      command: 'imagine',
      model: 'default',
    });
    expect(await feedbackMetrics()).toMatchObject({ 'image/down/default': 1, 'image/up/default': 0 });
  });

  it('/usage feedback:true shows admins the votes here summed per model; anyone else is refused', async () => {
    const channel = discord.addChannel('fb-usage');
    const usage = async (admin: boolean) => {
      const done = next('usage', channel);
      const interaction = discord.dispatchInteraction({
        channelId: channel.id,
        command: 'usage',
        options: { feedback: true },
        user: admin ? BOB : ALICE,
        admin,
      });
      return { outcome: await done, told: ephemeralOf(interaction) };
    };
    const refused = await usage(false);
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(refused.told.content).toBe('Only admins can see the feedback on answers.');

    const { outcome, told } = await usage(true);
    expect(outcome.ok).toBe(true);
    const [embed] = told.embeds as Json[];
    expect(embed).toMatchObject({ title: 'Feedback on answers, by model' });
    const fields = embed!.fields as Array<{ name: string; value: string }>;
    // Every vote of this server's channels so far, per model, as the store counts them.
    const tally = await readTally(testBot.bot.core.store, placeOf(conversationOf(channel)));
    const models = [...new Set(tally.map((l) => l.model))];
    expect(fields.map((f) => f.name).sort()).toEqual(models.sort());
    for (const model of models) {
      const up = tally.filter((l) => l.model === model).reduce((n, l) => n + l.up, 0);
      const down = tally.filter((l) => l.model === model).reduce((n, l) => n + l.down, 0);
      expect(fields.find((f) => f.name === model)!.value).toContain(`👍 ${up} · 👎 ${down}`);
    }
    expect(fields.find((f) => f.name === 'default')!.value).toBe('👍 0 · 👎 1 (0% 👍) — image');
  });
});
