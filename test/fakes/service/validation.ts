/**
 * The field checks of request bodies, strict as the spec is: unknown fields, required fields,
 * types, ranges, enums and image data URLs, each refused with an OpenAI-style 400 naming the
 * parameter; and how values are described in those messages.
 */
import { apiError, invalid } from './errors.ts';

/** A JSON object as parsed from a request body. */
export type Json = Record<string, unknown>;

/** What a value is, in words (`a string`, `an integer`, `null`…), for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  return `a ${typeof value}`;
}

/** A value as shown in error messages (quoted strings, JSON), cut to 60 characters. */
export function shown(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Text cut to 60 characters for error messages. */
export function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Refuses the first key of `obj` not in `allowed` (400 `unknown_parameter`). */
export function rejectUnknown(obj: Json, allowed: readonly string[], prefix = ''): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw apiError(400, `Unknown parameter: '${prefix}${key}'.`, `${prefix}${key}`, 'unknown_parameter');
    }
  }
}

/** The value of a required field (400 `missing_required_parameter` when absent). */
export function requireField(obj: Json, key: string, param = key): unknown {
  if (!(key in obj) || obj[key] === undefined) {
    throw apiError(400, `Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  }
  return obj[key];
}

/** Checks an optional (or required) number field: finite, in `[min, max]`, an integer if asked. */
export function checkNumber(
  obj: Json,
  key: string,
  min: number,
  max: number,
  { integer = false, required = false } = {},
): void {
  if (!(key in obj)) {
    if (required) requireField(obj, key);
    return;
  }
  const value = obj[key];
  const expected = integer
    ? max === Infinity
      ? `an integer of at least ${min}`
      : `an integer from ${min} to ${max}`
    : `a number from ${min} to ${max}`;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalid(key, `Invalid type for '${key}': expected ${expected}, but got ${describe(value)} instead.`);
  }
  if (integer && !Number.isInteger(value)) {
    throw invalid(key, `Invalid type for '${key}': expected ${expected}, but got a decimal (${value}) instead.`);
  }
  if (value < min || value > max) {
    throw invalid(key, `Invalid '${key}': expected ${expected}, but got ${value} instead.`);
  }
}

/** Checks an optional boolean field. */
export function checkBoolean(obj: Json, key: string): void {
  if (key in obj && typeof obj[key] !== 'boolean') {
    throw invalid(
      key,
      `Invalid type for '${key}': expected a boolean (true or false), but got ${describe(obj[key])} instead.`,
    );
  }
}

/** Checks an optional (or required) string field, non-empty if asked. */
export function checkString(obj: Json, key: string, { required = false, nonEmpty = false } = {}): void {
  if (!(key in obj)) {
    if (required) requireField(obj, key);
    return;
  }
  const value = obj[key];
  if (typeof value !== 'string') {
    throw invalid(key, `Invalid type for '${key}': expected a string, but got ${describe(value)} instead.`);
  }
  if (nonEmpty && value.trim() === '') {
    throw invalid(key, `Invalid '${key}': expected a non-empty string, but got an empty string instead.`);
  }
}

/** Checks that an optional field is one of `values`. */
export function checkEnum(obj: Json, key: string, values: readonly unknown[]): void {
  if (!(key in obj)) return;
  const value = obj[key];
  if (!values.includes(value)) {
    const list = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    throw invalid(key, `Invalid value for '${key}': expected one of ${list}, but got ${shown(value)} instead.`);
  }
}

/** Whether a value is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strict standard base64 (padded). Returns the bytes, or undefined. */
function decodeBase64(text: string): Buffer | undefined {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isPng = (b: Buffer) => b.length > 8 && b.subarray(0, 8).equals(PNG_SIGNATURE);
const isJpeg = (b: Buffer) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

/** Checks a data URL: `data:image/<allowed>;base64,<valid base64 of such an image>`. */
export function checkImageDataUrl(param: string, url: unknown, allowed: ReadonlyArray<'png' | 'jpeg'>): void {
  const forms = allowed.map((t) => `data:image/${t};base64,<BASE64>`).join(' or ');
  if (typeof url !== 'string') {
    throw invalid(
      param,
      `Invalid type for '${param}': expected a string (${forms}), but got ${describe(url)} instead.`,
    );
  }
  const m = /^data:image\/([a-z0-9.+-]+);base64,/i.exec(url);
  const kind = m?.[1]?.toLowerCase();
  if (!m || (kind !== 'png' && kind !== 'jpeg') || !allowed.includes(kind)) {
    throw invalid(
      param,
      `Invalid '${param}': expected a base64 data URL ${forms}, but got ${shown(url.slice(0, 40))} instead.`,
    );
  }
  const bytes = decodeBase64(url.slice(m[0].length));
  if (!bytes) {
    throw invalid(param, `Invalid '${param}': the base64 data of the ${forms.split(' or ')[0]} URL does not decode.`);
  }
  if (!(kind === 'png' ? isPng(bytes) : isJpeg(bytes))) {
    throw invalid(param, `Invalid '${param}': the data does not decode to a ${kind === 'png' ? 'PNG' : 'JPEG'} image.`);
  }
}
