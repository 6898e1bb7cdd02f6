/**
 * The part of the FakeSlack facade for AI apps and the App Home (agent.ts, home.ts): the events
 * Slack sends when a user opens the app's tabs, looks at a channel beside it, or starts an
 * assistant thread, and what the app did there (suggested prompts, thread titles, Home tab
 * views), and presses of the Home tab's buttons (home-actions.ts). FakeSlack (fake.ts) extends it; the rest of the facade is there and in core.ts.
 */
import type { Server } from 'node:http';
import {
  type AgentSettings,
  agentState,
  appContextChangedEvent,
  appHomeOpenedEvent,
  assistantThreadContextChangedEvent,
  assistantThreadStartedEvent,
  resetAgent,
  type SuggestedPromptsRecord,
  type ThreadTitleRecord,
} from './agent.ts';
import { FakeSlackCore } from './core.ts';
import { homePublishes, homeViewOf, type PublishedHome } from './home.ts';
import { type HomeActionInput, type HomeActionResult, sendHomeAction } from './home-actions.ts';
import type { SignOptions, SlackEvent } from './inbound-types.ts';
import type { FakeSlackOptions } from './types.ts';

/** FakeSlackCore with the AI-app and App Home surface; FakeSlack extends it. */
export class FakeSlackAgentSurface extends FakeSlackCore {
  protected constructor(server: Server, port: number, o: FakeSlackOptions) {
    super(server, port, o);
    this.setAgent({ appView: o.appView ?? 'agent', homeTab: o.homeTab ?? true });
  }

  /** The app's AI-app experience and Home tab setting now. */
  get agentSettings(): AgentSettings {
    const { appView, homeTab } = agentState(this.ws);
    return { appView, homeTab };
  }

  /** Changes the app's experience (`agent_view` / `assistant_view`) or its Home tab from now on (as after editing its manifest). */
  setAgent(patch: Partial<AgentSettings>): void {
    Object.assign(agentState(this.ws), patch);
  }

  /**
   * A user opens one of the app's tabs: the `app_home_opened` event Slack sends (`channel`: the
   * user's DM with the app, opened if needed; `view`: the Home tab published for the user
   * before, if any; on the Messages tab of an agent app subscribed to `app_context_changed`,
   * the `context` of `viewing`). Send it with sendEvent / sendSocketEvent.
   * @throws Error for an unknown user or channel.
   */
  appHomeOpenedEvent(input: { user: string; tab: 'home' | 'messages'; viewing?: string }): SlackEvent {
    return appHomeOpenedEvent(this.ws, { ...input, view: homeViewOf(this.ws, input.user)?.view });
  }

  /**
   * What a user views beside the agent changed (agent view only): `app_context_changed` naming
   * `viewing` as a `slack#/types/channel_id` entity, or an empty context without it.
   * @throws Error for an unknown user or channel.
   */
  appContextChangedEvent(input: { user: string; viewing?: string }): SlackEvent {
    return appContextChangedEvent(this.ws, input);
  }

  /**
   * A user starts an assistant thread (assistant view only): Slack makes the thread's root in
   * the user's DM (the app's message) and sends `assistant_thread_started` with its `thread_ts`
   * and the channel the user views. The user's messages there are imMessageEvent with `threadTs`.
   * @throws Error for an unknown user or channel.
   */
  assistantThreadStartedEvent(input: { user: string; viewing?: string }): SlackEvent {
    return assistantThreadStartedEvent(this.ws, input);
  }

  /** The user of an assistant thread looks at another channel: `assistant_thread_context_changed`. @throws Error for an unknown thread. */
  assistantThreadContextChangedEvent(input: { user: string; threadTs: string; viewing?: string }): SlackEvent {
    return assistantThreadContextChangedEvent(this.ws, input);
  }

  /** Every accepted assistant.threads.setSuggestedPrompts, oldest first, with where users see the prompts. */
  get suggestedPrompts(): readonly SuggestedPromptsRecord[] {
    return agentState(this.ws).suggestedPrompts;
  }

  /** Every accepted assistant.threads.setTitle, oldest first. */
  get threadTitles(): readonly ThreadTitleRecord[] {
    return agentState(this.ws).titles;
  }

  /** Every accepted views.publish, oldest first. */
  get homePublishes(): readonly PublishedHome[] {
    return homePublishes(this.ws);
  }

  /** The Home tab `user` sees now, or undefined when none was published for them. */
  homeView(user: string): PublishedHome | undefined {
    return homeViewOf(this.ws, user);
  }

  /**
   * A user presses a button of their Home tab: POSTs the `block_actions` payload Slack sends for
   * a Home view (home-actions.ts: `container.type: 'view'`, the `view`, no `response_url`),
   * signed, to `botUrl` + `/slack/events`; a late or failed ack is recorded in
   * platformFailures. `forgedFrom` forges a press of another user's button (a payload Slack never
   * sends), to test the app's own checks.
   * @throws Error when no user could make that press (no published Home, no such button).
   */
  sendHomeAction(botUrl: string, input: HomeActionInput, sign: SignOptions = {}): Promise<HomeActionResult> {
    return sendHomeAction(this.ws, botUrl, input, sign);
  }

  /** As FakeSlackCore.reset, and forgets suggested prompts, titles and Home tab views (not the settings). */
  override reset(): void {
    super.reset();
    resetAgent(this.ws);
    homePublishes(this.ws).length = 0;
  }
}
