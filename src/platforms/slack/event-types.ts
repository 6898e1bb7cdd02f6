/**
 * The shapes Slack's message handling shares (events.ts, message-answer.ts, agent.ts,
 * catch-up.ts): a message addressed to the bot, where its event came from, and what handling it
 * needs from the adapter.
 */
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { RunningCommands } from '../../core/running.ts';
import type { Logger } from '../../log.ts';
import type { SlackFile } from './files.ts';
import type { SlackStreaming } from './stream.ts';
import type { SlackDirectory } from './users.ts';

/** The fields of `app_mention` and `message` events the bot reads (conversations.history gives the same). */
export interface SlackUserMessage {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type?: string;
  files?: SlackFile[];
}

/** What an event handler needs from the adapter. */
export interface SlackEventDeps {
  core: Core;
  log: Logger;
  running: RunningCommands;
  /** SLACK_API_URL's origin when set: with Slack's file hosts, where the bot token may go (files.ts slackFileHost). */
  apiOrigin: string | undefined;
  directory: SlackDirectory;
  /** Where Slack refused native streaming (answers in threads stream natively elsewhere). */
  streaming: SlackStreaming;
  /** The slash commands (commands/index.ts): `imagine …` in the agent view runs /imagine. */
  commands: readonly Command[];
}

/** Where an event came from. */
export interface EventMeta {
  eventId: string;
  teamId: string;
  kind: 'mention' | 'dm';
  botUserId: string | undefined;
}
