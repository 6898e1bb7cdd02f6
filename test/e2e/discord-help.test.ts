/**
 * End-to-end on Discord (issue 19, item 7): `/help` lists every command of commands/index.ts
 * with each of its options (ranges and choices) and the service's models, to the invoker alone,
 * within Discord's limits (the fake refuses an embed of more than 25 fields, a field value over
 * 1,024 characters, embeds over 6,000 characters in a message, content over 2,000). The whole
 * bot (startTestBot), real discord.js, commands registered by deployCommands.
 */
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/index.ts';
import { rangeOf } from '../../src/core/command.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeMessage, Json } from '../fakes/discord.ts';
import { DEFAULT_MODELS, type FakeModel } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** 60 text models (the fake's two and 58 more): more than one field can list. */
const MODELS: FakeModel[] = [
  ...DEFAULT_MODELS.filter((m) => m.type !== 'image'),
  ...Array.from({ length: 58 }, (_, i) => ({ id: `a-rather-long-text-model-name-${String(i + 1).padStart(2, '0')}` })),
  ...DEFAULT_MODELS.filter((m) => m.type === 'image'),
];

let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ service: { models: MODELS }, discord: {}, bot: {} }, async (e2e) => {
  ({ discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

/** Everything a user reads in a message: its content, and each embed's title, description, fields and footer. */
function readable(message: FakeMessage): string {
  const embeds = message.embeds.map((e: Json) =>
    [
      e.title,
      e.description,
      ...((e.fields ?? []) as Json[]).flatMap((f) => [f.name, f.value]),
      (e.footer as Json | undefined)?.text,
    ]
      .filter((t) => typeof t === 'string')
      .join('\n'),
  );
  return [message.content, ...embeds].join('\n');
}

describe('/help on Discord', () => {
  it('is registered with the other commands, derived from commands/', () => {
    expect(discord.commands.filter((c) => c.type === 1).map((c) => c.name)).toEqual(commands.map((c) => c.name));
    expect(commands.map((c) => c.name)).toContain('help');
  });

  it('lists every command, each option with its range and choices, and the models, ephemerally and within the limits', async () => {
    const channel = discord.addChannel('help');
    const done = testBot.outcomes((o) => o.command === 'help');
    const interaction = discord.dispatchInteraction({ channelId: channel.id, command: 'help' });
    expect((await done)[0]).toMatchObject({ ok: true });
    const refused = discord.requests.filter((r) => r.path.includes(interaction.token) && r.status >= 400);
    expect(refused).toEqual([]);
    const messages = interaction.messages.filter((m) => !m.deleted);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) {
      expect(message.ephemeral).toBe(true);
      expect(message.content.length).toBeLessThanOrEqual(2000);
      expect(message.embeds.length).toBeLessThanOrEqual(10);
      let chars = 0;
      for (const embed of message.embeds) {
        const fields = (embed.fields ?? []) as Json[];
        expect(fields.length).toBeLessThanOrEqual(25);
        for (const f of fields) expect(String(f.value).length).toBeLessThanOrEqual(1024);
        chars += readable({ ...message, content: '', embeds: [embed] } as FakeMessage).replace(/\n/g, '').length;
      }
      expect(chars).toBeLessThanOrEqual(6000);
    }
    const embeds = messages.flatMap((m) => m.embeds);
    for (const command of commands) {
      // One embed per command, titled with it, a field per option.
      const embed = embeds.find((e) => String(e.title).startsWith(`/${command.name}`));
      expect(embed, `/${command.name}`).toBeDefined();
      const text = readable({ ...messages[0]!, content: '', embeds: [embed!] } as FakeMessage);
      expect(text).toContain(command.description);
      for (const option of command.options) {
        const field = ((embed!.fields ?? []) as Json[]).find((f) => String(f.name).startsWith(option.name));
        expect(field, `/${command.name} ${option.name}`).toBeDefined();
        expect(String(field!.value)).toContain(option.description);
        const range = rangeOf(option);
        if (range) expect(String(field!.value)).toContain(range);
        for (const choice of option.choices ?? []) expect(String(field!.value)).toContain(String(choice.value));
      }
    }
    // The models: every text and image model is named somewhere, however many there are.
    const all = messages.map(readable).join('\n');
    for (const model of MODELS) expect(all).toContain(model.type === 'image' ? (model.id as string) : model.id);
  });
});
