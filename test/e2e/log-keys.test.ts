/**
 * Every log line names each key once (issue 18, item 10). pino writes a child logger's bindings
 * and then the fields of each call as they are: a field the logger is already bound to comes out
 * twice (`"command":"chat","command":"chat"`), which `JSON.parse` hides by keeping the last. The
 * whole bot on Discord and Slack at once (startTestBot, its JSON log lines collected as written)
 * runs /chat on both, mentions on both, answered and refused by the service (and on Discord an
 * image and a refused press of its Reroll, on Slack a refused option and a /settings change),
 * and every line is
 * scanned for a key repeated in any of its objects (test/helpers/json-keys.ts).
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { repeatedKeys } from '../helpers/json-keys.ts';
import type { TestBot } from './harness.ts';

const SLACK_CHANNEL = 'C0LOGKEYS';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  { discord: {}, slack: { channels: [{ id: SLACK_CHANNEL, name: 'log-keys' }] }, bot: {}, resetServiceAfterEach: true },
  (e2e) => {
    ({ service, discord, slack, bot: testBot, botUrl } = e2e);
  },
);

/** A service refusal of the next chat request (400, an OpenAI-style error body). */
function refuseNextChat(): void {
  service.enqueue('chat', {
    status: 400,
    body: { error: { message: 'Not today', type: 'invalid_request_error', param: null, code: null } },
  });
}

/** Runs `start` and resolves with the outcome of the invocation named `command` it started. */
async function finished(command: string, start: () => unknown): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.command === command);
  await start();
  const [outcome] = await done;
  return outcome!;
}

describe('log lines', () => {
  it('the scanner finds a repeated key, at the top level and inside an object', () => {
    expect(repeatedKeys('{"level":30,"command":"chat","ref":"A","command":"chat","msg":"x"}')).toEqual(['command']);
    expect(repeatedKeys('{"err":{"type":"E","type":"F"},"list":[{"a":1},{"a":2}],"s":"\\"a\\":"}')).toEqual([
      'err.type',
    ]);
    expect(repeatedKeys('{"a":{"b":1},"c":{"b":2}}')).toEqual([]);
  });

  it('name each key once, for /chat on Discord and on Slack and mentions on both, answered or refused, a button press and a Slack /settings', async () => {
    const from = testBot.rawLog().split('\n').length;
    const channel = discord.addChannel('log-keys');
    const chatOnDiscord = () =>
      discord.dispatchInteraction({ command: 'chat', options: { prompt: 'hello' }, channelId: channel.id });
    const mentionOnDiscord = () =>
      discord.postUserMessage({ channelId: channel.id, content: `<@${discord.botUser.id}> hello` });
    const chatOnSlack = () =>
      slack.sendSlashCommand(botUrl, { command: '/chat', text: 'hello', channel_id: SLACK_CHANNEL });
    const mentionOnSlack = () =>
      slack.sendEvent(botUrl, slack.mentionEvent({ channel: SLACK_CHANNEL, user: 'U0ALICE', text: 'hello' }));

    const outcomes: Array<Partial<CommandOutcome>> = [];
    for (const [command, start] of [
      ['chat', chatOnDiscord],
      ['mention', mentionOnDiscord],
      ['chat', chatOnSlack],
      ['mention', mentionOnSlack],
    ] as const) {
      const answered = await finished(command, start);
      refuseNextChat();
      const refused = await finished(command, start);
      outcomes.push(
        { platform: answered.platform, ok: answered.ok },
        { platform: refused.platform, errorCode: refused.errorCode },
      );
    }
    // On Discord also an image and another member's press of its Reroll, refused (a button's lines).
    let imagined: FakeInteraction | undefined;
    await finished('imagine', () => {
      imagined = discord.dispatchInteraction({
        command: 'imagine',
        options: { prompt: 'a fox' },
        channelId: channel.id,
      });
    });
    const reroll = imagined!
      .original!.buttons.map((b) => String(b.custom_id))
      .find((id) => id.startsWith('imagine:reroll:'))!;
    const press = await finished('imagine:button', () =>
      discord.pressButton({ messageId: imagined!.original!.id, customId: reroll, user: { id: '1290000000000000777' } }),
    );
    outcomes.push({ platform: press.platform, errorCode: press.errorCode });
    // On Slack also a refused option and a channel setting (lines about the channel it is bound to).
    const badOption = await finished('chat', () =>
      slack.sendSlashCommand(botUrl, { command: '/chat', text: 'hello --temperature 9', channel_id: SLACK_CHANNEL }),
    );
    const settings = await finished('settings', () =>
      slack.sendSlashCommand(botUrl, {
        command: '/settings',
        text: '--chat_model fake-chat',
        channel_id: SLACK_CHANNEL,
      }),
    );
    outcomes.push(
      { platform: badOption.platform, errorCode: badOption.errorCode },
      { platform: settings.platform, ok: settings.ok },
    );
    expect(outcomes).toEqual([
      { platform: 'discord', ok: true },
      { platform: 'discord', errorCode: 'bad_request' },
      { platform: 'discord', ok: true },
      { platform: 'discord', errorCode: 'bad_request' },
      { platform: 'slack', ok: true },
      { platform: 'slack', errorCode: 'bad_request' },
      { platform: 'slack', ok: true },
      { platform: 'slack', errorCode: 'bad_request' },
      { platform: 'discord', errorCode: 'forbidden' },
      { platform: 'slack', errorCode: 'invalid_option' },
      { platform: 'slack', ok: true },
    ]);

    const lines = testBot.rawLog().split('\n').slice(from).filter(Boolean);
    // The lines of those invocations are there (the refusals' included), bound to their references.
    expect(lines.filter((l) => l.includes('"msg":"service call failed"'))).toHaveLength(4);
    expect(lines.filter((l) => l.includes('"msg":"invalid command option"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('"msg":"admin command refused"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('"msg":"channel settings changed"'))).toHaveLength(1);
    // Each line with a repeated key, as `<msg>: <keys>`.
    const repeats = lines
      .map((line) => ({ msg: (JSON.parse(line) as { msg?: string }).msg, keys: repeatedKeys(line) }))
      .filter((r) => r.keys.length > 0)
      .map((r) => `${r.msg}: ${r.keys.join(', ')}`);
    expect(repeats).toEqual([]);
  });
});
