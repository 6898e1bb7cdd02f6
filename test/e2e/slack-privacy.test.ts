/**
 * End-to-end on Slack (issue 38, items 4, 5 and 8): what the bot reads for a user is what that
 * user may see, and its rights checks say when they could not be made. The whole bot
 * (startTestBot), real @slack/bolt and @slack/web-api, against the fake Slack (files with an
 * owner and the conversations that share them; conversations.members; users.list; users.info
 * rate-limited at tier 4) and the fake service.
 *
 * - `/chat --image <Slack file link>`: a file the asker neither owns nor sees shared where they
 *   ask is refused ephemerally, before anything is downloaded, shown or asked of the service.
 * - "Summarize this channel" from the agent view: a channel the user was removed from is refused,
 *   though Slack named it as viewed; a context without a channel forgets it.
 * - 40 authors are named from the workspace's users.list, not one users.info each, so an admin's
 *   /settings in the same minute is accepted; a rights check Slack does not answer says it could
 *   not be checked, never "for admins only".
 */

import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { FILE_NOT_SHARED } from '../../src/platforms/slack/files.ts';
import { notAMember } from '../../src/platforms/slack/viewed-channel.ts';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_USERS, type FakeSlack, type SlackEvent, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { files: 'C0FILES', crowd: 'C0CROWD', settings: 'C0SETTINGS', team: 'G0TEAM', secret: 'G0SECRET' };
const ADMIN = 'U0ALICE';
/** An admin the bot has not looked up before the 40 authors' summary. */
const QUIET_ADMIN = 'U0FRANK';
const OWNER = 'U0BOB';
const ASKER = 'U0CAROL';
/** A member of the private channel, then removed from it. */
const LEAVER = 'U0DANA';
/** The 40 authors of the crowded channel. */
const AUTHORS = Array.from({ length: 40 }, (_, i) => ({
  id: `U0AUTHOR${String(i).padStart(2, '0')}`,
  name: `author${i}`,
}));

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: {
      channels: [
        { id: CHANNELS.files, name: 'files' },
        { id: CHANNELS.crowd, name: 'crowd' },
        { id: CHANNELS.settings, name: 'settings' },
        { id: CHANNELS.team, name: 'team', isPrivate: true, members: [OWNER, LEAVER] },
        { id: CHANNELS.secret, name: 'secret', isPrivate: true, members: [ADMIN, LEAVER] },
      ],
      users: [
        ...DEFAULT_USERS,
        { id: ASKER, name: 'carol' },
        { id: LEAVER, name: 'dana' },
        { id: QUIET_ADMIN, name: 'frank', isAdmin: true },
        ...AUTHORS,
      ],
    },
    bot: {},
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Sends a signed slash command and waits until the bot finished it. */
async function run(command: string, text: string, channel: string, user: string): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`)).then(([outcome]) => outcome!);
  const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: channel, user_id: user });
  expect(ack).toMatchObject({ ackedInTime: true, failure: undefined });
  return done;
}

/** The readable text of the response_url posts to `user` in `channel`, in order, each checked to be ephemeral. */
function ephemeralsTo(user: string, channel: string): string[] {
  const posts = slack.responsePosts().filter((p) => p.channel === channel && p.user === user);
  for (const post of posts) expect(post).toMatchObject({ status: 200, responseType: 'ephemeral' });
  return posts.map((p) => unescapeSlack(p.text));
}

/** Sends an event over HTTP and checks it was acked in time. */
async function send(event: SlackEvent): Promise<void> {
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
}

/** A question in `user`'s DM with the bot (the agent view); resolves with its outcome and the bot's replies in its thread. */
async function ask(user: string, text: string, threadTs?: string) {
  const dm = slack.openIm(user).id;
  const event = slack.imMessageEvent({ channel: dm, user, text, ...(threadTs ? { threadTs } : {}) });
  const thread = threadTs ?? (event.ts as string);
  const done = testBot.outcomes((o) => o.conversationId === `slack:${slack.teamId}:${dm}:${thread}`);
  await send(event);
  const [outcome] = await done;
  const replies = slack
    .thread(dm, thread)
    .filter((m) => m.user === slack.botUserId && m.ts > (event.ts as string))
    .map((m) => unescapeSlack(m.text));
  return { outcome: outcome!, replies };
}

/** Calls of `method` after the call numbered `since` (SlackApiCall.seq). */
const callsSince = (method: string, since: number) => slack.callsTo(method).filter((c) => c.seq > since);
/** The number of the latest call so far. */
const lastSeq = () => slack.calls.at(-1)?.seq ?? 0;

describe('Slack files named by link', () => {
  it("/chat --image with another user's file is refused ephemerally until it is shared where the asker asks; nothing is downloaded, shown or sent before", async () => {
    const channel = CHANNELS.files;
    const csv = Buffer.from('quarter,revenue\nQ1,1200000\nQ2,1350000\n');
    const file = slack.addUserFile({ name: 'salaries.csv', mimetype: 'text/csv', data: csv, user: OWNER });
    const refusedBy = async (link: string) => {
      const outcome = await run('/chat', `What is in this file? --image ${link}`, channel, ASKER);
      expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
      expect(ephemeralsTo(ASKER, channel).at(-1)).toBe(english.say(FILE_NOT_SHARED));
    };

    // Never shared: Bob's alone. By its permalink, and by its url_private (Slack's file host).
    await refusedBy(file.permalink);
    await refusedBy(`<${file.urlPrivateDownload}|salaries.csv>`);
    // Shared in a private channel Carol is not in: still not hers to read here.
    slack.shareUserFile(file, CHANNELS.team, { text: 'numbers' });
    await refusedBy(file.permalink);
    expect(ephemeralsTo(ASKER, channel)).toEqual([
      english.say(FILE_NOT_SHARED),
      english.say(FILE_NOT_SHARED),
      english.say(FILE_NOT_SHARED),
    ]);
    expect(slack.downloads.filter((d) => d.fileId === file.id)).toEqual([]);
    expect(service.chatRequests()).toEqual([]);
    expect(slack.messages(channel)).toEqual([]);

    // Shared in the channel she asks from: read for her.
    slack.shareUserFile(file, channel, { text: 'for everyone' });
    const accepted = await run('/chat', `What is in this file? --image ${file.permalink}`, channel, ASKER);
    expect(accepted).toMatchObject({ ok: true });
    // A text file is asked for as a range (its start, within the budget): 206.
    expect(slack.downloads.filter((d) => d.fileId === file.id)).toMatchObject([{ authorized: true, status: 206 }]);
    expect(JSON.stringify(service.chatRequests().at(-1)!.messages)).toContain('Q2,1350000');
  });
});

describe('the channel a user views', () => {
  it('a private channel the user was removed from is refused, though Slack named it as viewed; a context without a channel forgets it', async () => {
    const channel = CHANNELS.secret;
    slack.postUserMessage(channel, ADMIN, 'the merger closes on Friday');
    await send(slack.appContextChangedEvent({ user: LEAVER, viewing: channel }));
    const member = await ask(LEAVER, 'Summarize this channel');
    expect(member.outcome.ok).toBe(true);
    expect(JSON.stringify(service.chatRequests().at(-1)!.messages)).toContain('the merger closes on Friday');

    // Removed from the channel; the viewed channel is still remembered (a day), and must not be trusted.
    slack.addChannel({ id: channel, name: 'secret', isPrivate: true, members: [ADMIN] });
    slack.postUserMessage(channel, ADMIN, 'the price is 40 a share');
    const history = slack.callsTo('conversations.history').length;
    const removed = await ask(LEAVER, 'Summarize this channel again');
    expect(removed.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(removed.replies).toEqual([english.say(notAMember(channel))]);
    expect(slack.callsTo('conversations.history')).toHaveLength(history);
    expect(service.chatRequests()).toHaveLength(1);

    // The assistant view: a thread context without a channel forgets the one viewed before.
    slack.setAgent({ appView: 'assistant' });
    try {
      const started = slack.assistantThreadStartedEvent({ user: ADMIN, viewing: channel });
      const root = (started.assistant_thread as { thread_ts: string }).thread_ts;
      await send(started);
      await send(slack.assistantThreadContextChangedEvent({ user: ADMIN, threadTs: root }));
      const unknown = await ask(ADMIN, 'Summarize this channel', root);
      expect(unknown.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
      expect(unknown.replies.at(-1)).toMatch(/^I do not know which channel you are viewing/);
    } finally {
      slack.setAgent({ appView: 'agent' });
    }
  });
});

describe("naming authors and checking rights within Slack's users.info budget", () => {
  it("40 authors are named from one users.list page, no users.info each; an admin's /settings in the same minute is accepted", async () => {
    const channel = CHANNELS.crowd;
    const texts = AUTHORS.map((a, i) => {
      const text = `note ${i} from ${a.name}`;
      slack.postUserMessage(channel, a.id, text);
      return text;
    });
    // The app's users.info budget is mostly spent this minute (80 of about 100: other lookups).
    for (let i = 0; i < 80; i++) {
      const answer = await fetch(`${slack.apiUrl}users.info?user=${ADMIN}`, {
        headers: { authorization: `Bearer ${slack.botToken}` },
      });
      expect(answer.status).toBe(200);
    }
    const mark = lastSeq();
    await send(slack.appContextChangedEvent({ user: ASKER, viewing: channel }));
    const summary = await ask(ASKER, 'Summarize this channel');
    expect(summary.outcome.ok).toBe(true);
    const sent = service
      .chatRequests()
      .at(-1)!
      .messages.map((m) => m.content);
    expect(sent.slice(1, -1)).toEqual(texts.map((t, i) => `author${i}: ${t}`));
    expect(callsSince('users.info', mark)).toEqual([]);
    expect(callsSince('users.list', mark)).toHaveLength(1);

    const settings = await run('/settings', '', CHANNELS.settings, QUIET_ADMIN);
    expect(settings).toMatchObject({ ok: true, command: 'settings' });
    expect(ephemeralsTo(QUIET_ADMIN, CHANNELS.settings).at(-1)).toBe('Settings of this channel');
    expect(callsSince('users.info', mark)).toEqual([]);
  });

  it('a rights check Slack does not answer says the rights could not be checked (not "for admins only"), and changes nothing; once Slack answers, it is accepted', async () => {
    const admin = 'U0NEWADMIN';
    // Joined after the workspace was listed: the bot asks users.info about them.
    slack.addUser({ id: admin, name: 'erin', isAdmin: true });
    const channel = CHANNELS.settings;
    const before = ephemeralsTo(admin, channel).length;

    slack.failNext('users.info', 'internal_error');
    const failed = await run('/settings', '--system_prompt "Be brief."', channel, admin);
    expect(failed).toMatchObject({ ok: false, errorCode: 'platform_refused' });
    const [told] = ephemeralsTo(admin, channel).slice(before);
    expect(told).toMatch(
      /^I could not check whether you may do this: Slack did not tell me your rights \(internal_error\), so I did nothing\. Try again in a minute\. \(ref [A-Z0-9]{6}\)$/,
    );
    expect(told).not.toContain('for admins only');

    // Slack asks for a wait longer than a user should be kept waiting: said at once, with the wait.
    slack.rateLimitNext('users.info', 1, 30);
    const limited = await run('/settings', '--system_prompt "Be brief."', channel, admin);
    expect(limited).toMatchObject({ ok: false, errorCode: 'platform_refused' });
    expect(ephemeralsTo(admin, channel).at(-1)).toMatch(
      /^I could not check whether you may do this: Slack did not tell me your rights \(ratelimited\), so I did nothing\. Try again in 30 seconds\./,
    );
    expect((await testBot.bot.core.settings.get(`slack:${slack.teamId}:${channel}`)).systemPrompt).toBeUndefined();

    const accepted = await run('/settings', '--system_prompt "Be brief."', channel, admin);
    expect(accepted).toMatchObject({ ok: true });
    expect(ephemeralsTo(admin, channel).at(-1)).toContain('Settings saved.');
  });
});
