/**
 * `/settings [chat_model] [image_model] [vision_model] [system_prompt] [auto_thread] [notify] [locale] [reset]`
 * (admins): a channel's models, system prompt, (Discord) whether answers open a thread, and
 * whether a long answer notifies its asker when it ends, the language of its public messages; alone, shows each value and where it
 * comes from.
 */
import type { Command } from '../src/core/command.ts';
import { stringOption } from '../src/core/features/options.ts';
import { changeSettings, MAX_SYSTEM_PROMPT } from '../src/core/features/settings.ts';
import { SHIPPED_LOCALES } from '../src/core/i18n/locales.ts';
import { SETTING_NAMES, type SettingName } from '../src/core/state/settings.ts';

export default {
  name: 'settings',
  description: "Show or change this channel's models and system prompt (admins)",
  adminOnly: true,
  options: [
    {
      name: 'chat_model',
      description: 'Chat model for /chat and mentions here',
      type: 'string',
      maxLength: 100,
      autocomplete: 'text_models',
    },
    {
      name: 'image_model',
      description: 'Image model for /imagine here',
      type: 'string',
      maxLength: 100,
      autocomplete: 'image_models',
    },
    {
      name: 'vision_model',
      description: 'Model for messages with images here',
      type: 'string',
      maxLength: 100,
      autocomplete: 'text_models',
    },
    {
      name: 'system_prompt',
      description: 'Sent first with every chat here',
      type: 'string',
      maxLength: MAX_SYSTEM_PROMPT,
    },
    {
      name: 'auto_thread',
      description: 'Discord: answer each /chat and mention here in a new thread (Slack threads always)',
      type: 'boolean',
    },
    {
      name: 'notify',
      description: 'Mention the asker when an answer that took long ends (on by default)',
      type: 'boolean',
    },
    {
      name: 'locale',
      description: "Language of the bot's public messages here (notes, buttons); replies to one user stay in theirs",
      type: 'string',
      choices: SHIPPED_LOCALES.map((value) => ({ name: value, value })),
    },
    {
      name: 'reset',
      description: 'Back to the default: one setting, or all',
      type: 'string',
      choices: [{ name: 'all', value: 'all' }, ...SETTING_NAMES.map((value) => ({ name: value, value }))],
    },
  ],
  examples: [
    '',
    '--chat_model fake-chat',
    '--system_prompt "Answer in French."',
    '--notify off',
    '--locale de',
    '--reset all',
  ],
  async execute(ctx, core) {
    const o = ctx.options;
    const chat = stringOption(o, 'chat_model');
    const image = stringOption(o, 'image_model');
    const vision = stringOption(o, 'vision_model');
    const reset = stringOption(o, 'reset') as 'all' | SettingName | undefined;
    await changeSettings(ctx, core, {
      ...(chat ? { chat_model: chat } : {}),
      ...(image ? { image_model: image } : {}),
      ...(vision ? { vision_model: vision } : {}),
      ...(typeof o.system_prompt === 'string' ? { system_prompt: o.system_prompt } : {}),
      ...(typeof o.auto_thread === 'boolean' ? { auto_thread: o.auto_thread } : {}),
      ...(typeof o.notify === 'boolean' ? { notify: o.notify } : {}),
      ...(typeof o.locale === 'string' ? { locale: o.locale } : {}),
      ...(reset ? { reset } : {}),
    });
  },
} satisfies Command;
