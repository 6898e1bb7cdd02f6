/**
 * Modals: `views.open` and the `view_submission` Slack sends when a user submits one.
 *
 * - `views.open` needs no scope (docs.slack.dev/reference/methods/views.open) but a `trigger_id`
 *   this fake sent, exchanged once within 3 s (triggers.ts); the modal is the trigger's user's.
 * - The view is checked as Slack does (Block Kit reference, "Modal view"): `type: 'modal'`, a
 *   `title` plain_text of at most 24 characters, `submit` and `close` at most 24 (a modal with an
 *   input block needs `submit`), 1–100 `blocks`, `callback_id` and `external_id` at most 255,
 *   `private_metadata` at most 3,000, the whole view under 250 kB (`view_too_large`); an input
 *   block needs a `label` (plain_text, at most 2,000) and an `element`; a `plain_text_input` an
 *   `action_id` (at most 255), a `placeholder` of at most 150, `min_length` 0–3,000 and
 *   `max_length` 1–3,000. A refusal is `invalid_arguments` with `response_metadata.messages`
 *   naming the field (`[ERROR] … [json-pointer:/view/title/text]`).
 * - {@link submitView} / {@link submitSocketView}: the view's user submits it (Slack's client
 *   refuses an empty required input and a value outside the input's lengths: so do they), as a
 *   `view_submission` payload over HTTP (signed form `payload=<JSON>`) or Socket Mode (an
 *   `interactive` envelope that accepts a response payload), acked within 3 s. An ack with
 *   `response_action: 'errors'` keeps the modal open with the errors shown; one with
 *   `response_action: 'update'` and a `view` (checked as views.open's: a refused one is a platform
 *   failure, `invalid_response`) keeps it open showing that view; any other closes it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ackFailure, isFaulty, sendSigned } from './inbound.ts';
import type { SignOptions } from './inbound-types.ts';
import type { SocketMode } from './socket-mode.ts';
import { exchangeTrigger, issueTrigger } from './triggers.ts';
import type { PlatformFailure } from './types.ts';
import { isObject, type Json, jsonParam, SlackApiError, str } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A modal the app opened. */
export interface FakeSlackView {
  id: string;
  /** The user it was opened for (the trigger's). */
  user: string;
  /** The view as the app sent it. */
  view: Json;
  /** Fake-clock ms when it was opened. */
  openedAt: number;
  /** `open`; `submitted` once a submission was acked without errors. */
  state: 'open' | 'submitted';
  /** The errors of the last `response_action: 'errors'` ack, by block_id. */
  errors: Record<string, string> | undefined;
}

/** The modals the app opened, by workspace. */
const opened = new WeakMap<Workspace, FakeSlackView[]>();

/** The modals the app opened in a workspace, oldest first. */
export function viewsOf(ws: Workspace): FakeSlackView[] {
  const views = opened.get(ws) ?? [];
  opened.set(ws, views);
  return views;
}

/** A refusal naming the field (`invalid_arguments`, as Slack words it). */
function invalid(pointer: string, message: string): SlackApiError {
  return new SlackApiError('invalid_arguments', {
    response_metadata: { messages: [`[ERROR] ${message} [json-pointer:/view${pointer}]`] },
  });
}

/** Checks a plain_text object of at most `max` characters. @throws SlackApiError. */
function checkPlainText(value: unknown, pointer: string, max: number): void {
  if (!isObject(value) || value.type !== 'plain_text' || typeof value.text !== 'string' || value.text === '')
    throw invalid(pointer, 'must be a plain_text object with text');
  if (value.text.length > max) throw invalid(`${pointer}/text`, `must be less than ${max + 1} characters`);
}

/** Checks an input block's element (plain_text_input; other elements only need an action_id). @throws SlackApiError. */
function checkElement(element: unknown, pointer: string): void {
  if (!isObject(element)) throw invalid(pointer, 'missing required field: element');
  if (typeof element.action_id !== 'string' || element.action_id.length < 1 || element.action_id.length > 255)
    throw invalid(`${pointer}/action_id`, 'must be 1 to 255 characters');
  if (element.type !== 'plain_text_input') return;
  if (element.placeholder !== undefined) checkPlainText(element.placeholder, `${pointer}/placeholder`, 150);
  for (const [key, min] of [
    ['min_length', 0],
    ['max_length', 1],
  ] as const) {
    const v = element[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 3000))
      throw invalid(`${pointer}/${key}`, `must be between ${min} and 3000`);
  }
}

/**
 * What every view shares, checked as Slack does: an object of at most 250 kB of the `type` asked
 * for, its ids and `private_metadata` within their lengths. @throws SlackApiError.
 */
export function checkViewCommons(view: unknown, type: 'modal' | 'home'): asserts view is Json {
  if (!isObject(view)) throw invalid('', 'must be an object');
  if (JSON.stringify(view).length > 250_000) throw new SlackApiError('view_too_large');
  if (view.type !== type) throw invalid('/type', `must be ${type}`);
  for (const [key, max] of [
    ['callback_id', 255],
    ['external_id', 255],
    ['private_metadata', 3000],
  ] as const) {
    const v = view[key];
    if (v !== undefined && (typeof v !== 'string' || v.length > max))
      throw invalid(`/${key}`, `must be a string of at most ${max} characters`);
  }
}

/** Checks a view as Slack does (see the file's comment). @throws SlackApiError. */
export function checkView(view: unknown): asserts view is Json {
  checkViewCommons(view, 'modal');
  checkPlainText(view.title, '/title', 24);
  if (view.close !== undefined) checkPlainText(view.close, '/close', 24);
  if (view.submit !== undefined) checkPlainText(view.submit, '/submit', 24);
  const blocks = view.blocks;
  if (!Array.isArray(blocks) || blocks.length < 1 || blocks.length > 100)
    throw invalid('/blocks', 'must be 1 to 100 blocks');
  blocks.forEach((block, i) => {
    if (!isObject(block) || typeof block.type !== 'string') throw invalid(`/blocks/${i}`, 'must be a block');
    if (block.type !== 'input') return;
    if (view.submit === undefined) throw invalid('/submit', 'a view with an input block needs submit');
    checkPlainText(block.label, `/blocks/${i}/label`, 2000);
    checkElement(block.element, `/blocks/${i}/element`);
  });
}

/** `views.open`: exchanges a trigger for a modal (see the file's comment). */
function viewsOpen(ws: Workspace, p: Json): Json {
  const view = jsonParam(p, 'view');
  checkView(view);
  const user = exchangeTrigger(ws, str(p, 'trigger_id'));
  const modal: FakeSlackView = {
    id: `V${randomBytes(5).toString('hex').toUpperCase()}`,
    user,
    view,
    openedAt: ws.now(),
    state: 'open',
    errors: undefined,
  };
  viewsOf(ws).push(modal);
  return { view: viewJson(ws, modal, {}) };
}

/** The Web API methods of this file. */
export function viewMethods(ws: Workspace): Record<string, (p: Json) => Json> {
  return { 'views.open': (p) => viewsOpen(ws, p) };
}

/** A view as Slack shows it to the app: the app's fields, its ids, and `state.values`. */
function viewJson(ws: Workspace, opened: FakeSlackView, values: Json): Json {
  return {
    ...opened.view,
    id: opened.id,
    team_id: ws.teamId,
    private_metadata: opened.view.private_metadata ?? '',
    callback_id: opened.view.callback_id ?? '',
    external_id: opened.view.external_id ?? '',
    state: { values },
    hash: `${Math.floor(opened.openedAt / 1000)}.${opened.id}`,
    clear_on_close: false,
    notify_on_close: false,
    root_view_id: opened.id,
    previous_view_id: null,
    app_id: ws.appId,
    bot_id: ws.botId,
  };
}

/** A user submits a modal: what they typed, by block_id then action_id. */
export interface ViewSubmissionInput {
  viewId: string;
  values: Record<string, Record<string, string>>;
}

/** What came back from the app for a submission. */
export interface ViewSubmissionResult {
  ackedInTime: boolean;
  /** The ack's body (HTTP) or payload (Socket Mode), parsed when JSON: `response_action`, `errors`. */
  ack: Json | undefined;
  /** The `view_submission` payload as sent. */
  payload: Json;
  failure: PlatformFailure | undefined;
}

/** The state values of a submission. @throws Error when Slack's client would not submit them. */
function submittedValues(opened: FakeSlackView, input: ViewSubmissionInput): Json {
  const values: Json = {};
  const inputs = (opened.view.blocks as Json[]).filter((b) => b.type === 'input');
  for (const [blockId, actions] of Object.entries(input.values)) {
    const block = inputs.find((b) => b.block_id === blockId);
    const element = block?.element as Json | undefined;
    for (const actionId of Object.keys(actions))
      if (!element || element.action_id !== actionId)
        throw new Error(`submitView: the view has no input ${blockId}/${actionId}`);
  }
  for (const block of inputs) {
    const element = block.element as Json;
    const value = input.values[String(block.block_id)]?.[String(element.action_id)] ?? '';
    if (block.optional !== true && value === '')
      throw new Error(`submitView: input ${String(block.block_id)} is required`);
    if (typeof element.max_length === 'number' && value.length > element.max_length)
      throw new Error(`submitView: input ${String(block.block_id)} takes at most ${element.max_length} characters`);
    if (value !== '' && typeof element.min_length === 'number' && value.length < element.min_length)
      throw new Error(`submitView: input ${String(block.block_id)} takes at least ${element.min_length} characters`);
    values[String(block.block_id)] = { [String(element.action_id)]: { type: element.type, value } };
  }
  return values;
}

/** The `view_submission` payload of one submit. @throws Error for a view not open or values the client refuses. */
function submissionPayload(ws: Workspace, input: ViewSubmissionInput): { opened: FakeSlackView; payload: Json } {
  const opened = viewsOf(ws).find((v) => v.id === input.viewId);
  if (opened?.state !== 'open') throw new Error(`submitView: no open view ${input.viewId}`);
  const user = ws.users.get(opened.user)!;
  const payload: Json = {
    type: 'view_submission',
    team: { id: ws.teamId, domain: ws.teamDomain },
    user: { id: user.id, username: user.name, name: user.name, team_id: ws.teamId },
    api_app_id: ws.appId,
    token: ws.verificationToken,
    trigger_id: issueTrigger(ws, opened.user),
    view: viewJson(ws, opened, submittedValues(opened, input)),
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
  return { opened, payload };
}

/** Applies the app's ack: errors keep the modal open, an update shows its view, anything else closes it. */
function settle(ws: Workspace, opened: FakeSlackView, ack: Json | undefined): void {
  if (ack?.response_action === 'errors' && isObject(ack.errors)) {
    opened.errors = ack.errors as Record<string, string>;
    return;
  }
  if (ack?.response_action === 'update') {
    try {
      checkView(ack.view);
      opened.view = ack.view;
      opened.errors = undefined;
    } catch (error) {
      const detail = `a response_action update with a view Slack refuses: ${(error as Error).message}`;
      ws.platformFailures.push({ kind: 'invalid_response', command: 'view_submission', detail });
    }
    return;
  }
  opened.state = 'submitted';
  opened.errors = undefined;
}

/** The ack body as JSON, when it is. */
function parseAck(body: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** See {@link FakeSlack.submitView}. */
export async function submitView(
  ws: Workspace,
  botUrl: string,
  input: ViewSubmissionInput,
  sign: SignOptions = {},
): Promise<ViewSubmissionResult> {
  const { opened, payload } = submissionPayload(ws, input);
  const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const result = await sendSigned(ws, botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
  const failure = isFaulty(sign) ? undefined : ackFailure(ws, 'view_submission', result);
  if (failure) ws.platformFailures.push(failure);
  const ackedInTime = result.status === 200 && !result.timedOut;
  const ack = ackedInTime ? parseAck(result.body) : undefined;
  if (ackedInTime) settle(ws, opened, ack);
  return { ackedInTime, ack, payload, failure };
}

/** See {@link FakeSlack.submitSocketView}. */
export async function submitSocketView(
  ws: Workspace,
  socketMode: SocketMode,
  input: ViewSubmissionInput,
): Promise<ViewSubmissionResult> {
  const { opened, payload } = submissionPayload(ws, input);
  const live = socketMode.liveSocket('submitSocketView', undefined);
  const fail = (failure: PlatformFailure): ViewSubmissionResult => {
    ws.platformFailures.push(failure);
    return { ackedInTime: false, ack: undefined, payload, failure };
  };
  if (!live)
    return fail({ kind: 'dispatch_failed', command: 'view_submission', detail: 'no open Socket Mode connection' });
  const envelopeId = randomUUID();
  const envelope = await socketMode.sendEnvelope(live, envelopeId, 'interactive', payload, {
    accepts_response_payload: true,
  });
  if (!envelope.ack || envelope.ack.late)
    return fail({ kind: 'operation_timeout', command: 'view_submission', detail: `no ack of envelope ${envelopeId}` });
  const ack = envelope.ack.payload as Json | undefined;
  settle(ws, opened, ack);
  return { ackedInTime: true, ack, payload, failure: undefined };
}
