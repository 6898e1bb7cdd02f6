/**
 * The documentation against the code (issue 44): the operator guide names every variable of the
 * configuration schema (and of .env.example), the user guide every command, option, Slack
 * subcommand, message action, shortcut and button, the README stays a front page with its two
 * commands on the first screen, and every relative link of README.md and docs/*.md resolves to a
 * file (and, for a Markdown file, to a heading when it names one).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import { envSchema } from '../../src/config-env.ts';
import { asksToForget } from '../../src/core/features/forget.ts';
import { mainOptionOf } from '../../src/core/option-forms.ts';
import { slackShortcutsOf } from '../../src/platforms/slack/message-actions.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const operatorGuide = read('docs/operator-guide.md');
const userGuide = read('docs/user-guide.md');
const readme = read('README.md');

/** The lines of a Markdown text outside fenced code blocks (``` or ~~~), with their text. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/**
 * GitHub's anchor of each heading of a Markdown text: lowercased, every character but letters,
 * digits, spaces, `-` and `_` dropped, spaces as `-`; a repeated one gets `-1`, `-2`, ….
 */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The relative link targets (`[text](target)`, images included) of a Markdown text, outside code (blocks and spans). */
function relativeLinksOf(markdown: string): string[] {
  const links: string[] = [];
  for (const line of proseLines(markdown))
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  return links;
}

describe('the operator guide names every variable', () => {
  it('every variable of the configuration schema (envSchema) appears in docs/operator-guide.md', () => {
    const missing = Object.keys(envSchema.shape).filter((name) => !operatorGuide.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('every variable of .env.example appears in docs/operator-guide.md', () => {
    const names = [...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((name) => !operatorGuide.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('the user guide names every command, option, action and button', () => {
  it('every slash command, with each option as Discord writes it (`name:`) and as Slack does (`--name`)', () => {
    const missing: string[] = [];
    for (const command of commands) {
      if (!userGuide.includes(`\`/${command.name}`)) missing.push(`/${command.name}`);
      const main = mainOptionOf(command);
      for (const option of command.options) {
        if (!new RegExp(`\\b${option.name}:`).test(userGuide)) missing.push(`/${command.name} ${option.name}:`);
        if (option !== main && !userGuide.includes(`--${option.name}`))
          missing.push(`/${command.name} --${option.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("Slack's subcommands: `/<command> help`, and the choice words of a command whose only option has choices (`/forget me`)", () => {
    expect(userGuide).toContain('`/<command> help`');
    const words = commands.flatMap((command) =>
      command.options.length === 1 && !mainOptionOf(command)
        ? (command.options[0]!.choices ?? []).map((c) => `/${command.name} ${String(c.value)}`)
        : [],
    );
    expect(words).toContain('/forget me');
    expect(words.filter((word) => !userGuide.includes(`\`${word}\``))).toEqual([]);
  });

  it("every message action (Discord's Apps menu) and every Slack message shortcut, by the name the menu shows", () => {
    const names = [...messageActions.map((a) => a.name), ...slackShortcutsOf(messageActions).map((s) => s.name)];
    expect(names).toContain('Forget this thread');
    expect(names.filter((name) => !userGuide.includes(`**${name}**`))).toEqual([]);
  });

  it("every button, by the English catalog's label (the emoji aside)", () => {
    const answers = JSON.parse(read('src/core/i18n/locales/en/answers.json'));
    const commandWords = JSON.parse(read('src/core/i18n/locales/en/commands.json'));
    const labels = [
      answers.stop.button,
      answers.regenerate.button,
      answers.imagine.reroll,
      answers.imagine.upscale,
      answers.imagine.vary,
      answers.feedback.add_reason,
      commandWords.home_export.button,
    ].map((label: string) => label.replace(/^[^\p{L}]+/u, ''));
    expect(labels).toContain('Regenerate');
    expect(labels.filter((label) => !userGuide.includes(label))).toEqual([]);
  });

  it('the mention that forgets a Slack thread, as the bot reads it', () => {
    expect(asksToForget('forget')).toBe(true);
    expect(userGuide).toContain('`@genbot forget`');
  });
});

describe('the README as a front page', () => {
  const firstScreen = readme.split('\n').slice(0, 40);

  it('is at most 150 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
  });

  it('shows the test command on its first screen, the one CI (.ci/run) runs after npm ci', () => {
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^npm run test:setup$/m);
    expect(ci).toMatch(/^npm test$/m);
    expect(firstScreen).toContain('npm ci && npm run test:setup && npm test');
  });

  it('shows the command that sets up and runs the bot on its first screen, every npm script in it defined', () => {
    const run = firstScreen.find((line) => /^npm ci && .*npm start$/.test(line));
    expect(run).toBeDefined();
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    const used = [...run!.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!);
    expect(used).toContain('setup');
    expect(used.filter((name) => !(name in scripts))).toEqual([]);
  });
});

describe('links in README.md and docs/', () => {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('every relative link resolves to a file, and a link to a heading to one of its headings', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const link of relativeLinksOf(read(file))) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
        if (!existsSync(target)) broken.push(`${file}: ${link} (no ${relative(ROOT, target)})`);
        else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${file}: ${link} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the anchors are GitHub's (a heading with code, punctuation and a repeat)", () => {
    expect([...anchorsOf('# A `b`: c/d (e)\n## A `b`: c/d (e)\n```\n# not a heading\n```')]).toEqual([
      'a-b-cd-e',
      'a-b-cd-e-1',
    ]);
  });
});
