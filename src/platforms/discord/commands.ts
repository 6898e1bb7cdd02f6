/**
 * Discord application-command JSON derived from the platform-neutral definitions in commands/.
 */
import {
  type APIApplicationCommandBasicOption,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { Command, CommandOption } from '../../core/command.ts';

/** `default_member_permissions` of admin-only commands: Manage Server (still re-checked at run time). */
export const ADMIN_COMMAND_PERMISSIONS = String(PermissionFlagsBits.ManageGuild);

/** One option as Discord's application command option JSON. */
function toDiscordOption(option: CommandOption): APIApplicationCommandBasicOption {
  const base = { name: option.name, description: option.description, required: option.required ?? false };
  switch (option.type) {
    case 'string':
      return {
        ...base,
        type: ApplicationCommandOptionType.String,
        ...(option.maxLength ? { max_length: option.maxLength } : {}),
        // Discord refuses choices together with autocomplete.
        ...(option.autocomplete
          ? { autocomplete: true }
          : option.choices
            ? { choices: option.choices.map((c) => ({ name: c.name, value: String(c.value) })) }
            : {}),
      };
    case 'integer':
    case 'number': {
      const numeric = {
        ...base,
        ...(option.minValue !== undefined ? { min_value: option.minValue } : {}),
        ...(option.maxValue !== undefined ? { max_value: option.maxValue } : {}),
        ...(option.choices ? { choices: option.choices.map((c) => ({ name: c.name, value: Number(c.value) })) } : {}),
      };
      return option.type === 'integer'
        ? { ...numeric, type: ApplicationCommandOptionType.Integer }
        : { ...numeric, type: ApplicationCommandOptionType.Number };
    }
    case 'boolean':
      return { ...base, type: ApplicationCommandOptionType.Boolean };
    case 'attachment':
      return { ...base, type: ApplicationCommandOptionType.Attachment };
  }
}

/**
 * The body of `PUT /applications/:id/commands` for one command. Admin-only commands get
 * `default_member_permissions` Manage Server (hidden from other members unless a server admin
 * overrides it under Integrations; the bot re-checks at run time either way).
 */
export function toDiscordCommand(command: Command): RESTPostAPIChatInputApplicationCommandsJSONBody {
  return {
    type: ApplicationCommandType.ChatInput,
    name: command.name,
    description: command.description,
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    ...(command.adminOnly ? { default_member_permissions: ADMIN_COMMAND_PERMISSIONS } : {}),
    options: command.options.map(toDiscordOption),
  };
}
