/**
 * End-to-end on Slack, feedback on answers (issue 21 item 2): the whole bot with @slack/bolt and
 * @slack/web-api unmodified, against FakeSlack and FakeService. A natively streamed answer ends
 * (chat.stopStream's `blocks`) with Regenerate and, under it, a `context_actions` block holding a
 * `feedback_buttons` element; a posted answer carries the same in its last chat.update, an
 * /imagine image's buttons line too. A press (`type: 'feedback_buttons'`, the element's
 * action_id, the button's value) is stored with the answer's kind, command, model and channel
 * and the presser (one vote per user and answer, changeable), told to the presser alone through
 * the press's response_url, and counted in /metrics (`genbot_feedback_total{kind,vote,model}`);
 * a 👎's **Add a reason** opens a modal (views.open with the press's trigger) whose submission
 * keeps the reason with the 👎; admins see the votes summed per model in `/usage --feedback`.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english, wordsOf } from '../../src/core/i18n/words.ts';
import { placeOf } from '../../src/core/keys.ts';
import { readTally, readVote } from '../../src/core/state/feedback.ts';
import { FORM_CALLBACK_ID, FORM_INPUT_ID } from '../../src/platforms/slack/feedback.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { votes: 'C0FBVOTES', reason: 'C0FBWHY', image: 'C0FBIMAGE', usage: 'C0FBUSAGE' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;
let opsUrl: string;

useE2E(
  {
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: (e2e) => {
      e2e.slack.addUser({ id: 'U0CAROL', name: 'carol' });
      e2e.slack.addUser({ id: 'U0KENJI', name: 'kenji', locale: 'ja-JP' });
    },
    bot: { env: { HTTP_PORT: '0' } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
    opsUrl = `http://127.0.0.1:${testBot.bot.ops!.port}`;
  },
);

/** Members without admin rights, and a workspace admin. */
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const ADMIN = 'U0ALICE';

type Block = { type: string; elements?: Array<Record<string, unknown>> };

const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

/** The message's feedback_buttons element (fails when it has none) and its feedback id. */
function feedbackOf(message: FakeSlackMessage): { actionId: string; id: string; element: Record<string, unknown> } {
  const blocks = (message.blocks ?? []) as Block[];
  const element = blocks.find((b) => b.type === 'context_actions')?.elements?.[0];
  expect(element, `blocks: ${JSON.stringify(blocks)}`).toBeDefined();
  const actionId = String(element!.action_id);
  expect(actionId).toMatch(/^feedback:[0-9a-f]{18}$/);
  return { actionId, id: actionId.split(':')[1]!, element: element! };
}

/** Resolves with the next outcome of `command` in a conversation of `channel`. */
function next(command: string, channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.command === command && o.conversationId.includes(`:${channel}`)).then(([o]) => o!);
}

/** Mentions the bot as bob and waits for the answer (natively streamed in the mention's thread). */
async function mention(channel: string, answer: string): Promise<FakeSlackMessage> {
  service.enqueue('chat', { stream: { text: answer } });
  const event = slack.mentionEvent({ channel, user: BOB, text: 'A question' });
  const done = next('mention', channel);
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
  expect((await done).ok).toBe(true);
  return botMessages(channel).at(-1)!;
}

/** Presses 👍 (`up`) or 👎 (`down`) of a message as `user`; resolves with the press's outcome and what it was told. */
async function vote(channel: string, message: FakeSlackMessage, value: 'up' | 'down', user: string) {
  const { actionId } = feedbackOf(message);
  const done = next('feedback:button', channel);
  const press = await slack.sendBlockAction(botUrl, { user, channel, messageTs: message.ts, actionId, value });
  expect(press.ackedInTime).toBe(true);
  return { outcome: await done, told: toldVia(press.responseUrl) };
}

/** The posts to a response_url (what the presser alone read), unescaped. */
const toldVia = (url: string) =>
  [...slack.responseUrls.values()]
    .filter((r) => r.url === url)
    .flatMap((r) => r.posts)
    .map((p) => ({ text: unescapeSlack(p.text), responseType: p.responseType, blocks: p.body.blocks as Block[] }));

/** The `genbot_feedback_total` samples of /metrics, as `kind/vote/model` → value. */
async function feedbackMetrics(): Promise<Record<string, number>> {
  const response = await fetch(`${opsUrl}/metrics`);
  const families = parsePrometheusTextFormat(await response.text()) as Array<{
    name: string;
    metrics: Array<{ labels: Record<string, string>; value: string }>;
  }>;
  const family = families.find((f) => f.name === 'genbot_feedback_total');
  return Object.fromEntries(
    (family?.metrics ?? []).map((m) => [`${m.labels.kind}/${m.labels.vote}/${m.labels.model}`, Number(m.value)]),
  );
}

describe('feedback on Slack', () => {
  it('a natively streamed answer ends with 👍 / 👎 under Regenerate; 👍 then 👎 by one member and 👍 by another leave one 👎 and one 👍, in the store and in /metrics', async () => {
    const channel = CHANNELS.votes;
    const answer = await mention(channel, 'An answer to rate.');
    const model = service.chatRequests().at(-1)!.model;
    expect(answer.via).toBe('chat.startStream');
    // chat.stopStream carried the Regenerate actions block, then the feedback block.
    const stopBlocks = answer.stream!.stopBlocks as Block[];
    expect(stopBlocks.map((b) => b.type)).toEqual(['actions', 'context_actions']);
    const { element, id } = feedbackOf(answer);
    expect(element).toMatchObject({
      type: 'feedback_buttons',
      positive_button: { text: { type: 'plain_text', text: '👍' }, value: 'up' },
      negative_button: { text: { type: 'plain_text', text: '👎' }, value: 'down' },
    });

    const first = await vote(channel, answer, 'up', BOB);
    expect(first.outcome.ok).toBe(true);
    expect(first.told).toMatchObject([{ text: 'Thanks — noted 👍.', responseType: 'ephemeral' }]);
    const changed = await vote(channel, answer, 'down', BOB);
    expect(changed.told[0]!.text).toBe('Thanks — your vote is now 👎. What was wrong? You may add a reason.');
    expect(changed.told[0]!.blocks.find((b) => b.type === 'actions')?.elements?.[0]).toMatchObject({
      action_id: `feedback:${id}:reason`,
    });
    const other = await vote(channel, answer, 'up', CAROL);
    expect(other.told[0]!.text).toBe('Thanks — noted 👍.');
    // The answer is left as it was.
    expect(unescapeSlack(answer.text)).toBe('An answer to rate.');

    const store = testBot.bot.core.store;
    const channelKey = `slack:${slack.teamId}:${channel}`;
    expect(await readVote(store, id, BOB)).toMatchObject({
      vote: 'down',
      userId: BOB,
      kind: 'mention',
      command: 'mention',
      model,
      channelKey,
    });
    expect(await readVote(store, id, CAROL)).toMatchObject({ vote: 'up', userId: CAROL, model });
    expect(await readTally(store)).toEqual([{ kind: 'mention', model, up: 1, down: 1 }]);
    expect(await readTally(store, placeOf(channelKey))).toEqual([{ kind: 'mention', model, up: 1, down: 1 }]);
    expect(await feedbackMetrics()).toEqual({ [`mention/up/${model}`]: 1, [`mention/down/${model}`]: 1 });
  });

  it("a 👎's Add a reason opens its modal in the presser's language, its Cancel too (users.info says ja-JP)", async () => {
    const channel = CHANNELS.reason;
    const kenji = 'U0KENJI';
    const answer = await mention(channel, 'Another answer.');
    const { id } = feedbackOf(answer);
    await vote(channel, answer, 'down', kenji);
    const ephemeral = slack.ephemerals.findLast((e) => e.channel === channel && e.user === kenji && e.shown)!;
    const done = next('feedback:button', channel);
    await slack.sendBlockAction(botUrl, {
      user: kenji,
      channel,
      messageTs: ephemeral.ts,
      actionId: `feedback:${id}:reason`,
    });
    expect((await done).ok).toBe(true);
    const ja = wordsOf('ja');
    expect(slack.views.at(-1)).toMatchObject({
      user: kenji,
      state: 'open',
      view: {
        title: { text: ja.t('answers.feedback.form_title') },
        submit: { text: expect.any(String) },
        close: { text: ja.t('slack.blocks.cancel') },
      },
    });
    expect(ja.t('slack.blocks.cancel')).not.toBe(english.t('slack.blocks.cancel'));
  });

  it("a 👎's Add a reason opens a modal with the press's trigger; its submission is kept with the 👎 and thanked in the modal; one submitted after the vote became a 👍 is refused under its input", async () => {
    const channel = CHANNELS.reason;
    const answer = await mention(channel, 'A wrong answer.');
    const { id } = feedbackOf(answer);
    await vote(channel, answer, 'down', BOB);
    const ephemeral = slack.ephemerals.findLast((e) => e.channel === channel && e.user === BOB && e.shown)!;

    const openForm = async () => {
      const done = next('feedback:button', channel);
      const actionId = `feedback:${id}:reason`;
      await slack.sendBlockAction(botUrl, { user: BOB, channel, messageTs: ephemeral.ts, actionId });
      expect((await done).ok).toBe(true);
      const view = slack.views.at(-1)!;
      expect(view).toMatchObject({ user: BOB, state: 'open', view: { callback_id: FORM_CALLBACK_ID } });
      return view.id;
    };
    const viewId = await openForm();
    expect(slack.views.at(-1)!.view).toMatchObject({
      title: { text: 'What was wrong?' },
      blocks: [{ type: 'input', block_id: FORM_INPUT_ID, element: { action_id: FORM_INPUT_ID, max_length: 1000 } }],
    });
    // Slack's client takes no more than the input's max_length.
    await expect(
      slack.submitView(botUrl, { viewId, values: { [FORM_INPUT_ID]: { [FORM_INPUT_ID]: 'x'.repeat(1001) } } }),
    ).rejects.toThrow(/at most 1000/);
    const submitted = await slack.submitView(botUrl, {
      viewId,
      values: { [FORM_INPUT_ID]: { [FORM_INPUT_ID]: 'It named the wrong river.' } },
    });
    expect(submitted).toMatchObject({ ackedInTime: true, ack: { response_action: 'update' } });
    expect(JSON.stringify(slack.views.at(-1)!.view)).toContain('Thanks — your reason is noted with your 👎.');
    expect(await readVote(testBot.bot.core.store, id, BOB)).toMatchObject({
      vote: 'down',
      reason: 'It named the wrong river.',
    });

    const again = await openForm();
    await vote(channel, answer, 'up', BOB);
    const refused = await slack.submitView(botUrl, {
      viewId: again,
      values: { [FORM_INPUT_ID]: { [FORM_INPUT_ID]: 'Changed my mind.' } },
    });
    expect(refused.ack).toEqual({
      response_action: 'errors',
      errors: { [FORM_INPUT_ID]: 'A reason goes with a 👎: press 👎 under the answer first.' },
    });
    expect(await readVote(testBot.bot.core.store, id, BOB)).toMatchObject({ vote: 'up' });
    expect((await readVote(testBot.bot.core.store, id, BOB))?.reason).toBeUndefined();
    expect(slack.platformFailures).toEqual([]);
  });

  it("a posted answer carries 👍 / 👎 in its last chat.update; an /imagine image's buttons line carries them after Reroll, Upscale and Vary", async () => {
    const dm = slack.openIm(BOB).id;
    service.enqueue('chat', { stream: { text: 'Posted answer.' } });
    // A /chat in a DM is posted and updated (a DM message is answered natively streamed in its thread).
    const done = next('chat', dm);
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'Hello', channel_id: dm, user_id: BOB });
    expect((await done).ok).toBe(true);
    const posted = botMessages(dm).at(-1)!;
    expect(posted.via).toBe('chat.postMessage');
    expect(posted.revisions.at(-1)!.method).toBe('chat.update');
    feedbackOf(posted);

    const channel = CHANNELS.image;
    const imagined = next('imagine', channel);
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/imagine',
      text: 'a red fox',
      channel_id: channel,
      user_id: BOB,
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await imagined).ok).toBe(true);
    const line = botMessages(channel).findLast((m) => (m.blocks ?? []).length > 0)!;
    const blocks = line.blocks as Block[];
    expect(blocks.map((b) => b.type).slice(-2)).toEqual(['actions', 'context_actions']);
    expect(blocks.at(-2)!.elements!.map((e) => String(e.action_id).split(':')[1])).toEqual([
      'reroll',
      'upscale',
      'vary',
    ]);
    const { id } = feedbackOf(line);
    const { outcome } = await vote(channel, line, 'down', CAROL);
    expect(outcome.ok).toBe(true);
    expect(await readVote(testBot.bot.core.store, id, CAROL)).toMatchObject({
      vote: 'down',
      kind: 'image',
      command: 'imagine',
      model: 'default',
    });
    expect(await feedbackMetrics()).toMatchObject({ 'image/down/default': 1 });
  });

  it('/usage --feedback shows admins the votes of the workspace summed per model; anyone else is refused', async () => {
    const channel = CHANNELS.usage;
    const usage = async (user: string) => {
      const done = next('usage', channel);
      const ack = await slack.sendSlashCommand(botUrl, {
        command: '/usage',
        text: '--feedback',
        channel_id: channel,
        user_id: user,
      });
      return { outcome: await done, told: toldVia(ack.responseUrl).at(-1)! };
    };
    const refused = await usage(BOB);
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(refused.told.text).toBe('Only admins can see the feedback on answers.');

    const { outcome, told } = await usage(ADMIN);
    expect(outcome.ok).toBe(true);
    const shown = unescapeSlack(JSON.stringify(told.blocks));
    expect(shown).toContain('Feedback on answers, by model');
    const tally = await readTally(testBot.bot.core.store, placeOf(`slack:${slack.teamId}:${channel}`));
    for (const model of new Set(tally.map((l) => l.model))) {
      const up = tally.filter((l) => l.model === model).reduce((n, l) => n + l.up, 0);
      const down = tally.filter((l) => l.model === model).reduce((n, l) => n + l.down, 0);
      expect(shown).toContain(`👍 ${up} · 👎 ${down}`);
    }
    expect(shown).toContain('👍 0 · 👎 1 (0% 👍) — image');
  });
});
