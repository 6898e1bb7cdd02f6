/**
 * /settings: an admin chooses a channel's chat, image and vision models and its system prompt
 * (checked against the service's live lists), and on Discord whether answers there open a
 * thread (`auto_thread`), and whether a long answer notifies its asker when it ends (`notify`:
 * features/answer-notice.ts), resets them, or reads what applies and where each value comes
 * from (the channel, the environment's default, or the service's choice).
 */

import type { Core } from '../core.ts';
import { OptionError } from '../errors.ts';
import { matchLocale } from '../i18n/locales.ts';
import type { ModelLists } from '../models/catalog.ts';
import type { Resolved } from '../models/defaults.ts';
import type { CommandContext, OutgoingMessage } from '../platform.ts';
import {
  type ChannelSettings,
  SETTING_FIELDS,
  SETTING_NAMES,
  type SettingName,
  type SettingsUpdate,
} from '../state/settings.ts';

/** Longest system prompt, in characters. */
export const MAX_SYSTEM_PROMPT = 4000;

/** What /settings was asked to do; every field optional (none: show). */
export interface SettingsChange {
  chat_model?: string;
  image_model?: string;
  vision_model?: string;
  system_prompt?: string;
  /** Discord: /chat and mentions in the channel open a thread for their answer. */
  auto_thread?: boolean;
  /** Whether an answer that took longer than NOTIFY_AFTER_SECONDS notifies its asker when it ends (default on). */
  notify?: boolean;
  /** The language of the channel's public messages: a shipped locale (i18n/locales.ts). */
  locale?: string;
  /** `all` or one setting name. */
  reset?: 'all' | SettingName;
}

/** Why `auto_thread` is refused on Slack. */
export const AUTO_THREAD_ON_SLACK =
  "`auto_thread` is for Discord: on Slack every answer is in a thread already (a mention's thread, a /chat's question thread).";

/** Up to three listed names that contain what was typed, for an error message. */
function suggestions(typed: string, names: readonly string[]): string {
  const query = typed.toLowerCase();
  const near = names.filter((n) => n.toLowerCase().includes(query) || query.includes(n.toLowerCase())).slice(0, 3);
  const shown = (near.length ? near : names.slice(0, 3)).map((n) => `\`${n}\``).join(', ');
  return shown ? ` Try ${shown}, or see /models.` : ' The service lists none.';
}

/**
 * The value as the service spells it.
 * @throws OptionError naming the setting, what was given, and close names.
 */
function checkModel(setting: SettingName, typed: string, lists: ModelLists): string {
  const names = setting === 'image_model' ? lists.image.map((m) => m.display_name) : lists.text;
  const found = names.find((n) => n === typed) ?? names.find((n) => n.toLowerCase() === typed.toLowerCase());
  if (!found)
    throw new OptionError(
      `\`${setting}\`: the service lists no ${setting === 'image_model' ? 'image' : 'text'} model \`${typed}\`.${suggestions(typed, names)}`,
    );
  return found;
}

const SOURCE_WORDS: Record<Resolved['source'], string> = {
  channel: 'set for this channel',
  environment: "the bot's default",
  service: "the service's choice",
};

function describe(resolved: Resolved, serviceWord: string): string {
  return `${resolved.value ? `\`${resolved.value}\`` : serviceWord} — ${SOURCE_WORDS[resolved.source]}`;
}

/**
 * Applies `change` to the channel of `ctx` (when it holds anything) and shows the result,
 * only to the admin.
 * @throws OptionError for an unknown model or a system prompt that is too long;
 *   ServiceError subclasses when the model lists cannot be fetched to check a model.
 */
export async function changeSettings(ctx: CommandContext, core: Core, change: SettingsChange): Promise<void> {
  const updates: Partial<Record<keyof ChannelSettings, string | boolean | undefined>> = {};
  if (change.reset)
    for (const name of change.reset === 'all' ? SETTING_NAMES : [change.reset])
      updates[SETTING_FIELDS[name]] = undefined;
  const models = (['chat_model', 'image_model', 'vision_model'] as const).filter((name) => change[name] !== undefined);
  if (models.length) {
    const lists = await core.catalog.lists(ctx.signal);
    for (const name of models) updates[SETTING_FIELDS[name]] = checkModel(name, change[name]!, lists);
  }
  if (change.system_prompt !== undefined) {
    if (change.system_prompt.length > MAX_SYSTEM_PROMPT)
      throw new OptionError(
        `\`system_prompt\` is too long (${change.system_prompt.length} characters; at most ${MAX_SYSTEM_PROMPT}).`,
      );
    updates.systemPrompt = change.system_prompt.trim() || undefined;
  }
  if (change.auto_thread !== undefined) {
    if (ctx.platform === 'slack') throw new OptionError(AUTO_THREAD_ON_SLACK);
    // Off is the default: stored as no value.
    updates.autoThread = change.auto_thread || undefined;
  }
  // On is the default: stored as no value, off as `false`.
  if (change.notify !== undefined) updates.notify = change.notify ? undefined : false;
  if (change.locale !== undefined) updates.locale = matchLocale(change.locale) ?? change.locale;
  const changed = Object.keys(updates).length > 0;
  if (changed) {
    await core.settings.update(ctx.channelKey, updates as SettingsUpdate);
    ctx.log.info({ channelKey: ctx.channelKey, changed: Object.keys(updates) }, 'channel settings changed');
  }
  await ctx.reply.sendEphemeral(await settingsMessage(ctx, core, changed));
}

/** The `auto_thread` field when it is on. */
const AUTO_THREAD_ON = 'on — a /chat or a mention here is answered in a new thread — set for this channel';

/** The `notify` field: whether a long answer here notifies its asker, and why. */
function notifyValue(core: Core, notify: boolean | undefined): string {
  const seconds = core.limits.notifyAfterSeconds;
  if (seconds <= 0) return "off — NOTIFY_AFTER_SECONDS is 0: the bot's default";
  if (notify === false) return 'off — set for this channel';
  return `on — the asker of an answer that takes longer than ${seconds} s is notified when it ends — the bot's default`;
}

/** The card that shows every setting of the channel and its source. */
async function settingsMessage(ctx: CommandContext, core: Core, changed: boolean): Promise<OutgoingMessage> {
  const resolved = await core.models.forChannel(ctx.channelKey, ctx.signal);
  const prompt = resolved.systemPrompt;
  const own = await core.settings.get(ctx.channelKey);
  const threads =
    ctx.platform === 'discord' ? [{ name: 'auto_thread', value: own.autoThread ? AUTO_THREAD_ON : 'off' }] : [];
  return {
    content: changed ? 'Settings saved.' : '',
    cards: [
      {
        title: 'Settings of this channel',
        fields: [
          { name: 'chat_model', value: describe(resolved.chat, "the service's first listed model") },
          // Without a vision model of its own, a channel's requests with images use its chat model.
          {
            name: 'vision_model',
            value:
              resolved.vision === resolved.chat
                ? `\`${resolved.vision.value}\` — the chat model (no vision model set)`
                : describe(resolved.vision, ''),
          },
          { name: 'image_model', value: describe(resolved.image, "the service's choice") },
          {
            name: 'system_prompt',
            value: prompt
              ? `${prompt.length > 900 ? `${prompt.slice(0, 900)}…` : prompt} — set for this channel`
              : 'none',
          },
          ...threads,
          { name: 'notify', value: notifyValue(core, own.notify) },
          {
            name: 'locale',
            value: own.locale
              ? `\`${own.locale}\` — set for this channel`
              : "the place's own language (Discord: the server's), else the bot's default",
          },
        ],
        // Slack has no option pickers: there options are typed `--name value`.
        footer:
          ctx.platform === 'slack'
            ? 'Change with /settings --chat_model <id> (and --image_model, --vision_model, --system_prompt, --notify on|off); undo with --reset.'
            : 'Change with /settings chat_model:<id> (and image_model, vision_model, system_prompt, auto_thread, notify); undo with reset.',
      },
    ],
  };
}
