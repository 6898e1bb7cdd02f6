/**
 * Discord's refusals: a status, a body `{ message, code, errors? }` and extra headers. Form
 * errors (400, code 50035 "Invalid Form Body") carry a nested `errors` tree whose leaves are
 * `_errors: [{ code, message }]`, keyed by the path of the offending field.
 */
import type { Json } from './types.ts';

/** A refusal: status, Discord error body, extra headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Json,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message));
  }
}

export const discordError = (status: number, code: number, message: string) => new HttpError(status, { message, code });
export const unauthorized = () => discordError(401, 0, '401: Unauthorized');
export const notFound = () => discordError(404, 0, '404: Not Found');
export const unknownChannel = () => discordError(404, 10003, 'Unknown Channel');
export const unknownInteraction = () => discordError(404, 10062, 'Unknown interaction');
export const unknownMessage = () => discordError(404, 10008, 'Unknown Message');
export const unknownWebhook = () => discordError(404, 10015, 'Unknown Webhook');
export const invalidWebhookToken = () => discordError(401, 50027, 'Invalid Webhook Token');

/** The nested `errors` tree of an Invalid Form Body answer. */
export type ErrorTree = { [key: string]: unknown };

/** Adds `{ code, message }` under `path` (e.g. `['embeds', 0, 'description']`). */
export function addError(tree: ErrorTree, path: Array<string | number>, code: string, message: string): void {
  let node = tree;
  for (const key of path) {
    const k = String(key);
    node[k] ??= {};
    node = node[k] as ErrorTree;
  }
  node._errors ??= [];
  const list = node._errors as Array<{ code: string; message: string }>;
  list.push({ code, message });
}

/** 400, code 50035 "Invalid Form Body" with `errors`. */
export function formError(errors: ErrorTree): HttpError {
  return new HttpError(400, { message: 'Invalid Form Body', code: 50035, errors });
}

/** A form error with one entry at `path`. */
export function fieldError(path: Array<string | number>, code: string, message: string): HttpError {
  const errors: ErrorTree = {};
  addError(errors, path, code, message);
  return formError(errors);
}

export const hasErrors = (tree: ErrorTree) => Object.keys(tree).length > 0;
