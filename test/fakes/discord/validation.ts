/**
 * Validation of message bodies as Discord does it (`allowed_mentions`, embeds and their
 * limits), and whom a message pings. Content length, files and flags are checked where a
 * write is prepared (writes.ts).
 */
import { MAX_EMBEDS } from './constants.ts';
import { addError, type ErrorTree } from './errors.ts';
import type { Pings } from './model.ts';
import type { Json } from './types.ts';
import { codePoints, isObject } from './util.ts';

/** Whom `content` pings given `allowed_mentions` (absent = Discord's default: parse everything). */
export function resolvePings(content: string, allowed: unknown): Pings {
  const a = isObject(allowed) ? allowed : undefined;
  const parse = a ? (Array.isArray(a.parse) ? (a.parse as unknown[]) : []) : ['everyone', 'users', 'roles'];
  const listed = (key: string) => (a && Array.isArray(a[key]) ? (a[key] as unknown[]).map(String) : []);
  const users = [...content.matchAll(/<@!?(\d{15,21})>/g)]
    .map((m) => m[1]!)
    .filter((id) => parse.includes('users') || listed('users').includes(id));
  const roles = [...content.matchAll(/<@&(\d{15,21})>/g)]
    .map((m) => m[1]!)
    .filter((id) => parse.includes('roles') || listed('roles').includes(id));
  return {
    everyone: parse.includes('everyone') && /@(everyone|here)\b/.test(content),
    users: [...new Set(users)],
    roles: [...new Set(roles)],
  };
}

/** Checks `allowed_mentions` (shape, `replied_user` a boolean, and the parse/list exclusivity). */
export function checkAllowedMentions(value: unknown, errors: ErrorTree): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    addError(errors, ['allowed_mentions'], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const parse = value.parse;
  if (parse !== undefined) {
    if (!Array.isArray(parse)) addError(errors, ['allowed_mentions', 'parse'], 'BASE_TYPE_LIST', 'Must be a list.');
    else {
      parse.forEach((p, i) => {
        if (!['everyone', 'users', 'roles'].includes(p as string)) {
          addError(
            errors,
            ['allowed_mentions', 'parse', i],
            'BASE_TYPE_CHOICES',
            "Value must be one of {'everyone', 'roles', 'users'}.",
          );
        }
      });
    }
  }
  if (value.replied_user !== undefined && value.replied_user !== null && typeof value.replied_user !== 'boolean') {
    addError(errors, ['allowed_mentions', 'replied_user'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
  }
  for (const key of ['users', 'roles'] as const) {
    const list = value[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length > 100) {
      addError(errors, ['allowed_mentions', key], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
      continue;
    }
    if (Array.isArray(parse) && parse.includes(key) && list.length > 0) {
      addError(
        errors,
        ['allowed_mentions'],
        'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
        `parse:["${key}"] and ${key}: [ids...] are mutually exclusive.`,
      );
    }
  }
}

const EMBED_LIMITS: Array<[string[], number]> = [
  [['title'], 256],
  [['description'], 4096],
  [['footer', 'text'], 2048],
  [['author', 'name'], 256],
];

/** Checks `embeds` against Discord's embed limits; returns the normalised embeds. */
export function checkEmbeds(value: unknown, errors: ErrorTree): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    addError(errors, ['embeds'], 'BASE_TYPE_LIST', 'Must be a list.');
    return [];
  }
  if (value.length > MAX_EMBEDS)
    addError(errors, ['embeds'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_EMBEDS} or fewer in length.`);
  let total = 0;
  const out: Json[] = [];
  value.forEach((embed, i) => {
    if (!isObject(embed)) {
      addError(errors, ['embeds', i], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    for (const [path, max] of EMBED_LIMITS) {
      let v: unknown = embed;
      for (const k of path) v = isObject(v) ? v[k] : undefined;
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') {
        addError(errors, ['embeds', i, ...path], 'BASE_TYPE_STRING', 'Must be a string.');
        continue;
      }
      total += codePoints(v);
      if (codePoints(v) > max)
        addError(errors, ['embeds', i, ...path], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    }
    const fields = embed.fields;
    if (fields !== undefined) {
      if (!Array.isArray(fields)) addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_LIST', 'Must be a list.');
      else {
        if (fields.length > 25)
          addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
        fields.forEach((f, j) => {
          const name = isObject(f) ? f.name : undefined;
          const v = isObject(f) ? f.value : undefined;
          if (typeof name !== 'string' || name.length === 0)
            addError(errors, ['embeds', i, 'fields', j, 'name'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(name) > 256)
            addError(
              errors,
              ['embeds', i, 'fields', j, 'name'],
              'BASE_TYPE_MAX_LENGTH',
              'Must be 256 or fewer in length.',
            );
          if (typeof v !== 'string' || v.length === 0)
            addError(errors, ['embeds', i, 'fields', j, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(v) > 1024)
            addError(
              errors,
              ['embeds', i, 'fields', j, 'value'],
              'BASE_TYPE_MAX_LENGTH',
              'Must be 1024 or fewer in length.',
            );
          total += (typeof name === 'string' ? codePoints(name) : 0) + (typeof v === 'string' ? codePoints(v) : 0);
        });
      }
    }
    const normalised: Json = { type: 'rich', ...embed };
    for (const key of ['image', 'thumbnail'] as const) {
      const media = embed[key];
      if (media === undefined) continue;
      const url = isObject(media) ? media.url : undefined;
      if (typeof url !== 'string' || !/^(https?|attachment):\/\/\S+$/.test(url)) {
        addError(errors, ['embeds', i, key, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
        continue;
      }
      normalised[key] = { url, proxy_url: url };
    }
    if (embed.url !== undefined && (typeof embed.url !== 'string' || !/^https?:\/\/\S+$/.test(embed.url))) {
      addError(errors, ['embeds', i, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
    }
    out.push(normalised);
  });
  if (total > 6000) addError(errors, ['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000');
  return out;
}

/** Discord's limits of legacy message components (components/reference.mdx). */
export const COMPONENT_LIMITS = { rows: 5, perRow: 5, customId: 100, label: 80 } as const;
/** Button styles: primary, secondary, success, danger, link, premium. */
const BUTTON_STYLES = [1, 2, 3, 4, 5, 6];
/** Select menus (string, user, role, mentionable, channel): one fills a row. */
const SELECT_TYPES = [3, 5, 6, 7, 8];

/**
 * Checks a message's `components` as Discord does for messages without the Components V2
 * flag (components-v2.ts checks those with it): at most 5 action rows (type 1), each checked as
 * {@link checkActionRow}; `custom_id`s are unique in the message.
 * @returns the components as stored.
 */
export function checkComponents(value: unknown, errors: ErrorTree): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    addError(errors, ['components'], 'BASE_TYPE_LIST', 'Must be a list.');
    return [];
  }
  if (value.length > COMPONENT_LIMITS.rows)
    addError(errors, ['components'], 'BASE_TYPE_MAX_LENGTH', `Must be ${COMPONENT_LIMITS.rows} or fewer in length.`);
  const seen = new Set<string>();
  value.forEach((row, i) => {
    if (!isObject(row) || row.type !== 1) {
      addError(errors, ['components', i, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1,).');
      return;
    }
    checkActionRow(row, ['components', i], errors, seen);
  });
  return value.filter(isObject);
}

/**
 * Checks one action row (type 1) as Discord does, in either kind of message: 1–5 buttons or one
 * select menu; a button has a style, a `custom_id` of 1–100 characters (a link button a `url`
 * instead), a label of at most 80 characters (or an emoji); a `custom_id` not in `seen` (the
 * message's so far), which it joins.
 * @param at the row's path in the body (`['components', 0]`, or deeper in a Container).
 */
export function checkActionRow(row: Json, at: Array<string | number>, errors: ErrorTree, seen: Set<string>): void {
  const children = row.components;
  if (!Array.isArray(children)) {
    addError(errors, [...at, 'components'], 'BASE_TYPE_REQUIRED', 'This field is required');
    return;
  }
  if (children.length === 0)
    addError(errors, [...at, 'components'], 'BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.');
  if (children.length > COMPONENT_LIMITS.perRow)
    addError(
      errors,
      [...at, 'components'],
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${COMPONENT_LIMITS.perRow} or fewer in length.`,
    );
  const selects = children.filter((c) => isObject(c) && SELECT_TYPES.includes(c.type as number));
  if (selects.length > 0 && children.length > 1)
    addError(
      errors,
      [...at, 'components'],
      'COMPONENT_LAYOUT_WIDTH_EXCEEDED',
      'The specified component exceeds the maximum width',
    );
  children.forEach((c, j) => checkRowChild(c, [...at, 'components', j], errors, seen));
}

/** Checks one child of an action row: a button or a select menu (see {@link checkActionRow}). */
function checkRowChild(c: unknown, at: Array<string | number>, errors: ErrorTree, seen: Set<string>): void {
  if (!isObject(c) || (c.type !== 2 && !SELECT_TYPES.includes(c.type as number))) {
    addError(errors, [...at, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).');
    return;
  }
  if (c.type === 2) {
    if (!checkButton(c, at, errors)) return;
  }
  checkCustomId(c.custom_id, [...at, 'custom_id'], errors, seen);
}

/**
 * Checks a button's style, label and (a link button's) URL.
 * @returns whether it needs a `custom_id` (not a link or premium button).
 */
export function checkButton(c: Json, at: Array<string | number>, errors: ErrorTree): boolean {
  if (!BUTTON_STYLES.includes(c.style as number))
    addError(errors, [...at, 'style'], 'BASE_TYPE_CHOICES', `Value must be one of {${BUTTON_STYLES.join(', ')}}.`);
  if (c.label !== undefined && c.label !== null) {
    if (typeof c.label !== 'string') addError(errors, [...at, 'label'], 'BASE_TYPE_STRING', 'Must be a string.');
    else if (codePoints(c.label) > COMPONENT_LIMITS.label)
      addError(
        errors,
        [...at, 'label'],
        'BASE_TYPE_MAX_LENGTH',
        `Must be ${COMPONENT_LIMITS.label} or fewer in length.`,
      );
  } else if (c.emoji === undefined && c.style !== 6)
    addError(errors, [...at], 'BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED', 'A label or an emoji is required');
  if (c.style === 5) {
    if (typeof c.url !== 'string' || !/^(https?|discord):\/\/\S+$/.test(c.url))
      addError(errors, [...at, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
    if (c.custom_id !== undefined)
      addError(
        errors,
        [...at, 'custom_id'],
        'BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED',
        'A link button cannot have a custom id',
      );
    return false;
  }
  return c.style !== 6;
}

/** Checks a `custom_id`: 1–100 characters, not in `seen` (the message's), which it joins. */
export function checkCustomId(id: unknown, at: Array<string | number>, errors: ErrorTree, seen: Set<string>): void {
  if (typeof id !== 'string' || id.length === 0) addError(errors, at, 'BASE_TYPE_REQUIRED', 'This field is required');
  else if (codePoints(id) > COMPONENT_LIMITS.customId)
    addError(errors, at, 'BASE_TYPE_MAX_LENGTH', `Must be ${COMPONENT_LIMITS.customId} or fewer in length.`);
  else if (seen.has(id))
    addError(errors, at, 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated');
  else seen.add(id);
}

/** Autocomplete choices per answer, and the longest name and string value. */
export const CHOICE_LIMITS = { choices: 25, name: 100, value: 100 } as const;

/**
 * Checks an autocomplete answer's `choices` (callback type 8) as Discord does: a list of at
 * most 25, each with a `name` of 1–100 characters and a `value` of the focused option's type
 * (a string of at most 100 characters for a string option, a number for a number or integer one).
 * @param optionType the focused option's type (3 string, 4 integer, 10 number).
 */
export function checkChoices(value: unknown, optionType: number, errors: ErrorTree): void {
  if (!Array.isArray(value)) {
    addError(errors, ['data', 'choices'], 'BASE_TYPE_REQUIRED', 'This field is required');
    return;
  }
  if (value.length > CHOICE_LIMITS.choices)
    addError(
      errors,
      ['data', 'choices'],
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${CHOICE_LIMITS.choices} or fewer in length.`,
    );
  value.forEach((choice, i) => {
    const at = ['data', 'choices', i];
    if (!isObject(choice)) {
      addError(errors, at, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    const { name, value: v } = choice;
    if (typeof name !== 'string') addError(errors, [...at, 'name'], 'BASE_TYPE_REQUIRED', 'This field is required');
    else if (codePoints(name) < 1 || codePoints(name) > CHOICE_LIMITS.name)
      addError(
        errors,
        [...at, 'name'],
        'BASE_TYPE_BAD_LENGTH',
        `Must be between 1 and ${CHOICE_LIMITS.name} in length.`,
      );
    if (optionType === 4 || optionType === 10) {
      if (typeof v !== 'number' || !Number.isFinite(v) || (optionType === 4 && !Number.isInteger(v)))
        addError(
          errors,
          [...at, 'value'],
          'NUMBER_TYPE_COERCE',
          `Value "${String(v)}" is not ${optionType === 4 ? 'int' : 'a number'}.`,
        );
    } else if (typeof v !== 'string') addError(errors, [...at, 'value'], 'BASE_TYPE_STRING', 'Must be a string.');
    else if (codePoints(v) > CHOICE_LIMITS.value)
      addError(errors, [...at, 'value'], 'BASE_TYPE_MAX_LENGTH', `Must be ${CHOICE_LIMITS.value} or fewer in length.`);
  });
}
