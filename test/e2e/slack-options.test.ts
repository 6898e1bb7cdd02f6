/**
 * End-to-end tests of issue 8 on Slack: every service option in users' hands (`--option value`
 * after /chat and /imagine, attachments as Slack file links), `/<command> help`, and the admin
 * commands (/models, /settings, /forget) plus /usage — through the whole bot (startTestBot),
 * real @slack/bolt against the fake Slack (test/fakes/slack.ts) and the fake service
 * (test/fakes/service.ts).
 *
 * One bot, one FakeSlack and one FakeService serve the whole file (the /settings test restarts
 * the bot on the same store); every test uses its own channel. U0ALICE is a workspace admin
 * (users.info `is_admin`), U0BOB and U0CAROL are not.
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { descriptionIn } from '../../src/core/command-words.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { estimateMessageTokens, estimateTextTokens } from '../../src/core/tokens.ts';
import { DEFAULT_MODELS, type FakeModel, type FakeService } from '../fakes/service.ts';
import { DEFAULT_USERS, type FakeSlack, type ResponseUrlPost, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import { slackImaginePosts } from '../helpers/imagine-posts.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';
import { answersIn, shownMarkdown } from './slack-checks.ts';

const CHANNELS = {
  options: 'C0OPTIONS',
  badOptions: 'C0BADOPTIONS',
  chatImage: 'C0CHATIMAGE',
  imagine: 'C0IMAGINE',
  safety: 'C0SAFETY',
  help: 'C0HELP',
  helpJa: 'C0HELPJA',
  models: 'C0MODELS',
  settings: 'C0SETTINGS',
  forget: 'C0FORGET',
  usage: 'C0USAGE',
} as const;

const ADMIN = 'U0ALICE';
const MEMBER = 'U0BOB';
/** A member who does nothing before the /usage test. */
const FRESH = 'U0CAROL';
/** A member whose Slack is in Japanese (users.info's `locale` with include_locale). */
const HANA = 'U0HANA';

/** 60 text models: the fake's two, then 58 more. */
const TEXT_MODELS = [
  'fake-chat',
  'fake-vision',
  ...Array.from({ length: 58 }, (_, i) => `text-model-${String(i + 3).padStart(2, '0')}`),
];
const MODELS: FakeModel[] = [
  ...DEFAULT_MODELS.filter((m) => m.type !== 'image'),
  ...TEXT_MODELS.slice(2).map((id) => ({ id, owned_by: 'fake-service' })),
  ...DEFAULT_MODELS.filter((m) => m.type === 'image'),
];

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

/** What every bot of this file sets besides the variables pointing it at the fakes. */
const BOT_ENV = {
  DEFAULT_VISION_MODEL: 'fake-vision',
  ALLOW_DISABLE_SAFETY_CHECKER: 'true',
  // Quotas on (generous): /usage counts members' requests against them; admins are exempt.
  QUOTA_CHAT_PER_MINUTE: '100',
  QUOTA_IMAGES_PER_DAY: '100',
};

/** The environment an operator would set, pointed at the fakes (HTTP mode). */
const env = () => ({ ...slackEnv(service, slack), ...BOT_ENV });

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}`, models: MODELS, allowDisableSafetyChecker: true },
    slack: {
      channels: slackChannels(CHANNELS),
      users: [...DEFAULT_USERS, { id: FRESH, name: 'carol' }, { id: HANA, name: 'hana', locale: 'ja-JP' }],
    },
    // The /settings test restarts the bot into testBot.
    bot: { env: BOT_ENV, current: () => testBot },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Sends a signed slash command as `user` (default the admin), checks Slack's 3 s ack rule, and waits until the bot finished it. */
async function run(command: string, text: string, channel: string, user = ADMIN): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`)).then(([outcome]) => outcome!);
  const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: channel, user_id: user });
  expect(ack.failure).toBeUndefined();
  expect(ack.ackedInTime).toBe(true);
  return done;
}

/** Polls until `check` holds. @throws Error after `timeoutMs`. */
async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Post = ResponseUrlPost & { command: string; channel: string; user: string };

/** The response_url posts of the commands sent in `channel`, in order. */
const postsIn = (channel: string): Post[] => slack.responsePosts().filter((p) => p.channel === channel);

/** The mrkdwn / plain texts of Block Kit blocks (headers, sections, context elements). */
function blockTexts(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block: { text?: { text?: unknown }; elements?: Array<{ text?: unknown }> }) =>
    [block.text?.text, ...(block.elements ?? []).map((e) => e.text)].filter((t): t is string => typeof t === 'string'),
  );
}

/** What a user reads in a post: the text and every block's text, unescaped. */
const readable = (post: { text: string; body: Record<string, unknown> }) =>
  unescapeSlack([post.text, ...blockTexts(post.body.blocks)].join('\n'));

/** The one ephemeral answer of the last command in `channel` (checked to be ephemeral and accepted). */
function lastEphemeral(channel: string): string {
  const post = postsIn(channel).at(-1)!;
  expect(post).toMatchObject({ status: 200, responseType: 'ephemeral' });
  return readable(post);
}

/** Counts of service requests by route. */
const countOf = (route: 'chat' | 'images') =>
  service.requests.filter((r) => r.route === route && r.method === 'POST').length;

/** The text of the last user message of a chat request. */
const lastUserText = (body: { messages: Array<{ content: unknown }> }) => body.messages.at(-1)!.content;

describe('Slack: service options, help and admin commands end to end', () => {
  it("/chat sends --model --temperature --max_tokens --top_p --frequency_penalty --presence_penalty --json --web_search with the spec's field names", async () => {
    const channel = CHANNELS.options;
    const outcome = await run(
      '/chat',
      'Name a colour --model fake-vision --temperature 0.3 --max_tokens 50 --top_p 0.9 --frequency_penalty 0.5 --presence_penalty -1.5 --json --web_search auto',
      channel,
    );
    expect(outcome).toMatchObject({ ok: true, command: 'chat' });
    const body = service.chatRequests().at(-1)!;
    expect(body).toMatchObject({
      model: 'fake-vision',
      temperature: 0.3,
      max_tokens: 50,
      top_p: 0.9,
      frequency_penalty: 0.5,
      presence_penalty: -1.5,
      response_format: 'json',
      web_search: 'auto',
      stream: true,
    });
    expect(body.messages).toEqual([{ role: 'user', content: 'Name a colour' }]);
    // JSON mode: the answer ({"echo": …} from the fake) is shown pretty-printed in a fence.
    const [message] = answersIn(slack, channel);
    expect(shownMarkdown(message!)).toBe('```json\n{\n  "echo": "Name a colour"\n}\n```');
    // Its notification text is mrkdwn, where a fence has no language.
    expect(unescapeSlack(message!.text)).toBe('```\n{\n  "echo": "Name a colour"\n}\n```');

    // Nothing given: none of the optional fields is sent (the server's defaults apply).
    await run('/chat', 'plain question', channel);
    const plain = service.chatRequests().at(-1)!;
    expect(Object.keys(plain).sort()).toEqual(['messages', 'model', 'stream']);
    expect(plain.model).toBe('fake-chat');

    // `--json false` and `--web_search off` send nothing either; an em dash from a phone is `--`.
    await run('/chat', 'another one —json false --web_search off —temperature 1.25', channel);
    const explicit = service.chatRequests().at(-1)!;
    expect(explicit).not.toHaveProperty('response_format');
    expect(explicit).not.toHaveProperty('web_search');
    expect(explicit).toMatchObject({ temperature: 1.25 });
    expect(lastUserText(explicit)).toBe('another one');
    expect(postsIn(channel)).toEqual([]);
  });

  it('an out-of-range or unknown /chat option gets one ephemeral sentence naming it and no service request', async () => {
    const channel = CHANNELS.badOptions;
    const chatsBefore = countOf('chat');

    const hot = await run('/chat', 'too hot --temperature 3', channel);
    expect(hot).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`temperature` must be from 0 to 2.');

    const long = await run('/chat', 'too long --max_tokens 5000', channel);
    expect(long).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`max_tokens` must be from 1 to 4096.');

    const penalty = await run('/chat', 'penalised --presence_penalty -2.5', channel);
    expect(penalty).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`presence_penalty` must be from -2 to 2.');

    const mode = await run('/chat', 'search --web_search always', channel);
    expect(mode).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`web_search` must be one of `off`, `auto`, `force`, `images`.');

    const unknown = await run('/chat', 'a typo --temprature 1 and --seed 4', channel);
    expect(unknown).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    const sentence = lastEphemeral(channel);
    expect(sentence).toContain('/chat has no option `--temprature`.');
    expect(sentence).toContain('`--seed` is an option of /imagine, not /chat.');
    expect(sentence).toContain('`--temperature <number>`');
    expect(sentence).toContain('`/chat help` shows them');

    expect(countOf('chat')).toBe(chatsBefore);
    expect(postsIn(channel).map((p) => [p.responseType, p.status])).toEqual(Array(5).fill(['ephemeral', 200]));
    expect(slack.messages(channel)).toEqual([]);
    expect(testBot.logs.filter((l) => l.channel === channel && l.msg === 'invalid command option')).toHaveLength(5);
  });

  it('/chat --image <Slack file permalink> downloads the PNG with the bot token and sends it as an image_url data URL', async () => {
    const channel = CHANNELS.chatImage;
    // Half-transparent, so it stays a PNG (an opaque image is sent as JPEG).
    const png = await sharp({
      create: { width: 64, height: 48, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 0.5 } },
    })
      .png()
      .toBuffer();
    const file = slack.addUserFile({ name: 'red-square.png', mimetype: 'image/png', data: png, user: ADMIN });
    expect(file.permalink).toMatch(/\/files\/U0ALICE\/F[0-9A-F]+\/red-square\.png$/);

    const outcome = await run('/chat', `What colour is this? --image ${file.permalink}`, channel);
    expect(outcome).toMatchObject({ ok: true });

    const body = service.chatRequests().at(-1)!;
    // Without --model, a request with an image goes to the vision model (DEFAULT_VISION_MODEL).
    expect(body.model).toBe('fake-vision');
    const [text, image, ...more] = body.messages.at(-1)!.content as Array<{
      type: string;
      text?: string;
      image_url?: { url: string };
    }>;
    expect(more).toEqual([]);
    expect(text).toEqual({ type: 'text', text: 'What colour is this?' });
    expect(image!.type).toBe('image_url');
    const url = image!.image_url!.url;
    expect(url).toMatch(/^data:image\/png;base64,/);
    const sent = await sharp(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64')).metadata();
    expect(sent).toMatchObject({ format: 'png', width: 64, height: 48 });

    // Looked up by id (files.info), then its bytes fetched with the bot token.
    expect(slack.callsTo('files.info').some((c) => c.params.file === file.id && c.ok && c.tokenType === 'bot')).toBe(
      true,
    );
    expect(slack.downloads.filter((d) => d.fileId === file.id)).toMatchObject([
      { authorized: true, status: 200, completed: true, bytesSent: png.length },
    ]);
    expect(unescapeSlack(slack.messages(channel).at(-1)!.text)).toBe('Echo: What colour is this?');
    // The history keeps a note of the image, never its bytes.
    const history = await testBot.bot.core.history.get(outcome.conversationId);
    expect(history.map((m) => m.content)).toEqual([
      'What colour is this?\n[1 image: red-square.png]',
      'Echo: What colour is this?',
    ]);
  });

  it('/imagine maps --aspect_ratio --style --model --negative_prompt --seed --denoising_strength --enhance --reference_image_url to the request, and the caption names the seed', async () => {
    const channel = CHANNELS.imagine;
    const outcome = await run(
      '/imagine',
      'a lighthouse at dusk --aspect_ratio portrait --style natural --model "Fake Image XL" --negative_prompt "people, boats" --seed 42 ' +
        '--denoising_strength 0.4 --enhance --reference_image_url https://example.com/photos/ref.png',
      channel,
    );
    expect(outcome).toMatchObject({ ok: true, command: 'imagine' });
    expect(service.lastRequest('images')!.body).toEqual({
      prompt: 'a lighthouse at dusk',
      aspect_ratio: 'portrait',
      style: 'natural',
      user_selected_model: 'Fake Image XL',
      negative_prompt: 'people, boats',
      seed: 42,
      reference_image_url: 'https://example.com/photos/ref.png',
      denoising_strength: 0.4,
      force_prompt_enhancement: true,
      response_format: 'b64_json',
    });
    const { shared, buttonsLine } = slackImaginePosts(slack.messages(channel));
    const caption = unescapeSlack(shared.text);
    expect(caption).toContain('a lighthouse at dusk');
    expect(caption).toContain('Fake Image XL · natural · 832×1216 · seed 42 · reference, denoising 0.4');
    const file = slack.files.get(shared.files[0]!)!;
    expect(await sharp(file.data!).metadata()).toMatchObject({ format: 'png', width: 832, height: 1216 });
    expect(buttonsLine.blocks).toBeDefined();

    // Defaults: square, no optional field; denoising without a reference is not sent, and said so.
    await run('/imagine', 'a plain fox --denoising_strength 0.3', channel);
    expect(service.lastRequest('images')!.body).toEqual({
      prompt: 'a plain fox',
      aspect_ratio: 'square',
      response_format: 'b64_json',
    });
    const caption2 = unescapeSlack(slackImaginePosts(slack.messages(channel).slice(-2)).shared.text);
    expect(caption2).toContain('default model · vivid · 1024×1024 · seed random');
    expect(caption2).toContain('`denoising_strength` was not used');
  });

  it("/imagine refuses bad values and --disable_safety_checker from a non-admin with a sentence and no service request; an admin's reaches the service", async () => {
    const channel = CHANNELS.safety;
    const imagesBefore = countOf('images');

    const refused = await run('/imagine', 'anything goes --disable_safety_checker', channel, MEMBER);
    expect(refused).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(lastEphemeral(channel)).toBe('`disable_safety_checker` is for admins only.');
    // Asked Slack who the member is (users.info is_admin false).
    expect(slack.callsTo('users.info').some((c) => c.params.user === MEMBER && c.ok)).toBe(true);

    const seed = await run('/imagine', 'a fox --seed 4294967296', channel, MEMBER);
    expect(seed).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`seed` must be from 0 to 4294967295.');

    const strength = await run(
      '/imagine',
      'a fox --denoising_strength 1.5 --reference_image_url https://example.com/a.png',
      channel,
      MEMBER,
    );
    expect(strength).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toBe('`denoising_strength` must be from 0 to 1.');

    const notUrl = await run('/imagine', 'a fox --reference_image_url ftp://example.com/a.png', channel, MEMBER);
    expect(notUrl).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toMatch(/^`reference_image_url` must be an http\(s\) address/);

    const enhance = await run('/imagine', 'a fox --enhance maybe', channel, MEMBER);
    expect(enhance).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toContain('`--enhance maybe`: `--enhance` takes true or false');

    expect(countOf('images')).toBe(imagesBefore);
    expect(slack.messages(channel)).toEqual([]);

    const allowed = await run('/imagine', 'anything goes --disable_safety_checker', channel, ADMIN);
    expect(allowed).toMatchObject({ ok: true });
    expect(service.lastRequest('images')!.body).toMatchObject({
      prompt: 'anything goes',
      disable_safety_checker: true,
    });
  });

  it('`/imagine help` for a user whose Slack is in Japanese (`ja-JP`) is in Japanese: the command, every option, its values and ranges, the footer', async () => {
    const channel = CHANNELS.helpJa;
    const ja = wordsOf('ja');
    await slack.sendSlashCommand(botUrl, { command: '/imagine', text: 'help', channel_id: channel, user_id: HANA });
    await waitFor(() => postsIn(channel).length === 1, 'the /imagine help');
    const help = lastEphemeral(channel);
    const imagine = commands.find((c) => c.name === 'imagine')!;
    expect(help).toContain(`/imagine：${ja.t('commands.command.imagine.description')}`);
    for (const option of imagine.options.filter((o) => o.name !== 'prompt'))
      expect(help, option.name).toContain(descriptionIn(option, ja));
    expect(help).toContain('square (正方形), portrait (縦長), landscape (横長) のいずれか');
    expect(help).toContain('0～4294967295');
    expect(help).toContain('モデル：');
    expect(help).toContain(ja.t('commands.help.slack_footer'));
    expect(help).toContain('例：');
    expect(help).not.toContain('Generate an image');
    expect(help).not.toContain('Examples:');
  });

  it('`/chat help` and `/imagine help` list every option with its range or values and the live model choices, only to the asker', async () => {
    const channel = CHANNELS.help;
    const chatsBefore = countOf('chat');

    // Help is no command run (no command.done): wait for its answer.
    expect(
      (await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'help', channel_id: channel, user_id: MEMBER }))
        .ackedInTime,
    ).toBe(true);
    await waitFor(() => postsIn(channel).length === 1, 'the /chat help');
    const chatHelp = lastEphemeral(channel);
    expect(chatHelp).toContain('/chat: Ask the language model');
    for (const form of [
      '--model <text>',
      '--image <https URL or Slack file link>',
      '--web_search off|auto|force|images',
      '--json',
      '--temperature <number>',
      '--max_tokens <integer>',
      '--top_p <number>',
      '--frequency_penalty <number>',
      '--presence_penalty <number>',
    ]) {
      expect(chatHelp).toContain(form);
    }
    expect(chatHelp).toContain('from 0 to 2');
    expect(chatHelp).toContain('from -2 to 2');
    // The service's text models, the first 25 by name and the rest counted.
    expect(chatHelp).toContain(`models: ${TEXT_MODELS.slice(0, 25).join(', ')}, and 35 more`);
    expect(chatHelp).not.toContain(TEXT_MODELS[25]!);
    expect(chatHelp).toContain('/chat Write a haiku about rain --temperature 1.2 --max_tokens 60');

    expect(
      (
        await slack.sendSlashCommand(botUrl, {
          command: '/imagine',
          text: '--help',
          channel_id: channel,
          user_id: MEMBER,
        })
      ).ackedInTime,
    ).toBe(true);
    await waitFor(() => postsIn(channel).length === 2, 'the /imagine help');
    const imagineHelp = lastEphemeral(channel);
    for (const form of [
      '--aspect_ratio square|portrait|landscape',
      '--style',
      '--model <text>',
      '--negative_prompt <text>',
      '--seed <integer>',
      '--reference_image <https URL or Slack file link>',
      '--reference_image_url <text>',
      '--denoising_strength <number>',
      '--enhance',
      '--disable_safety_checker',
    ]) {
      expect(imagineHelp).toContain(form);
    }
    expect(imagineHelp).toContain('from 0 to 4294967295');
    expect(imagineHelp).toContain('from 0 to 1');
    // Image models by display name (what user_selected_model takes), from /v1/images/available-models.
    expect(imagineHelp).toContain('models: Fake Image, Fake Image XL');

    expect(countOf('chat')).toBe(chatsBefore);
    expect(slack.messages(channel)).toEqual([]);
  });

  it('/models shows an admin all 60 text models in Block Kit messages of at most 50 blocks each; a non-admin is refused', async () => {
    const channel = CHANNELS.models;
    const outcome = await run('/models', '', channel, ADMIN);
    expect(outcome).toMatchObject({ ok: true, command: 'models' });
    const posts = postsIn(channel);
    expect(posts.length).toBeGreaterThanOrEqual(2);
    for (const post of posts) {
      // Accepted by the fake, which refuses invalid blocks (more than 50 among them).
      expect(post).toMatchObject({ status: 200, responseType: 'ephemeral' });
      expect(Array.isArray(post.body.blocks)).toBe(true);
      expect((post.body.blocks as unknown[]).length).toBeLessThanOrEqual(50);
    }
    const shown = posts.map(readable).join('\n');
    for (const id of TEXT_MODELS) expect(shown).toContain(`*${id}*`);
    expect(shown).toContain('Fake Image XL');
    expect(readable(posts[0]!)).toMatch(/Models: 60 text, \d+ image/);
    expect(readable(posts.at(-1)!)).toContain(`Page ${posts.length} of ${posts.length}`);
    expect(slack.messages(channel)).toEqual([]);
    // Admin rights come from Slack: users.info says is_admin.
    expect(slack.callsTo('users.info').some((c) => c.params.user === ADMIN && c.ok)).toBe(true);

    const refused = await run('/models', '', channel, MEMBER);
    expect(refused).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(lastEphemeral(channel)).toBe('/models is for admins only.');
    expect(postsIn(channel).filter((p) => p.user === MEMBER)).toHaveLength(1);
  });

  it('/settings: an admin sets the chat model and system prompt, /chat uses them, /settings shows each value and its source, and they survive a restart; a non-admin is refused', async () => {
    const channel = CHANNELS.settings;
    const saved = await run('/settings', '--chat_model text-model-42 --system_prompt "Answer in French."', channel);
    expect(saved).toMatchObject({ ok: true, command: 'settings' });
    const card = lastEphemeral(channel);
    expect(card).toContain('Settings saved.');
    expect(card).toContain('`text-model-42` — set for this channel');

    await run('/chat', 'Which model are you?', channel);
    expect(service.chatRequests().at(-1)).toMatchObject({
      model: 'text-model-42',
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Which model are you?' },
      ],
    });

    const unknown = await run('/settings', '--chat_model text-model-99', channel);
    expect(unknown).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(lastEphemeral(channel)).toMatch(/^`chat_model`: the service lists no text model `text-model-99`\. Try /);

    // Words that are not `--options` are not dropped silently: the admin is told how to write them
    // (the Discord form `chat_model:<id>` is a likely mistake), and nothing changes.
    const discordForm = await run('/settings', 'chat_model:text-model-05', channel);
    expect(discordForm).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    const told = lastEphemeral(channel);
    expect(told).toContain(
      '/settings takes no text, only options: `chat_model:text-model-05` is not one; write `--chat_model <text>`.',
    );

    const shownBefore = await run('/settings', '', channel);
    expect(shownBefore.ok).toBe(true);
    const show = lastEphemeral(channel);
    expect(show).not.toContain('Settings saved.');
    expect(show).toContain('*chat_model*\n`text-model-42` — set for this channel');
    expect(show).toContain("*vision_model*\n`fake-vision` — the bot's default");
    expect(show).toMatch(/\*image_model\*\n.*— the service's choice/);
    expect(show).toContain('*system_prompt*\nAnswer in French. — set for this channel');
    // How to change them, written the Slack way.
    expect(show).toContain('Change with /settings --chat_model <id>');

    // A member may neither read nor change them.
    for (const text of ['', '--chat_model fake-chat']) {
      const refused = await run('/settings', text, channel, MEMBER);
      expect(refused).toMatchObject({ ok: false, errorCode: 'forbidden' });
      expect(lastEphemeral(channel)).toBe('/settings is for admins only.');
    }

    // A restart on the same store: the channel keeps its settings.
    const { storePath } = testBot;
    await testBot.stop();
    testBot = await startTestBot(env(), storePath);
    botUrl = `http://127.0.0.1:${testBot.bot.slack!.port}`;

    await run('/chat', 'Still there?', channel);
    const afterRestart = service.chatRequests().at(-1)!;
    expect(afterRestart.model).toBe('text-model-42');
    expect(afterRestart.messages[0]).toEqual({ role: 'system', content: 'Answer in French.' });
    expect(afterRestart.messages.at(-1)).toEqual({ role: 'user', content: 'Still there?' });
    await run('/settings', '', channel);
    expect(lastEphemeral(channel)).toContain('*chat_model*\n`text-model-42` — set for this channel');

    // Reset: back to the service's first model.
    await run('/settings', '--reset all', channel);
    expect(lastEphemeral(channel)).toContain("*chat_model*\n`fake-chat` — the service's choice");
    await run('/chat', 'And now?', channel);
    expect(service.chatRequests().at(-1)!.model).toBe('fake-chat');
    expect(service.chatRequests().at(-1)!.messages[0]!.role).toBe('user');
  });

  it("/forget: an admin clears a channel's history, a member is refused there, and anyone may in a DM", async () => {
    const channel = CHANNELS.forget;
    await run('/chat', 'My name is Ada.', channel);
    await run('/chat', 'I like owls.', channel, MEMBER);

    const refused = await run('/forget', '', channel, MEMBER);
    expect(refused).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(lastEphemeral(channel)).toBe('/forget in a channel is for admins. In a DM with the bot anyone may use it.');
    expect(await testBot.bot.core.history.get(refused.conversationId)).toHaveLength(4);

    const cleared = await run('/forget', '', channel, ADMIN);
    expect(cleared).toMatchObject({ ok: true, command: 'forget' });
    // Said in the channel, so that everyone knows the bot starts afresh.
    expect(unescapeSlack(slack.messages(channel).at(-1)!.text)).toMatch(/^🧹 History cleared \(4 messages forgotten\)/);

    await run('/chat', 'What is my name?', channel);
    expect(service.chatRequests().at(-1)!.messages).toEqual([{ role: 'user', content: 'What is my name?' }]);

    // In a DM with the bot, a member may.
    const dm = slack.openIm(MEMBER).id;
    await run('/chat', 'Remember the number 7.', dm, MEMBER);
    await run('/chat', 'Which number?', dm, MEMBER);
    expect(service.chatRequests().at(-1)!.messages).toHaveLength(3);
    const dmCleared = await run('/forget', '', dm, MEMBER);
    expect(dmCleared).toMatchObject({ ok: true });
    expect(unescapeSlack(slack.messages(dm).at(-1)!.text)).toMatch(/^🧹 History cleared \(4 messages forgotten\)/);
    await run('/chat', 'Which number now?', dm, MEMBER);
    expect(service.chatRequests().at(-1)!.messages).toEqual([{ role: 'user', content: 'Which number now?' }]);
  });

  it('/usage for a member whose Slack is in Japanese is in Japanese, only to them', async () => {
    const channel = CHANNELS.helpJa;
    const outcome = await run('/usage', '', channel, HANA);
    expect(outcome).toMatchObject({ ok: true, command: 'usage' });
    const usage = lastEphemeral(channel);
    const ja = wordsOf('ja');
    expect(usage).toContain(ja.t('commands.usage.title'));
    expect(usage).toContain(`*${ja.t('commands.usage.chat_requests')}*\nこの 1 分間 0 / 100`);
    expect(usage).toContain(`*${ja.t('commands.usage.images')}*\n今日 0 / 100`);
    expect(usage).toContain(ja.t('commands.usage.footer_quotas'));
    expect(usage).not.toContain('Your use');
  });

  it('/usage shows a member their own use after a /chat and an /imagine, only to them', async () => {
    const channel = CHANNELS.usage;
    await run('/chat', 'How much is this costing?', channel, FRESH);
    const body = service.chatRequests().at(-1)!;
    const answer = unescapeSlack(slack.messages(channel).at(-1)!.text);
    // The fake streams no `usage`: the bot estimates (about 4 characters a token).
    const tokens = estimateMessageTokens(body.messages) + estimateTextTokens(answer);
    await run('/imagine', 'a piggy bank', channel, FRESH);

    const outcome = await run('/usage', '', channel, FRESH);
    expect(outcome).toMatchObject({ ok: true, command: 'usage' });
    const usage = lastEphemeral(channel);
    expect(usage).toContain('Your use');
    expect(usage).toMatch(/\*chat requests\*\n1 of 100 this minute \(resets in \d+ s\)/);
    expect(usage).toMatch(/\*images\*\n1 of 100 today \(resets in 2\d h \d+ min\)/);
    expect(usage).toMatch(new RegExp(`\\*tokens\\*\\n${tokens} today \\(resets in`));
    expect(usage).toContain('Limits reset when each window rolls over.');
    expect(postsIn(channel).at(-1)!.user).toBe(FRESH);
    // Nothing public from /usage: the /chat's question and answer, the image and its buttons line only.
    expect(slack.messages(channel)).toHaveLength(4);

    // An admin is told that the quotas do not hold them.
    await run('/usage', '', channel, ADMIN);
    expect(lastEphemeral(channel)).toContain('As an admin you are not held to the quotas.');
  });
});
