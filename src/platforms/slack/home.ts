/**
 * The app's Home tab on Slack (issue 21, item 3), published with `views.publish` (no scope;
 * `features.app_home.home_tab_enabled`) each time a user opens it (`app_home_opened`, tab
 * `home`: agent.ts): what the bot does where, the user's own use exactly as `/usage` shows it
 * (the command runs with a reply that keeps its card), the slash commands and message actions
 * with one line each, and, for admins, the channels' settings made with `/settings`
 * (state/settings.ts lists the channels of a workspace that hold some), at most
 * {@link MAX_CHANNELS} channels. Under the user's use, their recent conversations with the bot,
 * each with an Export button (home-export.ts, issue 41 item 3); after a press, the Home is
 * published again with the result at its top.
 *
 * Within Slack's limits for a view (Block Kit reference, "Home tab"; docs/platform-limits.md):
 * at most 100 blocks ({@link MAX_HOME_BLOCKS}), a header's text 150 characters, a section's
 * 3,000 (blocks.ts cuts them), and text from users (a system prompt) escaped and cut.
 */

import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { Words } from '../../core/i18n/words.ts';
import { channelKey, parseConversationKey } from '../../core/keys.ts';
import type { MessageAction } from '../../core/message-action.ts';
import type { CommandContext, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { blocksOf } from './blocks.ts';
import { homeExportBlocks } from './home-export.ts';
import { slackShortcutsOf } from './message-actions.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { escapeSlackText } from './text.ts';
import type { SlackDirectory } from './users.ts';

/** Slack's limit of blocks in a Home tab view. */
export const MAX_HOME_BLOCKS = 100;
/** Channels whose settings an admin's Home tab shows at most (the newest changes). */
export const MAX_CHANNELS = 40;
/** Characters of a system prompt shown on the Home tab. */
const PROMPT_CHARS = 300;

/** What the Home tab needs from the adapter. */
export interface HomeDeps {
  core: Core;
  directory: SlackDirectory;
  commands: readonly Command[];
  messageActions: readonly MessageAction[];
}

/** A section of mrkdwn text (at most 3,000 characters, Slack's limit). */
const section = (text: string): KnownBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: text.slice(0, 3000) },
});
const header = (text: string): KnownBlock => ({
  type: 'header',
  text: { type: 'plain_text', text: text.slice(0, 150) },
});

/** A ReplyChannel that keeps what a command shows instead of showing it (the Home tab's /usage). */
function keepingReply(kept: OutgoingMessage[]): ReplyChannel {
  const keep = async (message: string | OutgoingMessage) => {
    kept.push(typeof message === 'string' ? { content: message } : message);
  };
  return {
    limits: SLACK_MESSAGE_LIMITS,
    defer: async () => undefined,
    send: async (message) => {
      await keep(message);
      return { edit: async () => undefined };
    },
    sendEphemeral: keep,
  };
}

/** The user's use as /usage shows it, as blocks; a line saying why (in `words`) when it cannot be read. */
async function usageBlocks(ctx: CommandContext, deps: HomeDeps, words: Words): Promise<KnownBlock[]> {
  const usage = deps.commands.find((c) => c.name === 'usage');
  if (!usage) return [];
  const kept: OutgoingMessage[] = [];
  try {
    await usage.execute({ ...ctx, reply: keepingReply(kept) }, deps.core);
  } catch (error) {
    ctx.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'home tab: usage not read');
    return [header(words.t('slack.home.usage_title')), section(words.t('slack.home.usage_unreadable'))];
  }
  return kept.flatMap((message) => (blocksOf(message) ?? []) as KnownBlock[]);
}

/** The commands and message actions, one line each (their descriptions as they are defined). */
function commandBlocks(deps: HomeDeps, words: Words): KnownBlock[] {
  const commands = deps.commands.map((c) => `\`/${c.name}\` — ${escapeSlackText(c.description)}`);
  const actions = slackShortcutsOf(deps.messageActions).map((a) =>
    words.t('slack.home.action_line', { name: escapeSlackText(a.name), description: escapeSlackText(a.description) }),
  );
  return [
    header(words.t('slack.home.commands_title')),
    section(commands.join('\n')),
    ...(actions.length ? [section(actions.join('\n'))] : []),
  ];
}

/** One channel's settings in a line each, or undefined when none are set (any more). */
async function channelSettingsText(core: Core, key: string, words: Words): Promise<string | undefined> {
  const at = parseConversationKey(key);
  if (at?.platform !== 'slack' || !/^[A-Z0-9]+$/.test(at.channel)) return undefined;
  const s = await core.settings.get(key);
  const prompt = s.systemPrompt && escapeSlackText(s.systemPrompt.slice(0, PROMPT_CHARS));
  const lines = [
    ...(s.chatModel ? [`chat_model: \`${escapeSlackText(s.chatModel)}\``] : []),
    ...(s.imageModel ? [`image_model: \`${escapeSlackText(s.imageModel)}\``] : []),
    ...(s.visionModel ? [`vision_model: \`${escapeSlackText(s.visionModel)}\``] : []),
    ...(prompt ? [`system_prompt: ${prompt}${s.systemPrompt!.length > PROMPT_CHARS ? '…' : ''}`] : []),
    ...(s.notify === false ? [words.t('slack.home.notify_off')] : []),
  ];
  return lines.length ? `<#${at.channel}>\n${lines.join('\n')}` : undefined;
}

/**
 * For admins: the channels' settings (the newest {@link MAX_CHANNELS}); nothing for anyone else,
 * nor for a user whose rights could not be checked (users.ts RightsNotChecked, logged there).
 */
async function settingsBlocks(ctx: CommandContext, deps: HomeDeps, team: string, words: Words): Promise<KnownBlock[]> {
  if (!(await ctx.user.isAdmin().catch(() => false))) return [];
  const title = header(words.t('slack.home.settings_title'));
  try {
    const listed = await deps.core.settings.channelsWithSettings(`slack:${team}`);
    const shown = listed.slice(-MAX_CHANNELS).reverse();
    const texts = (await Promise.all(shown.map((key) => channelSettingsText(deps.core, key, words)))).filter(
      (t): t is string => t !== undefined,
    );
    if (!texts.length) return [title, section(words.t('slack.home.settings_none'))];
    const more = listed.length - shown.length;
    return [
      title,
      ...texts.map(section),
      ...(more > 0 ? [section(words.t('slack.home.settings_more', { count: more }))] : []),
    ];
  } catch (error) {
    ctx.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'home tab: settings not read');
    return [title, section(words.t('slack.home.settings_unreadable'))];
  }
}

/**
 * The Home tab's blocks for one user (see the file's comment), at most {@link MAX_HOME_BLOCKS},
 * in that user's words (the Home is theirs alone: `core.languages.forUser`, their Slack locale):
 * `more.notice` (the result of a press) first, `more.exports` (home-export.ts) after their use.
 */
export async function homeBlocks(
  ctx: CommandContext,
  deps: HomeDeps,
  team: string,
  more: { notice?: string | undefined; exports?: (words: Words) => Promise<KnownBlock[]> } = {},
): Promise<KnownBlock[]> {
  const words = await deps.core.languages.forUser(ctx);
  const about = [header(words.t('slack.home.about_title')), section(words.t('slack.home.about'))];
  const [usage, exports, settings] = await Promise.all([
    usageBlocks(ctx, deps, words),
    more.exports?.(words) ?? [],
    settingsBlocks(ctx, deps, team, words),
  ]);
  const notice = more.notice ? [section(escapeSlackText(more.notice))] : [];
  return [...notice, ...about, ...usage, ...exports, ...commandBlocks(deps, words), ...settings].slice(
    0,
    MAX_HOME_BLOCKS,
  );
}

/**
 * Publishes a user's Home tab (views.publish). Never throws: a refusal (`not_enabled`: the Home
 * tab is off in the app's settings) or a fault is logged.
 * @param at `channel`: the user's DM with the bot (`app_home_opened` names it); after a press of
 *   the Home, which names none, the user's id stands for it (only the workspace and the user are
 *   read from it: /usage's subject).
 * @param notice a line shown at the top (the result of a press of the Home: home-export.ts).
 */
export async function publishHome(
  client: WebClient,
  deps: HomeDeps,
  at: { team: string; user: string; channel?: string | undefined; ref: string },
  log: Logger,
  notice?: string,
): Promise<void> {
  const where = { platform: 'slack', team: at.team, channel: at.channel ?? at.user } as const;
  const ctx: CommandContext = {
    platform: 'slack',
    conversationId: channelKey(where),
    channelKey: channelKey(where),
    isDirectMessage: true,
    locale: { user: deps.directory.locale(client, at.team, at.user) },
    user: deps.directory.user(client, { team: at.team, id: at.user }),
    options: {},
    files: {},
    signal: AbortSignal.timeout(10_000),
    log,
    ref: at.ref,
    reply: keepingReply([]),
  };
  try {
    const exports = (words: Words) =>
      homeExportBlocks(client, deps.core, { team: at.team, user: at.user, dm: at.channel }, log, words);
    const blocks = await homeBlocks(ctx, deps, at.team, { notice, exports });
    await client.views.publish({ user_id: at.user, view: { type: 'home', blocks } });
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'home tab not published');
  }
}
