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
  const users = [...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1]!).filter((id) => parse.includes('users') || listed('users').includes(id));
  const roles = [...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1]!).filter((id) => parse.includes('roles') || listed('roles').includes(id));
  return { everyone: parse.includes('everyone') && /@(everyone|here)\b/.test(content), users: [...new Set(users)], roles: [...new Set(roles)] };
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
          addError(errors, ['allowed_mentions', 'parse', i], 'BASE_TYPE_CHOICES', "Value must be one of {'everyone', 'roles', 'users'}.");
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
      addError(errors, ['allowed_mentions'], 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE', `parse:["${key}"] and ${key}: [ids...] are mutually exclusive.`);
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
  if (value.length > MAX_EMBEDS) addError(errors, ['embeds'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_EMBEDS} or fewer in length.`);
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
      if (codePoints(v) > max) addError(errors, ['embeds', i, ...path], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    }
    const fields = embed.fields;
    if (fields !== undefined) {
      if (!Array.isArray(fields)) addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_LIST', 'Must be a list.');
      else {
        if (fields.length > 25) addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
        fields.forEach((f, j) => {
          const name = isObject(f) ? f.name : undefined;
          const v = isObject(f) ? f.value : undefined;
          if (typeof name !== 'string' || name.length === 0) addError(errors, ['embeds', i, 'fields', j, 'name'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(name) > 256) addError(errors, ['embeds', i, 'fields', j, 'name'], 'BASE_TYPE_MAX_LENGTH', 'Must be 256 or fewer in length.');
          if (typeof v !== 'string' || v.length === 0) addError(errors, ['embeds', i, 'fields', j, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(v) > 1024) addError(errors, ['embeds', i, 'fields', j, 'value'], 'BASE_TYPE_MAX_LENGTH', 'Must be 1024 or fewer in length.');
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

