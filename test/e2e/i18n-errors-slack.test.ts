/**
 * Refusals and failures in the Slack user's language (issue 42, "Done when": a Slack user whose
 * `users.info` says `ja-JP` gets Japanese ephemeral errors): an option refused and a service
 * failure with its reference, to the user alone (`response_url`, ephemeral); `pt-PT` finds the
 * Portuguese catalog; a user Slack gives no catalog language for (`ko-KR`) reads English.
 */
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_USERS, type FakeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { words: 'C0WORDS' };
const USERS = { ja: 'U0HANAKO', pt: 'U0JOAO', ko: 'U0MINJI' };

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: {
      channels: slackChannels(CHANNELS),
      users: [
        ...DEFAULT_USERS,
        { id: USERS.ja, name: 'hanako', locale: 'ja-JP' },
        { id: USERS.pt, name: 'joao', locale: 'pt-PT' },
        { id: USERS.ko, name: 'minji', locale: 'ko-KR' },
      ],
    },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Runs a slash command as `user` in the channel; resolves with the outcome and what the user alone was told. */
async function told(user: string, command: string, text: string) {
  const before = slack.responsePosts().length;
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${CHANNELS.words}`));
  await slack.sendSlashCommand(botUrl, { command, text, channel_id: CHANNELS.words, user_id: user });
  const [outcome] = await done;
  const posts = slack.responsePosts().slice(before);
  return { outcome: outcome!, posts: posts.map((p) => ({ text: p.text, responseType: p.responseType })) };
}

describe('refusals and failures in the Slack user’s language', () => {
  it('ja-JP: an option out of range, in Japanese, to the user alone', async () => {
    const { outcome, posts } = await told(USERS.ja, '/chat', '熱い意見 --temperature 5');
    expect(outcome.errorCode).toBe('invalid_option');
    expect(posts).toEqual([{ text: '`temperature` は 0 から 2 の範囲にしてください。', responseType: 'ephemeral' }]);
  });

  it('ja-JP: a service failure in Japanese, with its reference', async () => {
    for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 500 });
    const { outcome, posts } = await told(USERS.ja, '/chat', '元気ですか?');
    expect(outcome.errorCode).toBe('server_error');
    expect(posts).toEqual([
      {
        text: expect.stringMatching(
          /^生成サービスに問題が発生しています \(HTTP 500\)。1 分後にもう一度お試しください。（参照 [2-9A-Z]{6}）$/,
        ),
        responseType: 'ephemeral',
      },
    ]);
  });

  it('pt-PT finds the Portuguese catalog; ko-KR, without one, reads English', async () => {
    const pt = await told(USERS.pt, '/chat', 'pergunta --temperature 5');
    expect(pt.posts.map((p) => p.text)).toEqual(['`temperature` deve estar entre 0 e 2.']);
    const ko = await told(USERS.ko, '/chat', '질문 --temperature 5');
    expect(ko.posts.map((p) => p.text)).toEqual(['`temperature` must be from 0 to 2.']);
  });
});
