/**
 * End-to-end on Slack: what arrives while the bot stops (a drain, running.ts) is refused in the
 * asker's Slack language (`users.info` with `include_locale`, stopping.ts), only to them: a slash
 * command through its response_url, a mention with chat.postEphemeral; a user whose language
 * Slack does not give reads DEFAULT_LOCALE's words.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { RESTARTING_KEY } from '../../src/core/running.ts';
import { FakeService } from '../fakes/service.ts';
import { FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';

const CHANNEL = 'C0STOPPING';
const JA = 'U0YUKI';
const PT = 'U0JOAO';
const NOBODY = 'U0NOLOCALE';

describe('a Slack bot that is stopping', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let testBot: TestBot;
  let botUrl: string;

  beforeAll(async () => {
    service = await FakeService.start();
    slack = await FakeSlack.start({
      channels: [{ id: CHANNEL, name: 'stopping' }],
      users: [
        { id: JA, name: 'yuki', locale: 'ja-JP' },
        { id: PT, name: 'joao', locale: 'pt-BR' },
        { id: NOBODY, name: 'nemo', locale: 'fr-FR' },
      ],
    });
    testBot = await startTestBot({ ...slackEnv(service, slack), DEFAULT_LOCALE: 'de', SHUTDOWN_GRACE_MS: '8000' });
    botUrl = `http://127.0.0.1:${testBot.bot.slack!.port}`;
  });
  afterAll(async () => {
    await testBot.stop().catch(() => undefined);
    await slack.close();
    await service.close();
  });

  it('refuses a slash command and a mention in each asker’s language, DEFAULT_LOCALE for one Slack gives none', async () => {
    // An answer streaming slowly holds the drain open while the others arrive.
    service.enqueue('chat', { stream: { pieces: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 150 } });
    const long = testBot.outcomes((o) => o.conversationId.includes(CHANNEL));
    expect(
      await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'long one', channel_id: CHANNEL, user_id: PT }),
    ).toMatchObject({ ackedInTime: true });
    await vi.waitFor(() => expect(service.chatRequests().length).toBe(1), { timeout: 10_000 });
    const stopped = testBot.bot.stop(8000);
    // (The adapters refuse from the moment stop() is called: running.ts drain.)

    // Slack does not answer users.info for NOBODY: their language is not known.
    slack.failNext('users.info', 'internal_error', { count: 10, when: (p) => p.user === NOBODY });
    for (const user of [JA, NOBODY]) {
      const ack = await slack.sendSlashCommand(botUrl, {
        command: '/chat',
        text: 'too late',
        channel_id: CHANNEL,
        user_id: user,
      });
      expect(ack).toMatchObject({ ackedInTime: true, failure: undefined });
    }
    const mention = slack.mentionEvent({ channel: CHANNEL, user: JA, text: 'are you there?' });
    expect(await slack.sendEvent(botUrl, mention)).toMatchObject({ status: 200, ackedInTime: true });

    const ja = wordsOf('ja').t(RESTARTING_KEY);
    const de = wordsOf('de').t(RESTARTING_KEY);
    expect(ja).not.toBe(wordsOf('en').t(RESTARTING_KEY));
    const postsTo = (user: string) =>
      slack
        .responsePosts()
        .filter((p) => p.channel === CHANNEL && p.user === user)
        .map((p) => ({ text: unescapeSlack(p.text), type: p.responseType }));
    await vi.waitFor(
      () => {
        expect(postsTo(JA)).toEqual([{ text: ja, type: 'ephemeral' }]);
        expect(postsTo(NOBODY)).toEqual([{ text: de, type: 'ephemeral' }]);
        const told = slack.ephemerals.filter((e) => e.channel === CHANNEL && e.user === JA);
        expect(told.map((e) => unescapeSlack(e.text))).toEqual([ja]);
      },
      { timeout: 5_000 },
    );
    // Nothing of theirs reached the service: only the long answer was asked for.
    expect(service.chatRequests()).toHaveLength(1);
    await stopped;
    expect((await long)[0]).toBeDefined();
  });
});
