/**
 * Every command, option, choice and message action has its words in every shipped locale, within
 * Discord's rules for application commands (docs/i18n.md, "Commands"): names 1–32 characters of
 * Discord's pattern, lowercase where the script has case (a message command's name: any case and
 * spaces), descriptions and choice names 1–100 characters; in no locale do two commands share a
 * name, nor two options of one command. English is the definitions' own words.
 */
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import { choiceNameIn, descriptionIn, nameIn } from '../../src/core/command-words.ts';
import { SHIPPED_LOCALES } from '../../src/core/i18n/locales.ts';
import { english, wordsOf } from '../../src/core/i18n/words.ts';
import { DISCORD_LOCALES, toDiscordCommand, toDiscordMessageCommand } from '../../src/platforms/discord/commands.ts';

const NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const MENU_NAME = /^[-_' \p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const length = (s: string) => [...s].length;

describe('command words in every locale', () => {
  it('every command, option and message action has words in the catalog; the English ones are the definitions’', () => {
    for (const command of commands) {
      expect(command.text, `/${command.name}`).toBeDefined();
      expect(nameIn(command, english)).toBe(command.name);
      expect(descriptionIn(command, english)).toBe(command.description);
      for (const option of command.options) {
        expect(option.text, `/${command.name} ${option.name}`).toBeDefined();
        expect(nameIn(option, english)).toBe(option.name);
        expect(descriptionIn(option, english)).toBe(option.description);
        for (const c of option.choices ?? []) expect(choiceNameIn(c, english)).toBe(c.name);
      }
    }
    for (const action of messageActions) {
      expect(action.text, action.id).toBeDefined();
      expect(nameIn(action, english)).toBe(action.name);
    }
  });

  it.each(SHIPPED_LOCALES)(
    '%s: names match Discord’s pattern in lowercase, texts are 1–100 characters, nothing collides',
    (locale) => {
      const words = wordsOf(locale);
      const commandNames = commands.map((c) => nameIn(c, words));
      expect(new Set(commandNames).size).toBe(commandNames.length);
      for (const command of commands) {
        const name = nameIn(command, words);
        expect(name, `/${command.name}`).toMatch(NAME);
        expect(name).toBe(name.toLowerCase());
        const description = descriptionIn(command, words);
        expect(length(description), `/${command.name}: ${description}`).toBeGreaterThanOrEqual(1);
        expect(length(description), `/${command.name}: ${description}`).toBeLessThanOrEqual(100);
        const optionNames = command.options.map((o) => nameIn(o, words));
        expect(new Set(optionNames).size, `/${command.name}'s options`).toBe(optionNames.length);
        for (const option of command.options) {
          const optionName = nameIn(option, words);
          expect(optionName, `/${command.name} ${option.name}`).toMatch(NAME);
          expect(optionName).toBe(optionName.toLowerCase());
          const text = descriptionIn(option, words);
          expect(length(text), `/${command.name} ${option.name}: ${text}`).toBeGreaterThanOrEqual(1);
          expect(length(text), `/${command.name} ${option.name}: ${text}`).toBeLessThanOrEqual(100);
          const choiceNames = (option.choices ?? []).map((c) => choiceNameIn(c, words));
          expect(new Set(choiceNames).size, `/${command.name} ${option.name}'s choices`).toBe(choiceNames.length);
          for (const choiceName of choiceNames) {
            expect(length(choiceName)).toBeGreaterThanOrEqual(1);
            expect(length(choiceName)).toBeLessThanOrEqual(100);
          }
        }
      }
      const actionNames = messageActions.map((a) => nameIn(a, words));
      expect(new Set(actionNames).size).toBe(actionNames.length);
      for (const name of actionNames) expect(name).toMatch(MENU_NAME);
    },
  );

  it('the Discord JSON carries every shipped locale under Discord’s codes (es-ES and es-419 from Spanish), no en-US', () => {
    const codes = Object.values(DISCORD_LOCALES).flat().sort();
    expect(codes).toEqual(['de', 'es-419', 'es-ES', 'fr', 'ja', 'pt-BR']);
    const settings = toDiscordCommand(commands.find((c) => c.name === 'settings')!);
    expect(Object.keys(settings.name_localizations ?? {}).sort()).toEqual(codes);
    expect(settings.description_localizations).toMatchObject({
      de: wordsOf('de').t('commands.command.settings.description'),
      'es-419': wordsOf('es').t('commands.command.settings.description'),
      'es-ES': wordsOf('es').t('commands.command.settings.description'),
      ja: wordsOf('ja').t('commands.command.settings.description'),
    });
    const reset = settings.options?.find((o) => o.name === 'reset') as {
      choices: Array<{ name: string; name_localizations?: Record<string, string> }>;
    };
    expect(reset.choices[0]!.name_localizations).toMatchObject({ de: 'alle', ja: 'すべて' });
    const chat = toDiscordCommand(commands.find((c) => c.name === 'chat')!);
    const temperature = chat.options?.find((o) => o.name === 'temperature');
    expect(temperature?.description_localizations?.fr).toBe(wordsOf('fr').t('commands.option.temperature.description'));
    const seed = toDiscordCommand(commands.find((c) => c.name === 'imagine')!).options?.find((o) => o.name === 'seed');
    expect(seed?.description_localizations?.de).toContain('4294967295');
    expect(toDiscordMessageCommand(messageActions[1]!).name_localizations).toMatchObject({ de: 'Zusammenfassen' });
  });
});
