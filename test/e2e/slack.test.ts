/**
 * End-to-end tests of the Slack side: the whole bot started from environment variables
 * (startTestBot), real @slack/bolt + @slack/web-api + undici, against the fake Slack
 * (test/fakes/slack.ts) and the fake generation service (test/fakes/service.ts). Slash
 * commands are form-encoded and signed exactly as Slack sends them.
 *
 * One bot, one FakeSlack and one FakeService serve the whole file; every test uses its own
 * channel, so tests read only their own channel's messages.
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { escapeSlack, type FakeSlack, mentionsIn, type SlashCommandResult, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import { slackImaginePosts } from '../helpers/imagine-posts.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';
import { answersIn, expectQuestion, expectStreamedMessage } from './slack-checks.ts';

const CHANNELS = {
  stream: 'C0STREAM',
  image: 'C0IMAGE',
  history: 'C0HISTORY',
  otherHistory: 'C0ELSEWHERE',
  mentions: 'C0MENTIONS',
  long: 'C0LONG',
  errors: 'C0ERRORS',
  signatures: 'C0SIGNED',
  ratelimit: 'C0RATELIMIT',
  complete: 'C0COMPLETE',
  webImages: 'C0WEBIMAGES',
} as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

/** The environment an operator would set, pointed at the fakes (HTTP mode). */
const env = (overrides: Record<string, string> = {}) => ({ ...slackEnv(service, slack), ...overrides });

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Resolves with the next finished command in `channel` (the bot emits `command.done` after everything it sent). */
function nextOutcome(channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`)).then(([outcome]) => outcome!);
}

/** Sends a signed slash command, checks Slack's 3 s ack rule, and waits until the bot finished it. */
async function run(
  command: string,
  text: string,
  channel: string,
): Promise<{ ack: SlashCommandResult; outcome: CommandOutcome }> {
  const done = nextOutcome(channel);
  const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: channel });
  expect(ack.failure).toBeUndefined();
  expect(ack.ackedInTime).toBe(true);
  return { ack, outcome: await done };
}

/** Web API calls that concerned `channel`. */
const callsIn = (channel: string) =>
  slack.calls.filter((c) => c.params.channel === channel || c.params.channel_id === channel);

describe('Slack end to end', () => {
  it('/chat is acked with HTTP 200 within 3 s while the answer still streams, then posted and edited until it shows exactly the streamed text', async () => {
    const channel = CHANNELS.stream;
    const streamed =
      'Tom & Jerry <3 cheese; if a > b && b < c then a > c. ' +
      'This answer arrives slowly, a few characters at a time, so the bot has to post it first and edit it as it grows. '.repeat(
        3,
      );
    // ~110 SSE events 25 ms apart: the stream lasts about 3 s.
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
    const done = nextOutcome(channel);
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'tell me about Tom & Jerry',
      channel_id: channel,
    });

    expect(ack.status).toBe(200);
    expect(ack.ackedInTime).toBe(true);
    expect(ack.ackMs).toBeLessThan(3000);
    // The ack did not wait for the answer: nothing shows the complete text yet.
    expect(slack.messages(channel).some((m) => unescapeSlack(m.text) === streamed)).toBe(false);

    expect((await done).ok).toBe(true);
    // The question is shown to the channel; the answer streams into its thread, ending with exactly the text.
    expectQuestion(slack, channel, 'alice', 'tell me about Tom & Jerry');
    expectStreamedMessage(slack, channel, streamed);
    expect(callsIn(channel).every((c) => c.ok)).toBe(true);
    expect(slack.platformFailures).toEqual([]);
  });

  it('/chat in a DM is posted, then updated to exactly the streamed text: no question post and no native stream (a native stream needs a thread)', async () => {
    const dm = slack.openIm('U0BOB').id;
    const streamed = 'A private answer, streamed in small pieces so that it is edited as it grows. '.repeat(8);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 20 } });
    const done = nextOutcome(dm);
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'just between us',
      channel_id: dm,
      user_id: 'U0BOB',
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await done).ok).toBe(true);
    const methods = callsIn(dm).map((c) => c.method);
    expect(methods).not.toContain('chat.startStream');
    expect(methods.filter((m) => m === 'chat.postMessage')).toHaveLength(1);
    expect(methods).toContain('chat.update');
    const [answer, ...others] = slack.messages(dm);
    expect(others).toEqual([]);
    expect(answer!.via).toBe('chat.postMessage');
    expect(answer!.threadTs).toBeUndefined();
    expect(unescapeSlack(answer!.text)).toBe(streamed);
  });

  it("/imagine uploads a PNG of the asked aspect ratio in the three steps (getUploadURLExternal → bytes → completeUploadExternal) into the command's channel", async () => {
    const channel = CHANNELS.image;
    const { outcome } = await run('/imagine', 'a red fox in the snow --aspect_ratio landscape', channel);
    expect(outcome).toMatchObject({ ok: true, command: 'imagine' });

    const [file, ...moreFiles] = [...slack.files.values()];
    expect(moreFiles).toEqual([]);
    expect(file).toMatchObject({ filename: 'imagine.png', completed: true, channel, altText: 'a red fox in the snow' });
    const getUrl = slack.calls.find((c) => c.method === 'files.getUploadURLExternal')!;
    const upload = slack.uploads.find((u) => u.fileId === file!.id)!;
    const complete = slack.calls.find((c) => c.method === 'files.completeUploadExternal')!;
    expect(getUrl.ok && upload.status === 200 && complete.ok).toBe(true);
    expect(getUrl.seq).toBeLessThan(upload.seq);
    expect(upload.seq).toBeLessThan(complete.seq);

    const meta = await sharp(file!.data!).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 1216, height: 832 });
    // The image with its caption, and a line with its Reroll / Upscale / Vary buttons.
    const { shared, buttonsLine } = slackImaginePosts(slack.messages(channel));
    expect(shared).toMatchObject({ via: 'files.completeUploadExternal', files: [file!.id], threadTs: undefined });
    expect(buttonsLine).toMatchObject({ threadTs: undefined });
    const actions = (buttonsLine.blocks as Array<{ type: string; elements?: Array<{ action_id: string }> }>).find(
      (b) => b.type === 'actions',
    )!;
    expect(actions.elements!.map((e) => e.action_id.split(':').slice(0, 2).join(':'))).toEqual([
      'imagine:reroll',
      'imagine:upscale',
      'imagine:vary',
    ]);
    expect(unescapeSlack(shared.text)).toContain('a red fox in the snow');
    expect(shared.text).toContain('1216×832');
  });

  it('a second /chat in a channel sends the first exchange to the service; a /chat in another channel does not', async () => {
    await run('/chat', 'My name is Ada.', CHANNELS.history);
    await run('/chat', 'What is my name?', CHANNELS.history);
    await run('/chat', 'Who am I?', CHANNELS.otherHistory);

    const lastUserText = (body: { messages: Array<{ role: string; content: unknown }> }) =>
      body.messages.at(-1)!.content;
    const second = service.chatRequests().find((b) => lastUserText(b) === 'What is my name?')!;
    expect(second.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const elsewhere = service.chatRequests().find((b) => lastUserText(b) === 'Who am I?')!;
    expect(elsewhere.messages).toEqual([{ role: 'user', content: 'Who am I?' }]);
    expect(unescapeSlack(slack.messages(CHANNELS.history).at(-1)!.text)).toBe('Echo: What is my name?');
  });

  it('model output with <!channel>, <!everyone>, <!here> or <@U…> is posted escaped: it reads the same and mentions nobody', async () => {
    const channel = CHANNELS.mentions;
    const answer =
      'Attention <!channel> and <!everyone> and <!here>: ping <@U123> and <@U0BOB|bob>, <!subteam^S0ADMINS>!';
    service.enqueue('chat', { stream: { text: answer } });
    expect((await run('/chat', 'mention everybody', channel)).outcome.ok).toBe(true);

    const [message] = answersIn(slack, channel);
    expect(unescapeSlack(message!.text)).toBe(answer);
    expect(message!.mentions).toEqual([]);
    for (const revision of message!.revisions) expect(mentionsIn(revision.text)).toEqual([]);
    expect(slack.ephemerals.filter((e) => e.channel === channel)).toEqual([]);
  });

  it("an answer over 4,000 characters is split into messages Slack accepts, the follow-ups in the first message's thread", async () => {
    const channel = CHANNELS.long;
    const answer = Array.from(
      { length: 90 },
      (_, i) => `Line ${i + 1}: fish & chips <with> salt, written out long enough to make this answer span pages.`,
    ).join('\n');
    expect(answer.length).toBeGreaterThan(8000);
    service.enqueue('chat', { stream: { text: answer } });
    expect((await run('/chat', 'write a lot', channel)).outcome.ok).toBe(true);

    // Every page accepted (a 429 would be waited out and retried by the client: not a refusal).
    expect(callsIn(channel).filter((c) => !c.ok && c.error !== 'ratelimited')).toEqual([]);
    const question = expectQuestion(slack, channel, 'alice', 'write a lot');
    const messages = answersIn(slack, channel);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    // Every page in the question's thread, in order.
    for (const m of messages) expect(m.threadTs).toBe(question.ts);
    for (const m of messages) expect(m.text.length).toBeLessThanOrEqual(4000);
    // Pages are cut at line breaks (the break itself is dropped).
    expect(messages.map((m) => unescapeSlack(m.text)).join('\n')).toBe(answer);
  });

  it('a bad option or a failing service tells only the user, via response_url (ephemeral), posts nothing public, leaks no secret, and the next command works', async () => {
    const channel = CHANNELS.errors;
    const imagesBefore = service.requests.filter((r) => r.route === 'images').length;

    const badOption = await run('/imagine', 'a fox --aspect_ratio wide', channel);
    expect(badOption.outcome).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(service.requests.filter((r) => r.route === 'images').length).toBe(imagesBefore);

    // The service's error text quotes the key, as some servers do: the user must never see it.
    service.enqueue('chat', {
      status: 400,
      body: {
        error: {
          message: `Invalid API key ${service.apiKey} for this model`,
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    });
    const failed = await run('/chat', 'hello?', channel);
    expect(failed.outcome).toMatchObject({ ok: false, errorCode: 'bad_request' });

    const posts = slack.responsePosts().filter((p) => p.channel === channel);
    expect(posts.map((p) => [p.responseType, p.status])).toEqual([
      ['ephemeral', 200],
      ['ephemeral', 200],
    ]);
    expect(unescapeSlack(posts[0]!.text)).toMatch(/`aspect_ratio` must be one of `square`, `portrait`, `landscape`/);
    expect(unescapeSlack(posts[1]!.text)).toMatch(/^The generation service rejected the request: /);
    expect(slack.ephemerals.filter((e) => e.channel === channel)).toHaveLength(2);
    expect(slack.messages(channel)).toEqual([]);
    // Each logged once: one line for the bad option, one for the failed service call, nothing at error level.
    const lines = testBot.logs.filter((l) => l.channel === channel);
    expect(lines.filter((l) => l.msg === 'invalid command option')).toHaveLength(1);
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual(['service call failed']);

    const next = await run('/chat', 'are you still there?', channel);
    expect(next.outcome.ok).toBe(true);
    expect(answersIn(slack, channel).map((m) => unescapeSlack(m.text))).toEqual(['Echo: are you still there?']);

    // Over everything this file did so far: no secret in any log line or anything Slack shows.
    expect(testBot.logs.some((l) => l.msg === 'service call failed')).toBe(true);
    for (const secret of [service.apiKey, slack.botToken, slack.signingSecret]) {
      expect(testBot.rawLog()).not.toContain(secret);
      expect(slack.visibleText()).not.toContain(secret);
    }
  });

  it('a request with a bad signature or a stale timestamp is refused with 401 and runs nothing', async () => {
    const channel = CHANNELS.signatures;
    const outcomes: CommandOutcome[] = [];
    const record = (o: CommandOutcome) => {
      if (o.conversationId.endsWith(`:${channel}`)) outcomes.push(o);
    };
    testBot.bot.core.events.on('command.done', record);
    try {
      const forged = await slack.sendSlashCommand(
        botUrl,
        { command: '/chat', text: 'forged prompt', channel_id: channel },
        { signingSecret: 'not-the-signing-secret' },
      );
      const stale = await slack.sendSlashCommand(
        botUrl,
        { command: '/chat', text: 'stale prompt', channel_id: channel },
        { timestampSec: Math.floor(Date.now() / 1000) - 10 * 60 },
      );
      expect(forged.status).toBe(401);
      expect(stale.status).toBe(401);
      // A genuine command afterwards: once it is done, anything the refused ones started would have shown.
      expect((await run('/chat', 'genuine prompt', channel)).outcome.ok).toBe(true);

      expect(outcomes).toHaveLength(1);
      const prompts = service.chatRequests().map((b) => JSON.stringify(b.messages));
      expect(prompts.some((p) => p.includes('forged prompt') || p.includes('stale prompt'))).toBe(false);
      expect(answersIn(slack, channel).map((m) => unescapeSlack(m.text))).toEqual(['Echo: genuine prompt']);
      expectQuestion(slack, channel, 'alice', 'genuine prompt');
      for (const refused of [forged, stale]) {
        const id = refused.responseUrl.split('/').at(-1)!;
        expect(slack.responseUrls.get(id)!.posts).toEqual([]);
      }
    } finally {
      testBot.bot.core.events.off('command.done', record);
    }
  });

  it('a chat.appendStream (a /chat) and a chat.update (a /complete) refused with HTTP 429 go again after Retry-After, with the text refused and what came since, and the final texts still land', async () => {
    const channel = CHANNELS.ratelimit;
    const streamed = 'Rate limits are part of the platform; the final text must land anyway. '.repeat(4);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
    slack.rateLimitNext('chat.appendStream', 1, 1);
    expect((await run('/chat', 'go', channel)).outcome.ok).toBe(true);
    const [refusedAppend, retriedAppend] = callsIn(channel).filter((c) => c.method === 'chat.appendStream');
    expect(refusedAppend).toMatchObject({ status: 429, error: 'ratelimited' });
    // The write goes again through the scheduler (the client rejects a 429 at once): it reads the newest text then.
    expect(retriedAppend).toMatchObject({ status: 200, ok: true });
    expect(String(retriedAppend!.params.markdown_text).startsWith(String(refusedAppend!.params.markdown_text))).toBe(
      true,
    );
    expect(retriedAppend!.at - refusedAppend!.at).toBeGreaterThanOrEqual(950); // Retry-After: 1 was honoured
    expect(unescapeSlack(answersIn(slack, channel)[0]!.text)).toBe(streamed);

    service.setCompletionReply(' and a completion long enough to be posted first and then updated.');
    try {
      service.enqueue('completions', { stream: { chunkDelayMs: 40 } });
      slack.rateLimitNext('chat.update', 1, 1);
      expect((await run('/complete', 'Once', channel)).outcome.ok).toBe(true);
    } finally {
      service.setCompletionReply(undefined);
    }
    const [refused, retried] = callsIn(channel).filter((c) => c.method === 'chat.update');
    expect(refused).toMatchObject({ status: 429, error: 'ratelimited' });
    expect(retried).toMatchObject({ status: 200, ok: true });
    expect(String(retried!.params.text).startsWith(String(refused!.params.text))).toBe(true);
    expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(950);
    expect(unescapeSlack(answersIn(slack, channel).at(-1)!.text)).toBe(
      'Once and a completion long enough to be posted first and then updated.',
    );
  });

  it('/complete streams the prompt followed by its legacy text completion into the channel (posted, then edited to the full text), and keeps no history', async () => {
    const channel = CHANNELS.complete;
    const completion =
      ' was a dark & stormy night; the rain fell in torrents <except at occasional intervals>, when it was checked by a violent gust of wind.';
    service.setCompletionReply(completion);
    try {
      // Slow pieces, so that the answer is posted before the completion is over and edited as it grows.
      service.enqueue('completions', { stream: { chunkDelayMs: 40 } });
      const { outcome } = await run('/complete', 'It', channel);
      expect(outcome).toMatchObject({ ok: true, command: 'complete' });

      const [message, ...others] = slack.messages(channel);
      expect(others).toEqual([]);
      expect(unescapeSlack(message!.text)).toBe(`It${completion}`);
      expect(message!.text).toBe(escapeSlack(`It${completion}`));
      const [posted, ...updates] = message!.revisions;
      expect(posted!.method).toBe('chat.postMessage');
      expect(unescapeSlack(posted!.text).startsWith('It')).toBe(true);
      expect(unescapeSlack(posted!.text).length).toBeLessThan(`It${completion}`.length);
      expect(updates.length).toBeGreaterThanOrEqual(1);
      expect(updates.every((r) => r.method === 'chat.update')).toBe(true);
      expect(service.lastRequest('completions')?.body).toMatchObject({
        prompt: 'It',
        stream: true,
        model: 'fake-chat',
      });
      expect(outcome.conversationId).toBe(`slack:${slack.teamId}:${channel}`);
      expect(await testBot.bot.core.history.get(outcome.conversationId)).toEqual([]);
      // …whereas a /chat in the same channel is remembered under that key.
      await run('/chat', 'remember me', channel);
      expect(await testBot.bot.core.history.get(outcome.conversationId)).toHaveLength(2);
    } finally {
      service.setCompletionReply(undefined);
    }
  });

  it('/chat --web_search images sends the mode and shows the image results as image blocks after the answer', async () => {
    const channel = CHANNELS.webImages;
    const answer = 'Two foxes: ![red fox](https://img.example/red-fox.jpg) and https://img.example/arctic-fox.png';
    service.setChatReply(answer);
    try {
      const { outcome } = await run('/chat', 'show me foxes --web_search images', channel);
      expect(outcome.ok).toBe(true);
      expect(service.chatRequests().at(-1)).toMatchObject({ web_search: 'images' });
      const messages = answersIn(slack, channel);
      expect(messages).toHaveLength(2);
      expect(unescapeSlack(messages[0]!.text)).toBe(answer);
      expect(messages[1]!.blocks).toEqual([
        { type: 'image', image_url: 'https://img.example/red-fox.jpg', alt_text: 'red fox' },
        { type: 'image', image_url: 'https://img.example/arctic-fox.png', alt_text: 'image result' },
      ]);
      // In the question's thread, after the answer.
      expect(messages[1]!.threadTs).toBe(messages[0]!.threadTs);
      expect(messages[0]!.threadTs).toBe(expectQuestion(slack, channel, 'alice', 'show me foxes').ts);
    } finally {
      service.setChatReply(undefined);
    }
  });

  it("a wrong SLACK_BOT_TOKEN stops startup with Slack's invalid_auth, and the error names no secret", async () => {
    const wrongToken = `xoxb-wrong-${randomBytes(8).toString('hex')}`;
    const error = await startTestBot(env({ SLACK_BOT_TOKEN: wrongToken })).then(
      async (started) => {
        await started.stop();
        throw new Error('the bot started with a wrong token');
      },
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/invalid_auth/);
    expect(error.message).toMatch(/SLACK_BOT_TOKEN/);
    expect(error.message).not.toContain(wrongToken);
  });
});
