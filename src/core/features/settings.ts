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
import { type Sentence, sentence, type Words } from '../i18n/words.ts';
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
export const AUTO_THREAD_ON_SLACK: Sentence = sentence('commands.settings.auto_thread_on_slack');

/** Up to three listed names that contain what was typed, for an error message: a hint to try them. */
function suggestions(typed: string, names: readonly string[]): Sentence {
  const query = typed.toLowerCase();
  const near = names.filter((n) => n.toLowerCase().includes(query) || query.includes(n.toLowerCase())).slice(0, 3);
  const shown = (near.length ? near : names.slice(0, 3)).map((n) => `\`${n}\``).join(', ');
  return shown ? sentence('commands.settings.try_models', { names: shown }) : sentence('commands.settings.no_models');
}

/**
 * The value as the service spells it.
 * @throws OptionError naming the setting, what was given, and close names.
 */
function checkModel(setting: SettingName, typed: string, lists: ModelLists): string {
  const names = setting === 'image_model' ? lists.image.map((m) => m.display_name) : lists.text;
  const found = names.find((n) => n === typed) ?? names.find((n) => n.toLowerCase() === typed.toLowerCase());
  if (!found)
    throw new OptionError('commands.settings.unknown_model', {
      setting,
      kind: setting === 'image_model' ? 'image' : 'text',
      typed,
      hint: suggestions(typed, names),
    });
  return found;
}

/** A model setting's value and where it comes from, in `words`; `kind` says what no value means. */
function describe(resolved: Resolved, kind: 'chat' | 'other', words: Words): string {
  return resolved.value
    ? words.t('commands.settings.model_set', { value: resolved.value, source: resolved.source })
    : words.t('commands.settings.model_unset', { kind, source: resolved.source });
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
      throw new OptionError('commands.settings.system_prompt_too_long', {
        length: String(change.system_prompt.length),
        max: String(MAX_SYSTEM_PROMPT),
      });
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
  await ctx.reply.sendEphemeral(await settingsMessage(ctx, core, changed, await core.languages.forUser(ctx)));
}

/** The `notify` field in `words`: whether a long answer here notifies its asker, and why. */
function notifyValue(core: Core, notify: boolean | undefined, words: Words): string {
  const seconds = core.limits.notifyAfterSeconds;
  if (seconds <= 0) return words.t('commands.settings.notify_disabled');
  if (notify === false) return words.t('commands.settings.notify_off');
  return words.t('commands.settings.notify_on', { seconds: String(seconds) });
}

/** The `locale` field in `words`: the channel's language for public messages (by its own name), or where it comes from. */
function localeValue(locale: string | undefined, words: Words): string {
  const shipped = matchLocale(locale);
  if (!locale || !shipped) return words.t('commands.settings.locale_unset');
  return words.t('commands.settings.locale_set', { language: words.t(`commands.language.${shipped}`) });
}

/** The card that shows every setting of the channel and its source, in `words` (the admin's: it is shown to them alone). */
async function settingsMessage(
  ctx: CommandContext,
  core: Core,
  changed: boolean,
  words: Words,
): Promise<OutgoingMessage> {
  const resolved = await core.models.forChannel(ctx.channelKey, ctx.signal);
  const prompt = resolved.systemPrompt;
  const own = await core.settings.get(ctx.channelKey);
  const threads =
    ctx.platform === 'discord'
      ? [
          {
            name: 'auto_thread',
            value: words.t(own.autoThread ? 'commands.settings.auto_thread_on' : 'commands.settings.off'),
          },
        ]
      : [];
  return {
    content: changed ? words.t('commands.settings.saved') : '',
    cards: [
      {
        title: words.t('commands.settings.title'),
        fields: [
          { name: 'chat_model', value: describe(resolved.chat, 'chat', words) },
          // Without a vision model of its own, a channel's requests with images use its chat model.
          {
            name: 'vision_model',
            value:
              resolved.vision === resolved.chat
                ? words.t('commands.settings.vision_is_chat', { value: resolved.vision.value ?? '' })
                : describe(resolved.vision, 'other', words),
          },
          { name: 'image_model', value: describe(resolved.image, 'other', words) },
          {
            name: 'system_prompt',
            value: prompt
              ? words.t('commands.settings.system_prompt_set', {
                  prompt: prompt.length > 900 ? `${prompt.slice(0, 900)}…` : prompt,
                })
              : words.t('commands.settings.none'),
          },
          ...threads,
          { name: 'notify', value: notifyValue(core, own.notify, words) },
          { name: 'locale', value: localeValue(own.locale, words) },
        ],
        // Slack has no option pickers: there options are typed `--name value`.
        footer: words.t('commands.settings.footer', { platform: ctx.platform }),
      },
    ],
  };
}
