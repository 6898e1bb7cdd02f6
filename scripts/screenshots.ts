/**
 * `npm run screenshots` (issue 39, item 5): what users see, for a person to look at. The bot runs
 * in this process against FakeService, FakeDiscord and FakeSlack (the same fakes as the tests),
 * answers sample questions (scripts/screenshot-samples.ts: Markdown with every construct, a long
 * answer, an image result), and the messages the fakes received, as the bot sent them, are drawn
 * as HTML that imitates each platform's layout (scripts/screenshot-html.ts), then photographed
 * with headless Chromium (Debian's package `chromium`, `CHROMIUM` to use another binary). The
 * PNGs go to docs/screenshots/ (docs/screenshots.md shows them); the HTML pages stay in a
 * temporary folder, named in the output.
 *
 * Slack is shown twice: in a channel where native streaming works (`markdown_text`) and in one
 * where Slack refuses it, where the bot posts and updates the answer itself.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { discordEnv as discordVars, slackEnv as slackVars, startTestBot } from '../test/e2e/harness.ts';
import { FakeDiscord } from '../test/fakes/discord.ts';
import { FakeService } from '../test/fakes/service.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { discordBody, page, type ShownMessage, slackBody } from './screenshot-html.ts';
import { EVERY_CONSTRUCT, IMAGE_PROMPT, LONG_ANSWER } from './screenshot-samples.ts';

const OUT = resolve(import.meta.dirname, '..', 'docs', 'screenshots');
const CHANNELS = { streamed: 'C0STREAMED', posted: 'C0POSTED' } as const;
const ALICE = { id: '450000000000000001', username: 'alice' };

const service = await FakeService.start();
const discord = await FakeDiscord.start({ guild: { channels: ['answers', 'long', 'images', 'errors'] } });
const slack = await FakeSlack.start({
  channels: [
    { id: CHANNELS.streamed, name: 'streamed' },
    { id: CHANNELS.posted, name: 'posted', streaming: false },
  ],
});
const bot = await startTestBot({
  ...discordVars(service, discord),
  ...slackVars(service, slack),
  DEFAULT_CHAT_MODEL: 'fake-chat',
  LOG_LEVEL: 'warn',
  // The samples answer at once: no answer here is long enough to be noticed.
  NOTIFY_AFTER_SECONDS: '0',
});
await discord.waitForReady();
const pages = mkdtempSync(join(tmpdir(), 'genbot-screenshots-'));
const chromium = process.env.CHROMIUM ?? 'chromium';

/**
 * Writes a page and its screenshot (`<name>.png`, 800 px wide, as tall as `height`). Chromium
 * runs beside this process's event loop, which serves the fakes' files the page shows.
 */
async function shoot(name: string, html: string, height: number): Promise<void> {
  const file = join(pages, `${name}.html`);
  writeFileSync(file, html);
  await promisify(execFile)(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${join(pages, 'chromium')}`,
      '--hide-scrollbars',
      `--window-size=808,${height}`,
      `--screenshot=${join(OUT, `${name}.png`)}`,
      `file://${file}`,
    ],
    { timeout: 60_000 },
  );
  process.stdout.write(`docs/screenshots/${name}.png (${file})\n`);
}

/**
 * Runs a Discord /command by alice in a channel (in her client's `locale`, default en-US) and resolves
 * once it finished; returns the bot's messages there, and those only she sees (ephemeral), marked so.
 */
async function discordRun(
  channelName: string,
  command: string,
  options: Record<string, string>,
  locale?: string,
): Promise<ShownMessage[]> {
  const channel = discord.channelList.find((c) => c.name === channelName)!;
  const done = bot.outcomes((o) => o.command === command && o.conversationId.endsWith(`:${channel.id}`), 1, 60_000);
  const interaction = discord.dispatchInteraction({
    command,
    options,
    channelId: channel.id,
    user: ALICE,
    ...(locale ? { locale, guildLocale: locale } : {}),
  });
  await done;
  const asked: ShownMessage = {
    author: 'alice',
    bot: false,
    html: `<span style="color:#949ba4">used /${command} ${Object.entries(options)
      .map(([k, v]) => `${k}: ${v}`)
      .join(' ')}</span>`,
  };
  const answers = discord
    .messagesIn(channel.id)
    .filter((m) => m.author.id === discord.botUser.id && !m.ephemeral && !m.deleted)
    .map((m): ShownMessage => ({ author: 'genbot', bot: true, html: discordBody(m) }));
  // The interaction's messages: its original response and its follow-ups (one message may be both).
  const privately = [...new Map([...interaction.messages, ...interaction.followUps].map((m) => [m.id, m])).values()]
    .filter((m) => m.ephemeral && !m.deleted)
    .map((m): ShownMessage => ({ author: 'genbot', bot: true, html: discordBody(m), ephemeral: true }));
  return [asked, ...answers, ...privately];
}

/** Runs a Slack /command by U0ALICE in a channel; returns the question and the bot's messages in its thread. */
async function slackRun(channel: string, command: string, text: string): Promise<ShownMessage[]> {
  const done = bot.outcomes(
    (o) => o.command === command.slice(1) && o.conversationId.includes(`:${channel}`),
    1,
    60_000,
  );
  const before = slack.messages(channel).length;
  await slack.sendSlashCommand(`http://127.0.0.1:${bot.bot.slack!.port}`, {
    command,
    text,
    channel_id: channel,
    user_id: 'U0ALICE',
  });
  await done;
  return slack
    .messages(channel)
    .slice(before)
    .map(
      (m): ShownMessage => ({
        author: m.user === slack.botUserId ? 'genbot' : 'alice',
        bot: m.user === slack.botUserId,
        html: slackBody(
          m,
          m.files.flatMap((id) => {
            const file = slack.files.get(id);
            return file?.data ? [`data:${file.contentType ?? 'image/png'};base64,${file.data.toString('base64')}`] : [];
          }),
          m.stream?.writes.map((w) => w.text).join(''),
        ),
      }),
    );
}

try {
  mkdirSync(OUT, { recursive: true });
  service.enqueue('chat', { stream: { pieces: [EVERY_CONSTRUCT] } });
  await shoot(
    'discord-markdown',
    page('discord', 'Discord: every construct', await discordRun('answers', 'chat', { prompt: 'plan our boat trip' })),
    1100,
  );
  service.enqueue('chat', { stream: { pieces: [LONG_ANSWER] } });
  await shoot(
    'discord-long',
    page('discord', 'Discord: a long answer', await discordRun('long', 'chat', { prompt: 'why are there two tides?' })),
    1500,
  );
  await shoot(
    'discord-image',
    page('discord', 'Discord: an image result', await discordRun('images', 'imagine', { prompt: IMAGE_PROMPT })),
    900,
  );
  // The service failing (three 500s: the first try and its two retries), told to a German user in German.
  for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 500 });
  await shoot(
    'discord-error-de',
    page(
      'discord',
      'Discord: an error, in German',
      await discordRun('errors', 'chat', { prompt: 'Wie spät ist es?' }, 'de'),
    ),
    200,
  );

  service.enqueue('chat', { stream: { pieces: [EVERY_CONSTRUCT] } });
  await shoot(
    'slack-markdown-streamed',
    page('slack', 'Slack: natively streamed', await slackRun(CHANNELS.streamed, '/chat', 'plan our boat trip')),
    1100,
  );
  service.enqueue('chat', { stream: { pieces: [EVERY_CONSTRUCT] } });
  await shoot(
    'slack-markdown-posted',
    page(
      'slack',
      'Slack: posted without native streaming',
      await slackRun(CHANNELS.posted, '/chat', 'plan our boat trip'),
    ),
    1100,
  );
  service.enqueue('chat', { stream: { pieces: [LONG_ANSWER] } });
  await shoot(
    'slack-long',
    page('slack', 'Slack: a long answer', await slackRun(CHANNELS.posted, '/chat', 'why are there two tides?')),
    1500,
  );
  await shoot(
    'slack-image',
    page('slack', 'Slack: an image result', await slackRun(CHANNELS.posted, '/imagine', IMAGE_PROMPT)),
    900,
  );
} finally {
  await bot.stop();
  await Promise.all([discord.close(), slack.close(), service.close()]);
}
process.exit(0);
