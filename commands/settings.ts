/**
 * `/settings [chat_model] [image_model] [vision_model] [system_prompt] [auto_thread] [notify] [locale] [reset]`
 * (admins): a channel's models, system prompt, (Discord) whether answers open a thread, and
 * whether a long answer notifies its asker when it ends, the language of its public messages; alone, shows each value and where it
 * comes from.
 */
import type { Command } from '../src/core/command.ts';
import { choice, texts } from '../src/core/command-words.ts';
import { stringOption } from '../src/core/features/options.ts';
import { changeSettings, MAX_SYSTEM_PROMPT } from '../src/core/features/settings.ts';
import { SHIPPED_LOCALES } from '../src/core/i18n/locales.ts';
import { SETTING_NAMES, type SettingName } from '../src/core/state/settings.ts';

export default {
  name: 'settings',
  ...texts('commands.command.settings'),
  adminOnly: true,
  options: [
    {
      name: 'chat_model',
      ...texts('commands.command.settings.options.chat_model'),
      type: 'string',
      maxLength: 100,
      autocomplete: 'text_models',
    },
    {
      name: 'image_model',
      ...texts('commands.command.settings.options.image_model'),
      type: 'string',
      maxLength: 100,
      autocomplete: 'image_models',
    },
    {
      name: 'vision_model',
      ...texts('commands.command.settings.options.vision_model'),
      type: 'string',
      maxLength: 100,
      autocomplete: 'text_models',
    },
    {
      name: 'system_prompt',
      ...texts('commands.command.settings.options.system_prompt'),
      type: 'string',
      maxLength: MAX_SYSTEM_PROMPT,
    },
    {
      name: 'auto_thread',
      ...texts('commands.command.settings.options.auto_thread'),
      type: 'boolean',
    },
    {
      name: 'notify',
      ...texts('commands.command.settings.options.notify'),
      type: 'boolean',
    },
    {
      name: 'locale',
      ...texts('commands.command.settings.options.locale'),
      type: 'string',
      // Each language by its own name (`Deutsch (de)`), as language pickers show them.
      choices: SHIPPED_LOCALES.map((value) => choice(value, `commands.language.${value}`)),
    },
    {
      name: 'reset',
      ...texts('commands.command.settings.options.reset'),
      type: 'string',
      // A setting is named as its option is (the same in every language).
      choices: [
        choice('all', 'commands.command.settings.options.reset.choices.all'),
        ...SETTING_NAMES.map((value) => ({ name: value, value })),
      ],
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
