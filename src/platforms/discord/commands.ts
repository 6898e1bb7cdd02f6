/**
 * Discord application-command JSON derived from the platform-neutral definitions in commands/.
 */
import { ApplicationCommandOptionType, ApplicationCommandType, InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import type { Command, OptionType } from '../../core/command.ts';

const OPTION_TYPES: Record<OptionType, ApplicationCommandOptionType.String | ApplicationCommandOptionType.Integer | ApplicationCommandOptionType.Number | ApplicationCommandOptionType.Boolean> = {
  string: ApplicationCommandOptionType.String,
  integer: ApplicationCommandOptionType.Integer,
  number: ApplicationCommandOptionType.Number,
  boolean: ApplicationCommandOptionType.Boolean,
};

/**
 * The body of `PUT /applications/:id/commands` for one command. Admin-only commands get
 * `default_member_permissions: "0"` (hidden from non-admins; still re-checked at run time).
 */
export function toDiscordCommand(command: Command): RESTPostAPIChatInputApplicationCommandsJSONBody {
  return {
    type: ApplicationCommandType.ChatInput,
    name: command.name,
    description: command.description,
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    ...(command.adminOnly ? { default_member_permissions: '0' } : {}),
    options: command.options.map((option) => {
      const base = { name: option.name, description: option.description, required: option.required ?? false };
      switch (option.type) {
        case 'string':
          return {
            ...base,
            type: ApplicationCommandOptionType.String,
            ...(option.maxLength ? { max_length: option.maxLength } : {}),
            ...(option.choices ? { choices: option.choices.map((c) => ({ name: c.name, value: String(c.value) })) } : {}),
          };
        case 'integer':
        case 'number':
          return {
            ...base,
            type: OPTION_TYPES[option.type] as ApplicationCommandOptionType.Integer,
            ...(option.minValue !== undefined ? { min_value: option.minValue } : {}),
            ...(option.maxValue !== undefined ? { max_value: option.maxValue } : {}),
            ...(option.choices ? { choices: option.choices.map((c) => ({ name: c.name, value: Number(c.value) })) } : {}),
          };
        case 'boolean':
          return { ...base, type: ApplicationCommandOptionType.Boolean };
      }
    }),
  };
}
