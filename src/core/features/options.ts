/**
 * Option definitions shared by several commands (the model pickers and the sampling
 * parameters of §4.1/§4.2, with the spec's ranges) and reading them back.
 */
import type { CommandOption } from '../command.ts';
import { texts } from '../command-words.ts';
import type { Core } from '../core.ts';
import { OptionError } from '../errors.ts';
import type { Sampling } from './chat.ts';

/** `model` for /chat and /complete: a text model id, autocompleted from `/v1/models`. */
export const TEXT_MODEL_OPTION: CommandOption = {
  name: 'model',
  ...texts('commands.option.model'),
  type: 'string',
  maxLength: 100,
  autocomplete: 'text_models',
};

/** `temperature`, 0 to 2 (§4.1, §4.2). */
export const TEMPERATURE_OPTION: CommandOption = {
  name: 'temperature',
  ...texts('commands.option.temperature'),
  type: 'number',
  minValue: 0,
  maxValue: 2,
};

/** `max_tokens`, 1 to `MAX_TOKENS_LIMIT` (checked at run time: the limit is the operator's). */
export const MAX_TOKENS_OPTION: CommandOption = {
  name: 'max_tokens',
  ...texts('commands.option.max_tokens'),
  type: 'integer',
  minValue: 1,
};

/** The §4.1-only sampling options. */
export const NUCLEUS_OPTIONS: readonly CommandOption[] = [
  { name: 'top_p', ...texts('commands.option.top_p'), type: 'number', minValue: 0, maxValue: 1 },
  {
    name: 'frequency_penalty',
    ...texts('commands.option.frequency_penalty'),
    type: 'number',
    minValue: -2,
    maxValue: 2,
  },
  {
    name: 'presence_penalty',
    ...texts('commands.option.presence_penalty'),
    type: 'number',
    minValue: -2,
    maxValue: 2,
  },
];

/**
 * The sampling parameters a user gave (checked options), with `max_tokens` held to the
 * operator's `MAX_TOKENS_LIMIT`.
 * @throws OptionError when `max_tokens` is over the limit (the message gives the range).
 */
export function samplingFrom(options: Record<string, string | number | boolean | undefined>, core: Core): Sampling {
  const out: Sampling = {};
  for (const name of ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'max_tokens'] as const) {
    const value = options[name];
    if (typeof value === 'number') out[name] = value;
  }
  if (out.max_tokens !== undefined && out.max_tokens > core.limits.maxTokens) {
    throw new OptionError(`\`max_tokens\` must be from 1 to ${core.limits.maxTokens}.`);
  }
  return out;
}

/** A string option's value, or undefined. */
export function stringOption(options: Record<string, unknown>, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The largest image seed: 2³² − 1 (/imagine's `seed` option and the new seeds of Reroll and Vary). */
export const MAX_SEED = 4_294_967_295;
