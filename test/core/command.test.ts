import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import imagine from '../../commands/imagine.ts';
import { type Command, type CommandOutcome, checkOptions, runCommand } from '../../src/core/command.ts';
import type { Core } from '../../src/core/core.ts';
import { OptionError } from '../../src/core/errors.ts';
import { BotEvents } from '../../src/core/events.ts';
import { Languages } from '../../src/core/i18n/languages.ts';
import type { CommandContext } from '../../src/core/platform.ts';
import { AuthenticationError } from '../../src/core/service/errors.ts';

const silent = pino({ level: 'silent' });

function context(overrides: Partial<CommandContext> = {}): CommandContext & { ephemerals: string[] } {
  const ephemerals: string[] = [];
  return {
    platform: 'discord',
    conversationId: 'discord:1:2',
    channelKey: 'discord:1:2',
    isDirectMessage: false,
    user: { id: 'u', name: 'user', isAdmin: async () => false, canManageMessages: async () => false },
    options: {},
    files: {},
    signal: new AbortController().signal,
    log: silent,
    ref: 'TESTREF',
    reply: {
      limits: {
        maxChars: 2000,
        minEditIntervalMs: 0,
        cards: { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' },
      },
      defer: async () => undefined,
      send: async () => ({ edit: async () => undefined }),
      sendEphemeral: async (m) => void ephemerals.push(typeof m === 'string' ? m : m.content),
    },
    ephemerals,
    ...overrides,
  };
}

const core = () =>
  ({ events: new BotEvents(), log: silent, languages: new Languages(undefined, 'en') }) as unknown as Core;

describe('checkOptions', () => {
  it('refuses a value outside the choices, naming the option and the choices', () => {
    expect(() => checkOptions(imagine, { prompt: 'x', aspect_ratio: 'wide' })).toThrow(
      new OptionError('errors.option.one_of', { name: 'aspect_ratio', choices: '`square`, `portrait`, `landscape`' }),
    );
    expect(() => checkOptions(imagine, { prompt: 'x', aspect_ratio: 'wide' })).toThrow(
      /^`aspect_ratio` must be one of `square`, `portrait`, `landscape`\.$/,
    );
  });

  it('refuses a missing required option and an unknown one', () => {
    expect(() => checkOptions(imagine, { style: 'vivid' })).toThrow(/needs `prompt`/);
    expect(() => checkOptions(imagine, { prompt: 'x', colour: 'red' })).toThrow(/has no option `colour`/);
  });

  it('types numbers and booleans and enforces ranges', () => {
    const command: Command = {
      name: 't',
      description: 't',
      options: [
        { name: 'n', description: 'n', type: 'integer', minValue: 1, maxValue: 5 },
        { name: 'b', description: 'b', type: 'boolean' },
      ],
      execute: async () => undefined,
    };
    expect(checkOptions(command, { n: '3', b: 'yes' })).toEqual({ n: 3, b: true });
    expect(() => checkOptions(command, { n: '9' })).toThrow(/from 1 to 5/);
    expect(() => checkOptions(command, { n: '2.5' })).toThrow(/whole number/);
  });
});

describe('runCommand', () => {
  it('refuses an admin command to a non-admin at run time, without executing it', async () => {
    let executed = false;
    const command: Command = {
      name: 'setmodel',
      description: 'd',
      options: [],
      adminOnly: true,
      execute: async () => {
        executed = true;
      },
    };
    const ctx = context();
    const outcome = await runCommand(command, ctx, core());
    expect(executed).toBe(false);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ctx.ephemerals).toEqual(['/setmodel is for admins only.']);
  });

  it('turns a service error into its sentence, ephemerally, and emits the outcome', async () => {
    const command: Command = {
      name: 'x',
      description: 'd',
      options: [],
      execute: async () => {
        throw new AuthenticationError('bad key');
      },
    };
    const ctx = context();
    const c = core();
    const seen: CommandOutcome[] = [];
    c.events.on('command.done', (o) => seen.push(o));
    await runCommand(command, ctx, c);
    expect(ctx.ephemerals).toEqual([`${new AuthenticationError('x').userMessage} (ref TESTREF)`]);
    expect(seen).toMatchObject([{ command: 'x', ok: false, errorCode: 'authentication' }]);
  });

  it('survives an unexpected error with a generic sentence', async () => {
    const command: Command = {
      name: 'x',
      description: 'd',
      options: [],
      execute: async () => {
        throw new TypeError('oops');
      },
    };
    const ctx = context();
    const outcome = await runCommand(command, ctx, core());
    expect(outcome.errorCode).toBe('internal');
    expect(ctx.ephemerals[0]).toMatch(/went wrong on the bot's side/);
  });
});
