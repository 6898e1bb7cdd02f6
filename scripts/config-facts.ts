/**
 * What the configuration's zod schemas say about each variable, read from the schemas themselves
 * (never written a second time): its type, unit, range or values, default, and whether it is
 * required; with the reload kind (config-reload.ts `RELOAD_KINDS`) and the words of
 * src/config-docs.ts. scripts/config-docs.ts renders these facts into docs/configuration.md and
 * .env.example.
 *
 * Types and ranges come from `z.toJSONSchema` of the schema inside each variable's
 * `z.preprocess` (the pipe's output side, read as input: what the environment's text must be).
 * Defaults are what the schema makes of an unset variable.
 */
import { z } from 'zod';
import {
  CONFIG_SECTIONS,
  type DeployOnlyName,
  SECRET_VARIABLES,
  VALUES_OF,
  VARIABLE_DOCS,
} from '../src/config-docs.ts';
import { type EnvName, RELOAD_KINDS, type ReloadKind } from '../src/config-reload.ts';
import { deployEnv } from '../src/platforms/discord/deploy.ts';

/** One variable as the docs show it. */
export interface VariableFacts {
  name: EnvName | DeployOnlyName;
  /** e.g. `integer`, `number`, `URL`, `boolean`, `text`, `list`, `JSON array`. */
  type: string;
  /** A number's unit, from the name: `ms`, `bytes`, `MiB`, `tokens`, `minutes`…; undefined for none. */
  unit: string | undefined;
  /** Bounds, values or form, e.g. `1 to 3600000`, `` `json`, `pretty` ``; empty when the schema says none. */
  range: string;
  /** Whether the schema refuses an unset variable. */
  required: boolean;
  /** The default as the environment would write it; undefined when unset means none. */
  defaultText: string | undefined;
  /** undefined for a variable the bot does not read (deploy-commands only). */
  reload: ReloadKind | undefined;
  secret: boolean;
  description: string;
}

/** JSON Schema as `z.toJSONSchema` writes the parts these schemas use. */
interface JsonSchema {
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
}

/** The pattern of an id that may hold anything but control characters (config-fallback.ts), in words. */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f]+$';

/** The unit of a number, from its variable's name. */
const UNITS: readonly [RegExp, string][] = [
  [/_MS$/, 'ms'],
  [/_BYTES(_|$)/, 'bytes'],
  [/_MB$/, 'MiB'],
  [/_CHARS$/, 'characters'],
  [/_TOKENS?_/, 'tokens'],
  [/_SECONDS$/, 'seconds'],
  [/_MINUTES$/, 'minutes'],
  [/_DAYS$/, 'days'],
  [/^SPEND_CAP_/, "the price table's currency"],
];

/** The schema inside a `z.preprocess` (a pipe whose input side is a transform), else the schema. */
export function innerSchema(schema: z.ZodType): z.ZodType {
  const def = (schema as unknown as { def: { type: string; in?: { def: { type: string } }; out?: z.ZodType } }).def;
  return def.type === 'pipe' && def.in?.def.type === 'transform' && def.out ? def.out : schema;
}

/** The JSON Schema of what the environment's text must be for `schema`. */
function jsonOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(innerSchema(schema), { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** `a to b`, `at least a`, `at most b`, or empty; bounds past JavaScript's safe integers are no bound. */
function bounds(min: number | undefined, max: number | undefined, what = ''): string {
  const big = (n: number | undefined) => n === undefined || Math.abs(n) >= Number.MAX_SAFE_INTEGER;
  if (!big(min) && !big(max)) return `${min} to ${max}${what}`;
  if (!big(min)) return `at least ${min}${what}`;
  if (!big(max)) return `at most ${max}${what}`;
  return '';
}

const code = (text: unknown) => `\`${String(text)}\``;

/** The type and the range or values a JSON Schema allows, in the docs' words. */
function described(j: JsonSchema): { type: string; range: string } {
  if (j.anyOf) {
    const parts = j.anyOf.map(described);
    return {
      type: parts.map((p) => p.type).join(' or '),
      range: parts
        .map((p) => p.range)
        .filter(Boolean)
        .join('; '),
    };
  }
  if (j.const !== undefined) return { type: code(j.const), range: '' };
  if (j.enum) {
    if (j.enum.length === 2 && j.enum.includes('true') && j.enum.includes('false'))
      return { type: 'boolean', range: '`true` or `false`' };
    return { type: 'text', range: `one of ${j.enum.map(code).join(', ')}` };
  }
  if (j.type === 'integer' || j.type === 'number') return { type: j.type, range: bounds(j.minimum, j.maximum) };
  if (j.type === 'array') return arrayDescribed(j.items ?? {}, j.maxItems);
  if (j.format === 'uri') return { type: 'URL', range: '' };
  const length =
    j.minLength === 1 && j.maxLength === undefined && !j.pattern
      ? 'not empty'
      : bounds(j.minLength, j.maxLength, ' characters');
  const pattern =
    j.pattern === undefined
      ? ''
      : j.pattern === NO_CONTROL_CHARACTERS
        ? 'without control characters'
        : `matching ${code(j.pattern)}`;
  return { type: 'text', range: [length, pattern].filter(Boolean).join(', ') };
}

/** A list (comma-separated in the environment) or, of objects, a JSON array. */
function arrayDescribed(items: JsonSchema, maxItems: number | undefined): { type: string; range: string } {
  if (items.type === 'object') {
    const fields = Object.entries(items.properties ?? {}).map(
      ([key, field]) => `${code(key)}: ${described(field).range || described(field).type}`,
    );
    return { type: 'JSON array', range: `of objects with ${fields.join(', ')}` };
  }
  const item = described(items);
  const each = item.range ? `, each ${item.range}` : '';
  const most = maxItems === undefined ? '' : `, at most ${maxItems}`;
  return { type: 'list', range: `comma-separated ${item.type === 'text' ? 'values' : `${item.type}s`}${most}${each}` };
}

/**
 * A parsed value written back as the environment's text: numbers and booleans as they read, a
 * list comma-separated, anything else as JSON; undefined for no value (an empty list included).
 */
export function envText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    return value.every((v) => typeof v !== 'object') ? value.join(',') : JSON.stringify(value);
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The schema of a variable: the bot's, or deploy-commands' for the ones only it reads. */
export function schemaOf(name: EnvName | DeployOnlyName): z.ZodType {
  for (const section of CONFIG_SECTIONS) if (name in section.schema.shape) return section.schema.shape[name];
  return deployEnv.shape[name as DeployOnlyName];
}

/** The facts of one variable. */
export function factsOf(name: EnvName | DeployOnlyName): VariableFacts {
  const schema = schemaOf(name);
  const unset = schema.safeParse(undefined);
  const { type, range } = described(jsonOf(schema));
  const values = VALUES_OF[name as EnvName];
  return {
    name,
    type,
    unit: type === 'integer' || type === 'number' ? UNITS.find(([pattern]) => pattern.test(name))?.[1] : undefined,
    range: values ? `one of ${values.map(code).join(', ')}` : range,
    required: !unset.success,
    defaultText: unset.success ? envText(unset.data) : undefined,
    reload: name in RELOAD_KINDS ? RELOAD_KINDS[name as EnvName] : undefined,
    secret: SECRET_VARIABLES.includes(name as EnvName),
    description: VARIABLE_DOCS[name],
  };
}

/** Each section's variables' facts, in the schema's order (deploy-commands' own after them). */
export function sectionFacts(): { title: string; about: string; variables: VariableFacts[] }[] {
  return CONFIG_SECTIONS.map((section) => ({
    title: section.title,
    about: section.about,
    variables: [...(Object.keys(section.schema.shape) as EnvName[]), ...(section.deployOnly ?? [])].map(factsOf),
  }));
}
