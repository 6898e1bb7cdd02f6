/**
 * Slash commands on Slack: the platform-neutral CommandContext built from a command's form
 * fields (options parsed from its text, options.ts), answered in the channel by a SlackReply;
 * ephemeral sentences go through the command's `response_url`.
 */
import type { RespondFn, SlashCommand } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { type Command, optionsPass, runCommand } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { channelKey, conversationKey } from '../../core/keys.ts';
import type { Attachment, OutgoingMessage } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { blocksOf, fallbackTextOf } from './blocks.ts';
import { sendDirect } from './direct.ts';
import { linkAttachment } from './file-links.ts';
import { showCommandHelp } from './help.ts';
import { asksForHelp, parseSlashText } from './options.ts';
import { SlackReply } from './reply.ts';
import type { SlackStreaming } from './stream.ts';
import type { SlackDirectory } from './users.ts';
import { postEphemeral } from './writes.ts';

/**
 * The bot scopes slash commands need: the commands themselves, posting and editing (also in
 * public channels the bot was not added to), uploading images.
 */
export const SLACK_COMMAND_SCOPES = ['commands', 'chat:write', 'chat:write.public', 'files:write'] as const;

/** What a slash command's handling needs from the adapter. */
export interface SlashCommandDeps {
  core: Core;
  log: Logger;
  directory: SlackDirectory;
  commands: readonly Command[];
  apiOrigin: string | undefined;
  streaming: SlackStreaming;
}

/**
 * An ephemeral answer to a slash command: through its `response_url` (no Web API method: Slack
 * documents only its 5 uses, so it spends no bucket), else chat.postEphemeral (the channel's post
 * budget, writes.ts).
 * @throws what chat.postEphemeral throws when both fail.
 */
function ephemeralAnswer(slash: SlashCommand, client: WebClient, respond: RespondFn, deps: SlashCommandDeps) {
  return async (message: OutgoingMessage) => {
    const blocks = blocksOf(message);
    const body = { text: fallbackTextOf(message), ...(blocks ? { blocks } : {}) };
    try {
      await respond({ response_type: 'ephemeral', ...body });
    } catch (error) {
      deps.log.warn({ err: error }, 'response_url failed; trying chat.postEphemeral');
      await postEphemeral(deps.core.scheduler, client, { channel: slash.channel_id, user: slash.user_id, ...body });
    }
  };
}

/**
 * Reads a command's options from its text (options.ts: a slash command's, or what follows
 * `imagine` in the agent view); an attachment option's link becomes an Attachment read with the
 * bot token, a Slack file only for a user who may see it (file-links.ts).
 * @param asker the user (`user_id`) and the conversation (`channel_id`: channel, DM) it runs in.
 * @throws OptionError for text that does not parse; InputError for a Slack file the user may
 *   not see (file-links.ts `linkAttachment`).
 */
export async function readOptions(
  command: Command,
  text: string,
  client: WebClient,
  deps: Pick<SlashCommandDeps, 'core' | 'commands' | 'apiOrigin'>,
  asker: Pick<SlashCommand, 'user_id' | 'channel_id'>,
) {
  const options: Record<string, unknown> = parseSlashText(command, text, deps.commands);
  const files: Record<string, Attachment> = {};
  const fileDeps = { client, downloader: deps.core.downloader, apiOrigin: deps.apiOrigin };
  for (const option of command.options) {
    const value = options[option.name];
    if (option.type === 'attachment' && typeof value === 'string' && value !== '')
      files[option.name] = await linkAttachment(value, fileDeps, { user: asker.user_id, channel: asker.channel_id });
  }
  return { options, files };
}

/** The invoker, and their DM with the bot for files meant for them alone (/export: direct.ts). */
function askerOf(slash: SlashCommand, client: WebClient, deps: SlashCommandDeps) {
  return {
    locale: { user: deps.directory.locale(client, slash.team_id, slash.user_id) },
    user: deps.directory.user(client, { team: slash.team_id, id: slash.user_id, name: slash.user_name }),
    sendDirect: (message: OutgoingMessage) => sendDirect(client, slash.user_id, message),
  };
}

/**
 * The SlackReply of a slash command: in a channel, a command that `showsQuestion` posts the
 * question (`announce`) and answers in its thread, natively streamed for the asker. The words of
 * what the channel reads of it (the question shown, the answer's buttons) are the place's
 * (`core.languages.forPlace`: the channel's /settings locale, else the asker's).
 * @param question the parsed prompt, once the options are read.
 */
function answerReply(
  command: Command,
  at: { slash: SlashCommand; client: WebClient; respond: RespondFn; isDirectMessage: boolean },
  deps: SlashCommandDeps,
  question: () => string | undefined,
) {
  const { slash, client } = at;
  const place = { platform: 'slack' as const, team: slash.team_id, channel: slash.channel_id };
  const words = deps.core.languages.forPlace({
    channelKey: channelKey(place),
    locale: { user: deps.directory.locale(client, slash.team_id, slash.user_id) },
  });
  const announce =
    command.showsQuestion && !at.isDirectMessage
      ? { asker: slash.user_name || slash.user_id, question, words }
      : undefined;
  const reply = new SlackReply(
    client,
    {
      team: slash.team_id,
      channel: slash.channel_id,
      continueInThread: true,
      announce,
      scheduler: deps.core.scheduler,
      words,
      // The answer in the question's thread streams natively, for the asker.
      ...(announce
        ? { native: { streaming: deps.streaming, recipient: { teamId: slash.team_id, userId: slash.user_id } } }
        : {}),
    },
    ephemeralAnswer(slash, client, at.respond, deps),
    deps.log,
  );
  return { reply, announce };
}

/**
 * Runs one slash command (already acked). A /chat in a channel shows its question as soon as its
 * options are read and pass their checks, with "is thinking…" in its thread (SlackReply.defer),
 * before the quota, image, store and service work. Files for the asker alone (/export) go to
 * their DM with the bot ({@link askerOf}): an ephemeral message carries none.
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleSlashCommand(
  command: Command,
  slash: SlashCommand,
  client: WebClient,
  respond: RespondFn,
  deps: SlashCommandDeps,
  signal: AbortSignal,
): Promise<void> {
  const ref = newReference();
  const log = deps.log.child({
    platform: 'slack',
    ref,
    command: command.name,
    channel: slash.channel_id,
    trigger: slash.trigger_id,
  });
  const isDirectMessage = slash.channel_id.startsWith('D') || slash.channel_name === 'directmessage';
  // Options as parsed (read below): the question shown to the channel is the parsed prompt.
  let parsed: Record<string, unknown> = {};
  const { reply, announce } = answerReply(command, { slash, client, respond, isDirectMessage }, { ...deps, log }, () =>
    typeof parsed.prompt === 'string' ? parsed.prompt : undefined,
  );
  if (asksForHelp(slash.text)) {
    await showCommandHelp(command, reply, deps.core, deps.directory.locale(client, slash.team_id, slash.user_id));
    return;
  }
  const read = async () => {
    const read = await readOptions(command, slash.text, client, deps, slash);
    parsed = read.options;
    // The question is shown at once, its thread "is thinking…" (unless the options will be
    // refused: then nothing is public); the answer's first write waits for it.
    if (announce && optionsPass(command, parsed)) void reply.defer().catch(() => undefined);
    return read;
  };
  const where = { platform: 'slack' as const, team: slash.team_id, channel: slash.channel_id };
  await runCommand(
    command,
    {
      platform: 'slack',
      conversationId: conversationKey(where),
      channelKey: channelKey(where),
      isDirectMessage,
      ...askerOf(slash, client, deps),
      options: {},
      files: {},
      signal,
      log,
      ref,
      reply,
      // The question's thread keeps the exchange too: a mention there carries it.
      linkedConversations: () =>
        announce && reply.answerThreadTs ? [conversationKey({ ...where, thread: reply.answerThreadTs })] : [],
    },
    deps.core,
    read,
  );
}
