/**
 * Slack's experiences for AI apps (issue 21, items 1 and 3), with Bolt's own support where it
 * has it:
 *
 * - The agent view (manifest `features.agent_view`; docs.slack.dev "Migrating to the Agent
 *   messaging experience"): its conversations are the app's Messages tab. Opening it
 *   (`app_home_opened`, `tab: 'messages'`) shows the suggested prompts
 *   (`assistant.threads.setSuggestedPrompts` without `thread_ts`, which would make the call
 *   fail silently there; ASSISTANT_PROMPTS) and, the first time, a one-line greeting (a claim in
 *   the store). `app_context_changed` (and the Messages tab's own `context`) names the channel
 *   the user views: remembered for their conversations (viewed-channel.ts), and forgotten when a
 *   context names no channel (the user views none). Each message there is a `message.im`
 *   (events.ts), answered in its thread (message-answer.ts: title, status, native stream,
 *   `imagine …`, "summarize this channel"). Bolt 5 has no listener of its own for these:
 *   `app.event`, as Slack's samples do.
 * - The assistant view (`features.assistant_view`, for apps made before the agent view): Bolt's
 *   `Assistant` class takes `assistant_thread_started` (the prompts, on the thread, and the
 *   greeting), `assistant_thread_context_changed` (the viewed channel, through a thread context
 *   store kept in the bot's store; a context without a channel forgets it) and the messages of
 *   its threads (handed to events.ts, answered as any DM's).
 * - The Home tab (`tab: 'home'`): published for the user (home.ts).
 */

import { type App, Assistant } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { AssistantPrompt } from '../../config-env.ts';
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { slackClaims } from '../../core/keys.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { newReference } from '../../log.ts';
import { onUserMessage, type SlackEventDeps, type SlackUserMessage } from './events.ts';
import { publishHome } from './home.ts';
import { escapeSlackText } from './text.ts';
import { userWords } from './user-words.ts';
import { channelOfContext, rememberViewed, viewedChannel } from './viewed-channel.ts';
import { postMessage } from './writes.ts';

/** The bot events of the AI-app experiences and the Home tab (the manifest's `bot_events`). */
export const SLACK_AGENT_EVENTS = [
  'app_home_opened',
  'app_context_changed',
  // Sent only to apps still configured with the assistant view.
  'assistant_thread_started',
  'assistant_thread_context_changed',
] as const;

/** The bot scope of assistant.threads.setSuggestedPrompts and setTitle. */
export const SLACK_AGENT_SCOPES = ['assistant:write'] as const;

/** The line the agent view greets a user with, once (in their words). */
export const GREETING: MessageKey = 'slack.agent.greeting';
/** The title above the suggested prompts (in the user's words; the prompts are ASSISTANT_PROMPTS as written). */
export const PROMPTS_TITLE: MessageKey = 'slack.agent.prompts_title';
/** How long a greeting is remembered as posted, in ms. */
const GREETED_MS = 365 * 24 * 60 * 60_000;

/** What the agent view needs from the adapter. */
export interface SlackAgentDeps extends SlackEventDeps {
  /** ASSISTANT_PROMPTS, read each time they are shown (a configuration reload may change them). */
  prompts: () => readonly AssistantPrompt[];
  messageActions: readonly MessageAction[];
}

/** The log line of a failure of the agent view's niceties (no user is waiting for them). */
function failed(deps: SlackAgentDeps, what: string) {
  return (error: unknown) =>
    deps.log.warn({ platform: 'slack', err: error instanceof Error ? error.message : String(error) }, what);
}

/** Posts the greeting to a user once ever (a claim in the store; a store that does not answer: none), in their words. */
async function greetOnce(
  client: WebClient,
  deps: SlackAgentDeps,
  at: { team: string; user: string; channel: string; threadTs?: string | undefined },
): Promise<void> {
  const first = await deps.core.claims.claim(slackClaims.greeting(at.team, at.user), GREETED_MS).catch(() => false);
  if (!first) return;
  const thread = at.threadTs ? { thread_ts: at.threadTs } : {};
  const words = await userWords(client, deps, at.team, at.user);
  await postMessage(deps.core.scheduler, client, {
    channel: at.channel,
    text: escapeSlackText(words.t(GREETING)),
    ...thread,
  });
}

/** The suggested prompts (their title in `at.user`'s words); none when ASSISTANT_PROMPTS is `[]`. `threadTs` only in the assistant view. */
async function suggest(
  client: WebClient,
  deps: SlackAgentDeps,
  at: { team: string; user: string; channel: string },
  threadTs?: string,
): Promise<void> {
  const prompts = deps.prompts();
  if (!prompts.length) return;
  const words = await userWords(client, deps, at.team, at.user);
  await client.assistant.threads.setSuggestedPrompts({
    channel_id: at.channel,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    title: words.t(PROMPTS_TITLE),
    prompts: prompts.map((p) => ({ title: p.title, message: p.message })),
  });
}

/** The `app_home_opened` and `app_context_changed` events (see the file's comment). */
function registerAgentEvents(app: App, deps: SlackAgentDeps): void {
  app.event('app_home_opened', async ({ event, body, client }) => {
    const at = { team: body.team_id, user: event.user, channel: event.channel };
    if (event.tab === 'home') {
      const ref = newReference();
      const log = deps.log.child({ platform: 'slack', ref, command: 'home', user: event.user });
      await publishHome(client, deps, { ...at, ref }, log);
      return;
    }
    if (event.tab !== 'messages') return;
    // A context naming no channel (`{}`, a canvas, a list) means the user views none now: forgotten.
    if (event.context !== undefined) await rememberViewed(deps.core, at, channelOfContext(event.context), deps.log);
    await suggest(client, deps, at).catch(failed(deps, 'slack refused the suggested prompts'));
    await greetOnce(client, deps, at).catch(failed(deps, 'could not post the greeting'));
  });
  app.event('app_context_changed', async ({ event, body }) => {
    await rememberViewed(
      deps.core,
      { team: body.team_id, user: event.user },
      channelOfContext(event.context),
      deps.log,
    );
  });
}

/** A payload of the assistant view's events: who, and what they view. */
interface AssistantPayload {
  user?: string;
  assistant_thread?: { user_id?: string; context?: { channel_id?: string } };
}

/** Bolt's Assistant for the assistant view (see the file's comment). */
function assistantOf(deps: SlackAgentDeps): Assistant {
  const userOf = (payload: unknown) =>
    (payload as AssistantPayload).assistant_thread?.user_id ?? (payload as AssistantPayload).user ?? '';
  const teamOf = (body: unknown) => (body as { team_id?: string }).team_id ?? '';
  return new Assistant({
    threadContextStore: {
      get: async ({ payload, body }) => {
        const channel = await viewedChannel(deps.core, { team: teamOf(body), user: userOf(payload) }).catch(
          () => undefined,
        );
        return channel ? { channel_id: channel } : {};
      },
      save: async ({ payload, body }) => {
        const channel = (payload as AssistantPayload).assistant_thread?.context?.channel_id;
        await rememberViewed(deps.core, { team: teamOf(body), user: userOf(payload) }, channel, deps.log);
      },
    },
    threadStarted: async ({ event, body, client, saveThreadContext }) => {
      const { user_id: user, channel_id: channel, thread_ts: threadTs } = event.assistant_thread;
      await saveThreadContext();
      await suggest(client, deps, { team: body.team_id, user, channel }, threadTs).catch(
        failed(deps, 'slack refused the suggested prompts'),
      );
      await greetOnce(client, deps, { team: body.team_id, user, channel, threadTs }).catch(
        failed(deps, 'could not post the greeting'),
      );
    },
    threadContextChanged: async ({ saveThreadContext }) => saveThreadContext(),
    userMessage: async ({ event, body, client, context }) => {
      await onUserMessage(
        event as unknown as SlackUserMessage,
        { eventId: body.event_id, teamId: body.team_id, kind: 'dm', botUserId: context.botUserId },
        client,
        deps,
      );
    },
  });
}

/** Registers the agent view, the assistant view (Bolt's Assistant) and the Home tab on a Bolt app. */
export function registerAgentView(app: App, deps: SlackAgentDeps): void {
  app.assistant(assistantOf(deps));
  registerAgentEvents(app, deps);
}
