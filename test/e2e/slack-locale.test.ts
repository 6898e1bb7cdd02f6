/**
 * End-to-end on Slack, the bot's own words in its users' languages (issue 42): a user whose
 * `users.info` (with `include_locale`) says `ja-JP` reads what only they see in Japanese — a
 * refusal of their rights, a file they may not use, the App Home (its headings, the lines of what
 * the bot does, the dates of their conversations to export) — while a user with `en-US` on the
 * same workspace reads English. With DEFAULT_LOCALE set, a rights check Slack did not answer (so
 * that no language of the user is known either) is told in DEFAULT_LOCALE.
 */
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeSlack, SlackEvent } from '../fakes/slack.ts';
import { unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNEL = 'C0LOCALE';
const JA = 'U0YUKI';
const EN = 'U0EMMA';
const OWNER = 'U0OWNER';

/** The bot's ways in, for one started bot. */
function driver(get: () => { slack: FakeSlack; testBot: TestBot; botUrl: string }) {
  return {
    /** Sends a signed slash command and waits until the bot finished it. */
    async run(command: string, text: string, user: string): Promise<CommandOutcome> {
      const { slack, testBot, botUrl } = get();
      const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${CHANNEL}`)).then(([outcome]) => outcome!);
      const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: CHANNEL, user_id: user });
      expect(ack).toMatchObject({ ackedInTime: true, failure: undefined });
      return done;
    },
    /** The readable text of the response_url posts to `user`, in order, each checked to be ephemeral. */
    ephemeralsTo(user: string): string[] {
      const posts = get()
        .slack.responsePosts()
        .filter((p) => p.channel === CHANNEL && p.user === user);
      for (const post of posts) expect(post).toMatchObject({ status: 200, responseType: 'ephemeral' });
      return posts.map((p) => unescapeSlack(p.text));
    },
    /** Sends an event over HTTP and checks it was acked in time. */
    async send(event: SlackEvent): Promise<void> {
      const { slack, botUrl } = get();
      expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
    },
  };
}

describe('a Japanese and an English user on one workspace', () => {
  let slack: FakeSlack;
  let testBot: TestBot;
  let botUrl: string;
  useE2E(
    {
      slack: {
        channels: [{ id: CHANNEL, name: 'locale' }],
        users: [
          { id: JA, name: 'yuki', locale: 'ja-JP' },
          { id: EN, name: 'emma', locale: 'en-US' },
          { id: OWNER, name: 'olga' },
        ],
      },
      bot: {},
      resetServiceAfterEach: true,
    },
    (e2e) => {
      ({ slack, bot: testBot, botUrl } = e2e);
    },
  );
  const bot = driver(() => ({ slack, testBot, botUrl }));

  it('tells each their refusals in their own language: an admin command, a Slack file that is not theirs', async () => {
    for (const [user, said] of [
      [JA, '/settings は管理者専用です。'],
      [EN, '/settings is for admins only.'],
    ] as const) {
      const outcome = await bot.run('/settings', '--system_prompt "Be brief."', user);
      expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
      expect(bot.ephemeralsTo(user).at(-1)).toBe(said);
    }

    const file = slack.addUserFile({
      name: 'plan.csv',
      mimetype: 'text/csv',
      data: Buffer.from('a,b\n1,2\n'),
      user: OWNER,
    });
    for (const [user, said] of [
      [JA, 'その Slack ファイルはここでは使えません。'],
      [EN, 'I cannot use that Slack file here: it is not yours'],
    ] as const) {
      const outcome = await bot.run('/chat', `What is in it? --image ${file.permalink}`, user);
      expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
      expect(bot.ephemeralsTo(user).at(-1)).toContain(said);
    }
  });

  it('publishes each user’s App Home in their language: headings, what the bot does, the dates of their conversations to export', async () => {
    for (const user of [JA, EN]) {
      // A question in their DM: a conversation of theirs, offered for export on the Home.
      const dm = slack.openIm(user).id;
      const event = slack.imMessageEvent({ channel: dm, user, text: 'hello' });
      const done = testBot.outcomes((o) => o.conversationId === `slack:${slack.teamId}:${dm}:${event.ts as string}`);
      await bot.send(event);
      expect((await done)[0]!.ok).toBe(true);
      await bot.send(slack.appHomeOpenedEvent({ user, tab: 'home' }));
    }
    await vi.waitFor(() => expect(slack.homeView(JA) && slack.homeView(EN)).toBeDefined(), { timeout: 10_000 });
    const textOf = (user: string) => unescapeSlack(JSON.stringify(slack.homeView(user)!.view.blocks));

    const ja = textOf(JA);
    expect(ja).toContain('できること');
    expect(ja).toContain('コマンド');
    expect(ja).toContain('*メッセージタブ*');
    expect(ja).toContain('^{date_short_pretty} {time}|');
    // The export list: its heading, the status line of their conversation, its button.
    expect(ja).toContain('会話をエクスポート');
    expect(ja).toContain('ダイレクトメッセージ：');
    expect(ja).toContain('"text":"エクスポート"');
    expect(ja).not.toContain('Export your conversations');
    expect(ja).not.toContain('What I do');
    // (Their use itself is /usage's card, in /usage's words.)

    const en = textOf(EN);
    expect(en).toContain('What I do');
    expect(en).toContain('Commands');
    expect(en).toContain('*Messages tab*');
    expect(en).toContain('^{date_short_pretty} at {time}|');
    expect(en).not.toContain('できること');
    expect(en).toContain('Export your conversations');
    expect(en).toContain('Our direct messages: the conversation started');

    // A press of the Export button: the line at the top of the Home published again is the presser's.
    const button = (slack.homeView(JA)!.view.blocks as Array<{ accessory?: { action_id?: string } }>).find((b) =>
      b.accessory?.action_id?.startsWith('home-export:'),
    )!.accessory!.action_id!;
    const before = slack.homePublishes.length;
    const ack = await slack.sendHomeAction(botUrl, { user: JA, actionId: button });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    await vi.waitFor(() => expect(slack.homePublishes.slice(before).some((p) => p.user === JA)).toBe(true), {
      timeout: 10_000,
    });
    const notice = (slack.homeView(JA)!.view.blocks as Array<{ text?: { text: string } }>)[0]!.text!.text;
    expect(unescapeSlack(notice)).toMatch(/^📄 送信しました：/);
    expect(slack.platformFailures).toEqual([]);
  });
});

describe('DEFAULT_LOCALE where Slack tells no language', () => {
  let slack: FakeSlack;
  let testBot: TestBot;
  let botUrl: string;
  useE2E(
    {
      slack: { channels: [{ id: CHANNEL, name: 'locale' }], users: [{ id: OWNER, name: 'olga' }] },
      bot: { env: { DEFAULT_LOCALE: 'ja' } },
      resetServiceAfterEach: true,
    },
    (e2e) => {
      ({ slack, bot: testBot, botUrl } = e2e);
    },
  );
  const bot = driver(() => ({ slack, testBot, botUrl }));

  it('a rights check Slack did not answer (nor the user’s language) is told in DEFAULT_LOCALE, with its reference', async () => {
    const admin = 'U0LATEADMIN';
    // Joined after the workspace was listed: the bot asks users.info about them, which fails.
    slack.addUser({ id: admin, name: 'erin', isAdmin: true, locale: 'en-US' });
    slack.failNext('users.info', 'internal_error');
    const outcome = await bot.run('/settings', '--system_prompt "Be brief."', admin);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'platform_refused' });
    expect(bot.ephemeralsTo(admin).at(-1)).toMatch(
      /^この操作を行えるか確認できませんでした。Slack があなたの権限を教えてくれなかったため（internal_error）、何もしていません。1 分後にもう一度お試しください。（参照 [A-Z0-9]{6}）$/,
    );
    // Once Slack answers, the user's own language (en-US) is known and spoken.
    const accepted = await bot.run('/settings', '--system_prompt "Be brief."', admin);
    expect(accepted).toMatchObject({ ok: true });
    expect((await testBot.bot.core.settings.get(`slack:${slack.teamId}:${CHANNEL}`)).systemPrompt).toBe('Be brief.');
  });
});
