import { describe, expect, it } from 'vitest';
import { slackManifest, usageHint } from '../../src/platforms/slack/manifest.ts';
import { parseSlashText } from '../../src/platforms/slack/options.ts';
import { checkOptions } from '../../src/core/command.ts';
import { commands } from '../../commands/index.ts';
import imagine from '../../commands/imagine.ts';

describe('Slack app manifest', () => {
  it('declares every command within Slack\'s limits, with request URLs in HTTP mode', () => {
    const manifest = slackManifest(commands, { requestUrl: 'https://bot.example.com/' });
    const slash = manifest.features!.slash_commands!;
    expect(slash.map((c) => c.command)).toEqual(commands.map((c) => `/${c.name}`));
    for (const entry of slash) {
      expect(entry.command.length).toBeLessThanOrEqual(32);
      expect(entry.description.length).toBeGreaterThan(0);
      expect(entry.description.length).toBeLessThanOrEqual(2000);
      expect(entry.usage_hint!.length).toBeLessThanOrEqual(1000);
      expect(entry.url).toBe('https://bot.example.com/slack/events');
    }
    expect(manifest.settings!.socket_mode_enabled).toBe(false);
    expect(manifest.oauth_config!.scopes!.bot).toEqual(expect.arrayContaining(['commands', 'chat:write', 'files:write']));
  });

  it('has no request URLs and enables Socket Mode when no URL is given', () => {
    const manifest = slackManifest(commands);
    expect(manifest.features!.slash_commands!.every((c) => c.url === undefined)).toBe(true);
    expect(manifest.settings!.socket_mode_enabled).toBe(true);
  });

  it('writes the usage hint the way the adapter parses it: the prompt, then --flags with their choices', () => {
    expect(usageHint(imagine)).toBe(
      '<prompt> [--aspect_ratio square|portrait|landscape] [--style vivid|natural|preview|upscaled] [--model <text>] [--negative_prompt <text>] ' +
        '[--seed <integer>] [--reference_image <https URL or Slack file link>] [--reference_image_url <text>] [--denoising_strength <number>] [--enhance] [--disable_safety_checker]',
    );
    // An invocation written after the hint is understood.
    expect(checkOptions(imagine, parseSlashText(imagine, 'a fox --aspect_ratio portrait --style natural --seed 7 --enhance'))).toEqual({
      prompt: 'a fox',
      aspect_ratio: 'portrait',
      style: 'natural',
      seed: 7,
      enhance: true,
    });
  });
});
