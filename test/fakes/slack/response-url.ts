/**
 * `POST /response/<id>`: the `response_url` of one slash command. JSON `{ text, blocks,
 * response_type }` (`ephemeral`, Slack's default, or `in_channel`); at most
 * {@link RESPONSE_URL_MAX_USES} successful posts within {@link RESPONSE_URL_TTL_MS} of the
 * command, then HTTP 404 `used_url` / `expired_url`; a body that is not JSON is HTTP 400
 * `invalid_payload`, text and blocks are checked as for chat.postMessage. Every post is
 * recorded on its {@link ResponseUrl}, refused ones too.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBlocks } from './blocks.ts';
import type { ResponseUrl } from './types.ts';
import { sendJson } from './web-api.ts';
import type { Workspace } from './workspace.ts';
import { isObject, SlackApiError, type Json } from './wire.ts';

/** A response_url may be used this many times … */
export const RESPONSE_URL_MAX_USES = 5;
/** … within this many ms of the command. */
export const RESPONSE_URL_TTL_MS = 30 * 60_000;

/** Issues a fresh response_url of this fake for one command. */
export function issueResponseUrl(ws: Workspace, command: string, channel: string, user: string): ResponseUrl {
  const id = randomBytes(8).toString('hex');
  const record: ResponseUrl = { id, url: `${ws.baseUrl}/response/${id}`, command, channel, user, issuedAt: ws.now(), posts: [] };
  ws.responseUrls.set(id, record);
  return record;
}

export function handleResponseUrl(ws: Workspace, id: string, req: IncomingMessage, raw: Buffer, res: ServerResponse): void {
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
  if (!record) return answer(404, 'no_such_url');
  if (ws.now() - record.issuedAt > RESPONSE_URL_TTL_MS) return answer(404, 'expired_url');
  if (record.posts.filter((p) => p.status === 200).length >= RESPONSE_URL_MAX_USES) return answer(404, 'used_url');
  if (!parsed || !(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) return answer(400, 'invalid_payload');
  let blocks: unknown[] | undefined;
  try {
    blocks = parseBlocks(body.blocks);
    ws.checkText(text, blocks, false);
  } catch (error) {
    if (error instanceof SlackApiError) return answer(400, error.error);
    throw error;
  }
  if (responseType === 'in_channel') {
    ws.storeMessage({ channel: record.channel, user: ws.botUserId, botId: ws.botId, text, blocks, threadTs: undefined, files: [], via: 'response_url', method: 'response_url' });
  } else {
    ws.ephemerals.push({ channel: record.channel, user: record.user, text, blocks, at: ws.now(), via: 'response_url' });
  }
  answer(200, undefined);
}
