/**
 * `POST /response/<id>`: the `response_url` of one slash command or button press. JSON
 * `{ text, blocks, response_type }` (`ephemeral`, Slack's default, or `in_channel`); at most
 * {@link RESPONSE_URL_MAX_USES} successful posts within {@link RESPONSE_URL_TTL_MS} of the
 * command, then HTTP 404 `used_url` / `expired_url`; a body that is not JSON is HTTP 400
 * `invalid_payload`, text and blocks are checked as for chat.postMessage. Every post is
 * recorded on its {@link ResponseUrl}, refused ones too.
 *
 * The URL of a button press also acts on the pressed message, stored or ephemeral
 * (docs.slack.dev "Modifying messages", updating with response_url; the only way to change an
 * ephemeral message): `replace_original: true` replaces its text and blocks,
 * `delete_original: true` deletes it (a message already gone: HTTP 404 `message_not_found`,
 * the fake's choice). Without either, a post is a new message as for a slash command.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBlocks } from './blocks.ts';
import type { FakeSlackEphemeral, FakeSlackMessage, ResponseUrl } from './types.ts';
import { sendJson } from './web-api.ts';
import { isObject, type Json, SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A response_url may be used this many times … */
export const RESPONSE_URL_MAX_USES = 5;
/** … within this many ms of the command. */
export const RESPONSE_URL_TTL_MS = 30 * 60_000;

/** Issues a fresh response_url of this fake for one command. */
export function issueResponseUrl(ws: Workspace, command: string, channel: string, user: string): ResponseUrl {
  const id = randomBytes(8).toString('hex');
  const record: ResponseUrl = {
    id,
    url: `${ws.baseUrl}/response/${id}`,
    command,
    channel,
    user,
    issuedAt: ws.now(),
    posts: [],
  };
  ws.responseUrls.set(id, record);
  return record;
}

export function handleResponseUrl(
  ws: Workspace,
  id: string,
  req: IncomingMessage,
  raw: Buffer,
  res: ServerResponse,
): void {
  const record = ws.responseUrls.get(id);
  let body: Json = {};
  let parsed = false;
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    if (isObject(value)) {
      body = value;
      parsed = true;
    }
  } catch {
    // refused below
  }
  const responseType = body.response_type === 'in_channel' ? 'in_channel' : 'ephemeral';
  const text = typeof body.text === 'string' ? body.text : '';
  const answer = (status: number, error: string | undefined) => {
    record?.posts.push({ status, error, responseType, text, body, at: ws.now() });
    if (error) sendJson(res, status, { ok: false, error });
    else sendJson(res, 200, { ok: true });
  };
  if (!record) {
    answer(404, 'no_such_url');
    return;
  }
  if (ws.now() - record.issuedAt > RESPONSE_URL_TTL_MS) {
    answer(404, 'expired_url');
    return;
  }
  if (record.posts.filter((p) => p.status === 200).length >= RESPONSE_URL_MAX_USES) {
    answer(404, 'used_url');
    return;
  }
  if (!parsed || !(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
    answer(400, 'invalid_payload');
    return;
  }
  const original = pressedOriginal(ws, record);
  const acting = isTrue(body.delete_original) || isTrue(body.replace_original);
  if (record.messageTs !== undefined && acting && !original) {
    answer(404, 'message_not_found');
    return;
  }
  if (original && isTrue(body.delete_original)) {
    if (original.kind === 'message') original.message.deleted = true;
    else original.ephemeral.shown = false;
    answer(200, undefined);
    return;
  }
  let blocks: unknown[] | undefined;
  try {
    blocks = parseBlocks(body.blocks);
    ws.checkText(text, blocks, false);
  } catch (error) {
    if (error instanceof SlackApiError) {
      answer(400, error.error);
      return;
    }
    throw error;
  }
  if (original?.kind === 'message' && isTrue(body.replace_original)) {
    const m = original.message;
    m.text = text;
    m.blocks = blocks?.length ? blocks : undefined;
    m.revisions.push({ text, blocks: m.blocks, at: ws.now(), method: 'response_url' });
    m.mentions = ws.mentionsOf(m);
  } else if (original?.kind === 'ephemeral' && isTrue(body.replace_original)) {
    const old = original.ephemeral;
    old.shown = false;
    ws.ephemerals.push({ ...old, text, blocks, at: ws.now(), via: 'response_url', shown: true });
  } else if (responseType === 'in_channel') {
    ws.storeMessage({
      channel: record.channel,
      user: ws.botUserId,
      botId: ws.botId,
      text,
      blocks,
      threadTs: undefined,
      files: [],
      via: 'response_url',
      method: 'response_url',
    });
  } else {
    ws.ephemerals.push({
      channel: record.channel,
      user: record.user,
      ts: ws.nextTs(),
      threadTs: undefined,
      text,
      blocks,
      at: ws.now(),
      via: 'response_url',
      shown: true,
    });
  }
  answer(200, undefined);
}

/** The message a button-press URL acts on, if it is still there: a stored one or an ephemeral one. */
function pressedOriginal(
  ws: Workspace,
  record: ResponseUrl,
): { kind: 'message'; message: FakeSlackMessage } | { kind: 'ephemeral'; ephemeral: FakeSlackEphemeral } | undefined {
  if (record.messageTs === undefined) return undefined;
  if (record.ephemeral) {
    const ephemeral = ws.ephemerals.findLast(
      (e) => e.channel === record.channel && e.ts === record.messageTs && e.user === record.user && e.shown,
    );
    return ephemeral && { kind: 'ephemeral', ephemeral };
  }
  const message = ws.message(record.channel, record.messageTs);
  return message && !message.deleted ? { kind: 'message', message } : undefined;
}

/** A JSON boolean as Slack reads it (`true` or `"true"`). */
function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}
