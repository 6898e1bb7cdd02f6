/**
 * Slack's experiences for AI apps, as far as the bot uses them: the Agent messaging experience
 * (manifest `features.agent_view`, docs.slack.dev "Migrating to the Agent messaging
 * experience") and the older Assistant one (`features.assistant_view`), the events each sends,
 * and `assistant.threads.setSuggestedPrompts` / `assistant.threads.setTitle` (status:
 * assistant.ts).
 *
 * - Which experience the app has ({@link AgentSettings.appView}, default `agent`) decides
 *   which events Slack sends: `app_context_changed` only with `agent_view` ("The agent_view
 *   feature must be enabled in order to receive this event"), `assistant_thread_started` and
 *   `assistant_thread_context_changed` only with `assistant_view`; `app_home_opened` always
 *   (events-api.ts asks {@link agentEventProblem}).
 * - `app_home_opened`: `{ type, user, channel: <the user's DM with the app>, tab: 'home' |
 *   'messages', event_ts }`, with `view` when the Home tab was published for the user before,
 *   and (Messages tab, agent view, subscribed to `app_context_changed`) the `context` the user
 *   is viewing (changelog 2026-07-02 "Agent context has landed"). `app_context_changed`:
 *   `{ type, channel, user, context: { entities: [{ type: 'slack#/types/channel_id', value,
 *   team_id }] }, event_ts }`, `context: {}` when nothing is viewed (@slack/types
 *   AppContextChangedEvent). `assistant_thread_started` / `…_context_changed`: `{ type,
 *   assistant_thread: { user_id, context: { channel_id, team_id, enterprise_id }, channel_id,
 *   thread_ts }, event_ts }`; starting one makes the thread's root message in the DM, the app's
 *   (`subtype: assistant_app_thread` on Slack).
 * - `setSuggestedPrompts` (tier 4, scope `assistant:write`): `channel_id` and 1 to 4
 *   `prompts` (each a `title` and a `message`) required, `title` and `thread_ts` optional. In the
 *   agent experience the prompts pin to the top of the Messages tab without `thread_ts`, and a
 *   call with `thread_ts` "will cause the call to silently fail" (method page): `ok`, nothing
 *   shown. In the assistant experience they go to `thread_ts`'s thread, or without it to the
 *   channel's latest message.
 * - `setTitle` (tier 4, `assistant:write`): `channel_id`, `thread_ts`, `title` required; Slack
 *   documents no longest title, so the fake takes any non-empty one.
 * - Both take only the app's DMs (`method_not_supported_for_channel_type` elsewhere: the fake's
 *   choice), `channel_not_found`, `invalid_thread_ts` for a thread that does not exist.
 */
import type { SlackEvent } from './inbound-types.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, jsonParam, required, SlackApiError, str, TS_PATTERN } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** The app's configuration for AI apps, as its manifest says. */
export interface AgentSettings {
  /** `agent`: `features.agent_view`; `assistant`: `features.assistant_view`; `none`: neither. */
  appView: 'agent' | 'assistant' | 'none';
  /** `features.app_home.home_tab_enabled`: views.publish of a home view is `not_enabled` without it. */
  homeTab: boolean;
}

/** One accepted assistant.threads.setSuggestedPrompts. */
export interface SuggestedPromptsRecord {
  channel: string;
  /** As sent (undefined: none). */
  threadTs: string | undefined;
  title: string | undefined;
  prompts: Array<{ title: string; message: string }>;
  /** Where users see them: `tab` (the top of the agent's Messages tab), a thread's ts, or nowhere (a silent failure). */
  shownAt: 'tab' | string | undefined;
  /** Fake-clock ms. */
  at: number;
}

/** One accepted assistant.threads.setTitle. */
export interface ThreadTitleRecord {
  channel: string;
  /** The thread's root ts. */
  threadTs: string;
  title: string;
  at: number;
}

/** What the fake keeps of the AI-app experience, per workspace. */
export interface AgentState extends AgentSettings {
  suggestedPrompts: SuggestedPromptsRecord[];
  titles: ThreadTitleRecord[];
}

const states = new WeakMap<Workspace, AgentState>();

/** The workspace's AI-app state (created with the defaults: agent view, Home tab on). */
export function agentState(ws: Workspace): AgentState {
  let state = states.get(ws);
  if (!state) {
    state = { appView: 'agent', homeTab: true, suggestedPrompts: [], titles: [] };
    states.set(ws, state);
  }
  return state;
}

/** Forgets the records (not the settings). */
export function resetAgent(ws: Workspace): void {
  const state = agentState(ws);
  state.suggestedPrompts.length = 0;
  state.titles.length = 0;
}

/** Why Slack would not send `event` to this app given its experience, or undefined. */
export function agentEventProblem(ws: Workspace, event: SlackEvent): string | undefined {
  const { appView } = agentState(ws);
  if (event.type === 'app_context_changed' && appView !== 'agent')
    return 'app_context_changed needs the agent view (features.agent_view)';
  if (event.type.startsWith('assistant_thread_') && appView !== 'assistant')
    return `${event.type} comes only to apps with the assistant view (features.assistant_view)`;
  return undefined;
}

/** The Web API methods of this file. */
export function agentMethods(ws: Workspace): MethodTable {
  return {
    'assistant.threads.setSuggestedPrompts': (p) => setSuggestedPrompts(ws, p),
    'assistant.threads.setTitle': (p) => setTitle(ws, p),
  };
}

const invalid = (message: string) =>
  new SlackApiError('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${message}`] } });

/** The app's DM named by `channel_id`. @throws SlackApiError. */
function dmOf(ws: Workspace, p: Json) {
  const channel = ws.channelOf(p, 'channel_id');
  if (!channel.isIm) throw new SlackApiError('method_not_supported_for_channel_type');
  return channel;
}

/** The root ts of an existing thread. @throws SlackApiError `invalid_thread_ts`. */
function threadRoot(ws: Workspace, channel: string, threadTs: string): string {
  const parent = TS_PATTERN.test(threadTs) ? ws.message(channel, threadTs) : undefined;
  if (!parent || parent.deleted) throw new SlackApiError('invalid_thread_ts');
  return parent.threadTs ?? parent.ts;
}

function setSuggestedPrompts(ws: Workspace, p: Json): Json {
  const channel = dmOf(ws, p);
  const raw = jsonParam(p, 'prompts');
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > 4) throw invalid('prompts must be 1 to 4 prompts');
  const prompts = raw.map((prompt: unknown, i) => {
    const { title, message } = (prompt ?? {}) as { title?: unknown; message?: unknown };
    if (typeof title !== 'string' || title === '' || typeof message !== 'string' || message === '')
      throw invalid(`prompts[${i}] needs a title and a message`);
    return { title, message };
  });
  const threadTs = str(p, 'thread_ts') || undefined;
  const state = agentState(ws);
  let shownAt: SuggestedPromptsRecord['shownAt'];
  if (state.appView === 'agent') shownAt = threadTs === undefined ? 'tab' : undefined;
  else if (threadTs !== undefined) shownAt = threadRoot(ws, channel.id, threadTs);
  else shownAt = ws.messageList.findLast((m) => m.channel === channel.id && !m.deleted && m.threadTs === undefined)?.ts;
  const title = str(p, 'title') || undefined;
  state.suggestedPrompts.push({ channel: channel.id, threadTs, title, prompts, shownAt, at: ws.now() });
  return {};
}

function setTitle(ws: Workspace, p: Json): Json {
  const channel = dmOf(ws, p);
  const threadTs = threadRoot(ws, channel.id, required(p, 'thread_ts'));
  const title = required(p, 'title');
  agentState(ws).titles.push({ channel: channel.id, threadTs, title, at: ws.now() });
  return {};
}

/** The user's DM with the app, which every event here names. @throws Error for an unknown user. */
function dmFor(ws: Workspace, caller: string, user: string): string {
  if (!ws.users.has(user)) throw new Error(`${caller}: unknown user ${user}`);
  return ws.openIm(user).id;
}

/** The `context` of what a user views: one channel entity, or `{}` for nothing. @throws Error for an unknown channel. */
function viewedContext(ws: Workspace, caller: string, viewing: string | undefined): Json {
  if (viewing === undefined) return {};
  if (!ws.channels.has(viewing)) throw new Error(`${caller}: unknown channel ${viewing}`);
  return { entities: [{ type: 'slack#/types/channel_id', value: viewing, team_id: ws.teamId }] };
}

/** See FakeSlack.appHomeOpenedEvent. */
export function appHomeOpenedEvent(
  ws: Workspace,
  input: { user: string; tab: 'home' | 'messages'; viewing?: string; view?: Json | undefined },
): SlackEvent {
  const channel = dmFor(ws, 'appHomeOpenedEvent', input.user);
  const withContext =
    input.tab === 'messages' &&
    input.viewing !== undefined &&
    agentState(ws).appView === 'agent' &&
    ws.botEvents.includes('app_context_changed');
  return {
    type: 'app_home_opened',
    user: input.user,
    channel,
    tab: input.tab,
    ...(input.tab === 'home' && input.view ? { view: input.view } : {}),
    ...(withContext ? { context: viewedContext(ws, 'appHomeOpenedEvent', input.viewing) } : {}),
    event_ts: ws.nextTs(),
  };
}

/** See FakeSlack.appContextChangedEvent. */
export function appContextChangedEvent(ws: Workspace, input: { user: string; viewing?: string }): SlackEvent {
  const channel = dmFor(ws, 'appContextChangedEvent', input.user);
  const context = viewedContext(ws, 'appContextChangedEvent', input.viewing);
  return { type: 'app_context_changed', channel, user: input.user, context, event_ts: ws.nextTs() };
}

/** The `assistant_thread` object of the assistant view's events. */
function assistantThread(ws: Workspace, caller: string, user: string, threadTs: string, viewing?: string): Json {
  const channel = dmFor(ws, caller, user);
  if (viewing !== undefined && !ws.channels.has(viewing)) throw new Error(`${caller}: unknown channel ${viewing}`);
  return {
    user_id: user,
    context: { ...(viewing ? { channel_id: viewing } : {}), team_id: ws.teamId, enterprise_id: null },
    channel_id: channel,
    thread_ts: threadTs,
  };
}

/** See FakeSlack.assistantThreadStartedEvent: the thread's root message is made in the DM. */
export function assistantThreadStartedEvent(ws: Workspace, input: { user: string; viewing?: string }): SlackEvent {
  const channel = dmFor(ws, 'assistantThreadStartedEvent', input.user);
  const root = ws.storeMessage({
    channel,
    user: ws.botUserId,
    botId: ws.botId,
    text: 'New chat',
    blocks: undefined,
    threadTs: undefined,
    files: [],
    via: 'assistant_thread',
    method: 'assistant_thread',
  });
  const thread = assistantThread(ws, 'assistantThreadStartedEvent', input.user, root.ts, input.viewing);
  return { type: 'assistant_thread_started', assistant_thread: thread, event_ts: ws.nextTs() };
}

/** See FakeSlack.assistantThreadContextChangedEvent. @throws Error for a thread that does not exist in the user's DM. */
export function assistantThreadContextChangedEvent(
  ws: Workspace,
  input: { user: string; threadTs: string; viewing?: string },
): SlackEvent {
  const channel = dmFor(ws, 'assistantThreadContextChangedEvent', input.user);
  if (!ws.message(channel, input.threadTs))
    throw new Error(`assistantThreadContextChangedEvent: no thread ${input.threadTs} in ${channel}`);
  const thread = assistantThread(ws, 'assistantThreadContextChangedEvent', input.user, input.threadTs, input.viewing);
  return { type: 'assistant_thread_context_changed', assistant_thread: thread, event_ts: ws.nextTs() };
}
