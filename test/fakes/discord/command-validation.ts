/**
 * Validation of application command JSON (`PUT /applications/:app[/guilds/:guild]/commands`)
 * as Discord does it: names, descriptions, option counts, types and order, choices, sizes, and
 * how many of each type one list holds ("Registering a Command": 100 chat input, 15 user and
 * 15 message commands); their localizations in command-localizations.ts.
 */
import { checkLocalizations, longestOf } from './command-localizations.ts';
import { addError, type ErrorTree } from './errors.ts';
import type { Json } from './types.ts';
import { codePoints, isObject } from './util.ts';

const COMMAND_NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
/** USER and MESSAGE command names: the same characters in any case, and spaces ("Application Command Naming"). */
const CONTEXT_MENU_NAME = /^[-_' \p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
/** Most commands of each type in one list, by type (1 chat input, 2 user, 3 message). */
export const MAX_COMMANDS_BY_TYPE: Readonly<Record<number, number>> = { 1: 100, 2: 15, 3: 15 };
const OPTION_TYPES_WITH_CHOICES = new Set([3, 4, 10]);

/**
 * Checks a name as Discord does: for chat-input commands and options the regex in lowercase; for
 * user and message commands (`lowercase` false) any case and spaces.
 */
function checkName(thing: Json, path: Array<string | number>, errors: ErrorTree, lowercase: boolean): void {
  const name = thing.name;
  const pattern = lowercase ? COMMAND_NAME : CONTEXT_MENU_NAME;
  if (typeof name !== 'string' || !pattern.test(name) || (lowercase && name !== name.toLowerCase())) {
    addError(errors, [...path, 'name'], 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
  }
  checkLocalizations(thing, 'name_localizations', path, errors, { kind: 'name', pattern, lowercase });
}

function checkDescription(thing: Json, path: Array<string | number>, errors: ErrorTree): void {
  const description = thing.description;
  if (typeof description !== 'string' || codePoints(description) < 1 || codePoints(description) > 100) {
    addError(errors, [...path, 'description'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  }
  checkLocalizations(thing, 'description_localizations', path, errors, { kind: 'text', max: 100 });
}

/** Characters that count toward the 8,000-character command size (of a field and its localizations, the longest). */
function commandSize(command: Json): number {
  let size = 0;
  const text = (v: unknown) => (typeof v === 'string' ? codePoints(v) : 0);
  size += longestOf(command, 'name') + longestOf(command, 'description');
  const walk = (options: unknown) => {
    if (!Array.isArray(options)) return;
    for (const o of options) {
      if (!isObject(o)) continue;
      size += longestOf(o, 'name') + longestOf(o, 'description');
      if (Array.isArray(o.choices))
        for (const c of o.choices)
          if (isObject(c))
            size += longestOf(c, 'name') + (typeof c.value === 'string' ? text(c.value) : String(c.value).length);
      walk(o.options);
    }
  };
  walk(command.options);
  return size;
}

function checkOptions(options: unknown, path: Array<string | number>, errors: ErrorTree, depth: number): void {
  if (options === undefined || options === null) return;
  if (!Array.isArray(options)) {
    addError(errors, [...path, 'options'], 'BASE_TYPE_LIST', 'Must be a list.');
    return;
  }
  if (options.length > 25)
    addError(errors, [...path, 'options'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  const names = new Set<string>();
  let sawOptional = false;
  options.forEach((option, i) => {
    const at = [...path, 'options', i];
    if (!isObject(option)) {
      addError(errors, at, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    const type = option.type;
    if (typeof type !== 'number' || !Number.isInteger(type) || type < 1 || type > 11) {
      addError(
        errors,
        [...at, 'type'],
        'BASE_TYPE_CHOICES',
        'Value must be one of {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}.',
      );
      return;
    }
    checkName(option, at, errors, true);
    checkDescription(option, at, errors);
    if (typeof option.name === 'string') {
      if (names.has(option.name))
        addError(errors, [...at, 'name'], 'APPLICATION_COMMAND_OPTIONS_DUPLICATE_NAME', 'Option names must be unique');
      names.add(option.name);
    }
    const isSub = type === 1 || type === 2;
    if (isSub) {
      if (depth >= 2 || (type === 2 && depth >= 1))
        addError(
          errors,
          [...at, 'type'],
          'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
          'Subcommands cannot be nested this deep',
        );
      if (option.required !== undefined && option.required !== false)
        addError(
          errors,
          [...at, 'required'],
          'APPLICATION_COMMAND_OPTION_REQUIRED_INVALID',
          'Subcommands cannot be required',
        );
      if (type === 2 && Array.isArray(option.options) && option.options.some((o) => !isObject(o) || o.type !== 1)) {
        addError(
          errors,
          [...at, 'options'],
          'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
          'Subcommand groups may only contain subcommands',
        );
      }
      checkOptions(option.options, at, errors, depth + 1);
      return;
    }
    if (option.required !== undefined && typeof option.required !== 'boolean')
      addError(errors, [...at, 'required'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
    if (option.required === true && sawOptional) {
      addError(
        errors,
        [...path, 'options'],
        'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
        'Required options must be placed before non-required options',
      );
    }
    if (option.required !== true) sawOptional = true;
    if (option.options !== undefined)
      addError(
        errors,
        [...at, 'options'],
        'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
        'Only subcommands may have options',
      );
    const choices = option.choices;
    if (choices !== undefined) {
      if (!OPTION_TYPES_WITH_CHOICES.has(type))
        addError(
          errors,
          [...at, 'choices'],
          'APPLICATION_COMMAND_OPTION_CHOICES_INVALID',
          'Choices are only allowed on string, integer and number options',
        );
      else if (!Array.isArray(choices)) addError(errors, [...at, 'choices'], 'BASE_TYPE_LIST', 'Must be a list.');
      else {
        if (choices.length > 25)
          addError(errors, [...at, 'choices'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
        if (option.autocomplete === true && choices.length > 0)
          addError(
            errors,
            [...at, 'autocomplete'],
            'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID',
            'Autocomplete cannot be used with choices',
          );
        choices.forEach((choice, j) => {
          const c = isObject(choice) ? choice : {};
          if (typeof c.name !== 'string' || codePoints(c.name) < 1 || codePoints(c.name) > 100) {
            addError(
              errors,
              [...at, 'choices', j, 'name'],
              'BASE_TYPE_BAD_LENGTH',
              'Must be between 1 and 100 in length.',
            );
          }
          checkLocalizations(c, 'name_localizations', [...at, 'choices', j], errors, { kind: 'text', max: 100 });
          const v = c.value;
          if (type === 3) {
            if (typeof v !== 'string')
              addError(errors, [...at, 'choices', j, 'value'], 'BASE_TYPE_STRING', 'Must be a string.');
            else if (codePoints(v) < 1 || codePoints(v) > 100)
              addError(
                errors,
                [...at, 'choices', j, 'value'],
                'BASE_TYPE_BAD_LENGTH',
                'Must be between 1 and 100 in length.',
              );
          } else if (type === 4) {
            if (typeof v !== 'number' || !Number.isSafeInteger(v))
              addError(
                errors,
                [...at, 'choices', j, 'value'],
                'NUMBER_TYPE_COERCE',
                `Value "${String(v)}" is not int.`,
              );
          } else if (typeof v !== 'number' || !Number.isFinite(v)) {
            addError(
              errors,
              [...at, 'choices', j, 'value'],
              'NUMBER_TYPE_COERCE',
              `Value "${String(v)}" is not a number.`,
            );
          }
        });
      }
    }
    for (const key of ['min_value', 'max_value'] as const) {
      if (option[key] === undefined) continue;
      if (type !== 4 && type !== 10)
        addError(
          errors,
          [...at, key],
          'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
          `${key} is only allowed on integer and number options`,
        );
      else if (typeof option[key] !== 'number')
        addError(errors, [...at, key], 'NUMBER_TYPE_COERCE', 'Must be a number.');
    }
    if (
      typeof option.min_value === 'number' &&
      typeof option.max_value === 'number' &&
      option.min_value > option.max_value
    ) {
      addError(errors, [...at, 'min_value'], 'NUMBER_TYPE_MAX', 'min_value must be less than or equal to max_value');
    }
    for (const [key, min] of [
      ['min_length', 0],
      ['max_length', 1],
    ] as const) {
      const v = option[key];
      if (v === undefined) continue;
      if (type !== 3)
        addError(
          errors,
          [...at, key],
          'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
          `${key} is only allowed on string options`,
        );
      else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 6000)
        addError(errors, [...at, key], 'NUMBER_TYPE_MAX', `Must be between ${min} and 6000.`);
    }
  });
}

/** Validates one command of a bulk overwrite; errors go under its index. */
export function checkCommand(command: unknown, index: number, errors: ErrorTree): void {
  if (!isObject(command)) {
    addError(errors, [index], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const type = command.type ?? 1;
  if (type !== 1 && type !== 2 && type !== 3 && type !== 4) {
    addError(errors, [index, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4}.');
    return;
  }
  checkName(command, [index], errors, type === 1);
  if (type === 1) checkDescription(command, [index], errors);
  else if (command.description !== undefined && command.description !== '') {
    addError(
      errors,
      [index, 'description'],
      'APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION_INVALID',
      'Context menu commands cannot have description',
    );
  }
  if (type !== 1 && command.options !== undefined)
    addError(
      errors,
      [index, 'options'],
      'APPLICATION_COMMAND_OPTION_TYPE_INVALID',
      'Only chat input commands may have options',
    );
  checkOptions(command.options, [index], errors, 0);
  const dmp = command.default_member_permissions;
  if (dmp !== undefined && dmp !== null && !(typeof dmp === 'string' && /^\d+$/.test(dmp))) {
    addError(
      errors,
      [index, 'default_member_permissions'],
      'NUMBER_TYPE_COERCE',
      `Value "${String(dmp)}" is not snowflake.`,
    );
  }
  for (const [key, allowed] of [
    ['contexts', [0, 1, 2]],
    ['integration_types', [0, 1]],
  ] as const) {
    const v = command[key];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v)) addError(errors, [index, key], 'BASE_TYPE_LIST', 'Must be a list.');
    else
      v.forEach(
        (x, i) =>
          (allowed as readonly number[]).includes(x as number) ||
          addError(errors, [index, key, i], 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`),
      );
  }
  if (commandSize(command) > 8000)
    addError(errors, [index], 'APPLICATION_COMMAND_TOO_LARGE', 'Command exceeds maximum size (8000)');
}
