/**
 * Validation of application commands' localizations as Discord does it ("Localization" in
 * Discord's application-command reference): `name_localizations` and `description_localizations`
 * (commands, options) and a choice's `name_localizations` are maps from one of Discord's locale
 * codes to a text (or null); an unknown code is refused with BASE_TYPE_CHOICES naming the codes, a
 * localized name follows the same rule as the name it localizes (chat-input: the pattern in
 * lowercase; user and message commands: any case and spaces), a localized description or choice
 * name is 1–100 characters.
 */
import { addError, type ErrorTree } from './errors.ts';
import type { Json } from './types.ts';
import { codePoints, isObject } from './util.ts';

/** Discord's locale codes ("Locales"), in the order its refusal lists them. */
export const DISCORD_LOCALE_CODES: readonly string[] = [
  'id',
  'da',
  'de',
  'en-GB',
  'en-US',
  'es-ES',
  'es-419',
  'fr',
  'hr',
  'it',
  'lt',
  'hu',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'ro',
  'fi',
  'sv-SE',
  'vi',
  'tr',
  'cs',
  'el',
  'bg',
  'ru',
  'uk',
  'hi',
  'th',
  'zh-CN',
  'ja',
  'zh-TW',
  'ko',
];

const CHOICES_MESSAGE = `Value must be one of (${DISCORD_LOCALE_CODES.map((c) => `'${c}'`).join(', ')}).`;

/** What a localized text must be: a name by its pattern (and case), or a text of 1–100 characters. */
export type LocalizedText = { kind: 'name'; pattern: RegExp; lowercase: boolean } | { kind: 'text'; max: number };

/**
 * Checks one localizations map, `thing[field]`, adding Discord's errors under `path` + field:
 * not a map → DICT_TYPE_CONVERT; an unknown code → BASE_TYPE_CHOICES under that code; a text
 * that breaks `rule` → APPLICATION_COMMAND_INVALID_NAME or BASE_TYPE_BAD_LENGTH under that code.
 */
export function checkLocalizations(
  thing: Json,
  field: 'name_localizations' | 'description_localizations',
  path: Array<string | number>,
  errors: ErrorTree,
  rule: LocalizedText,
): void {
  const map = thing[field];
  if (map === undefined || map === null) return;
  if (!isObject(map)) {
    addError(errors, [...path, field], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType');
    return;
  }
  for (const [code, text] of Object.entries(map)) {
    const at = [...path, field, code];
    if (!DISCORD_LOCALE_CODES.includes(code)) {
      addError(errors, at, 'BASE_TYPE_CHOICES', CHOICES_MESSAGE);
      continue;
    }
    if (text === null) continue;
    if (rule.kind === 'name') {
      if (typeof text !== 'string' || !rule.pattern.test(text) || (rule.lowercase && text !== text.toLowerCase()))
        addError(errors, at, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    } else if (typeof text !== 'string' || codePoints(text) < 1 || codePoints(text) > rule.max) {
      addError(errors, at, 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${rule.max} in length.`);
    }
  }
}

/**
 * The characters a field counts toward a command's 8,000: Discord counts, of a field and its
 * localizations, only the longest.
 */
export function longestOf(thing: Json, field: 'name' | 'description'): number {
  const own = typeof thing[field] === 'string' ? codePoints(thing[field] as string) : 0;
  const map = thing[`${field}_localizations`];
  if (!isObject(map)) return own;
  return Math.max(own, ...Object.values(map).map((t) => (typeof t === 'string' ? codePoints(t) : 0)));
}
