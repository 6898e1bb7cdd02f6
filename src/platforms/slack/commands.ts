/**
 * Slash commands on Slack: the platform-neutral CommandContext built from a command's form
 * fields (options parsed from its text, options.ts), answered in the channel by a SlackReply;
 * ephemeral sentences go through the command's `response_url`.
 */
import type { RespondFn, SlashCommand } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { runCommand, type Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { Logger } from '../../log.ts';
import { parseSlashText } from './options.ts';
import { SlackReply } from './reply.ts';
import { escapeSlackText } from './text.ts';

/**
 * The bot scopes slash commands need: the commands themselves, posting and editing (also in
 * public channels the bot was not added to), uploading images.
 */
export const SLACK_COMMAND_SCOPES = ['commands', 'chat:write', 'chat:write.public', 'files:write'] as const;

/**
 * Runs one slash command (already acked).
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleSlashCommand(
  command: Command,
  slash: SlashCommand,
  client: WebClient,
  respond: RespondFn,
  deps: { core: Core; log: Logger },
  signal: AbortSignal,
): Promise<void> {
  const log = deps.log.child({ platform: 'slack', command: command.name, channel: slash.channel_id, trigger: slash.trigger_id });
  const ephemeral = async (text: string) => {
    try {
      await respond({ response_type: 'ephemeral', text: escapeSlackText(text) });
    } catch (error) {
      log.warn({ err: error }, 'response_url failed; trying chat.postEphemeral');
      await client.chat.postEphemeral({ channel: slash.channel_id, user: slash.user_id, text: escapeSlackText(text) });
    }
  };
  const reply = new SlackReply(client, { channel: slash.channel_id, continueInThread: true }, ephemeral, log);
  await runCommand(command, {
    platform: 'slack',
    conversationId: `slack:${slash.team_id}:${slash.channel_id}`,
    // Admin status needs users.info; no Slack command is admin-only yet.
    user: { id: slash.user_id, name: slash.user_name, isAdmin: false },
    options: parseSlashText(command, slash.text),
    attachments: [],
    signal,
    log,
    reply,
  }, deps.core);
}
