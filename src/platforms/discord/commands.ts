/**
 * Discord application-command JSON derived from the platform-neutral definitions in commands/,
 * with each name and description in every shipped language (`name_localizations`,
 * `description_localizations`: docs/i18n.md, "Commands").
 */
import {
  type APIApplicationCommandBasicOption,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { Command, CommandOption } from '../../core/command.ts';
import { choiceNameIn, descriptionIn, nameIn, type Texted } from '../../core/command-words.ts';
import type { Locale } from '../../core/i18n/locales.ts';
import { type Words, wordsOf } from '../../core/i18n/words.ts';
import type { MessageAction } from '../../core/message-action.ts';

/**
 * Discord's locale codes ("Locales" in Discord's reference) for each shipped locale but English:
 * the default name and description are English, so no `en-US` or `en-GB` is sent. Spanish serves
 * both Spain's `es-ES` and Latin America's `es-419`.
 */
export const DISCORD_LOCALES: Readonly<Record<Exclude<Locale, 'en'>, readonly string[]>> = {
  de: ['de'],
  fr: ['fr'],
  es: ['es-ES', 'es-419'],
  'pt-BR': ['pt-BR'],
  ja: ['ja'],
};

/** A localizations map (Discord locale code → text) of `render` in every shipped locale but English. */
export function localizations(render: (words: Words) => string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [locale, codes] of Object.entries(DISCORD_LOCALES) as Array<[Locale, readonly string[]]>) {
    const text = render(wordsOf(locale));
    for (const code of codes) out[code] = text;
  }
  return out;
}

/** `name_localizations` and `description_localizations` of a command or option with words in the catalog; none without. */
function localized(thing: Texted & { name: string; description: string }) {
  if (!thing.text) return {};
  return {
    name_localizations: localizations((w) => nameIn(thing, w)),
    description_localizations: localizations((w) => descriptionIn(thing, w)),
  };
}

/** A choice's `name_localizations`, when its name is words in the catalog. */
function localizedChoice(c: NonNullable<CommandOption['choices']>[number]) {
  return c.text ? { name_localizations: localizations((w) => choiceNameIn(c, w)) } : {};
}

/** `default_member_permissions` of admin-only commands when no admin is listed by id: Manage Server (still re-checked at run time). */
export const ADMIN_COMMAND_PERMISSIONS = String(PermissionFlagsBits.ManageGuild);

/**
 * Where a command is installed and used (Discord's `integration_types` and `contexts`, read for
 * global commands only: interactions/application-commands, "Installation Context" and
 * "Interaction Contexts"). Commands anyone may run are installable by a server (guild install)
 * and by a user (user install), and usable in servers, the bot's DM and private channels (group
 * DMs, DMs between users), where a user's own install answers without the bot being a member
 * (user-install.ts). Admin commands stay with the guild install, in servers and the bot's DM:
 * their settings and lists belong to the servers that added the bot.
 */
export function installationOf(
  adminOnly: boolean,
): Pick<RESTPostAPIChatInputApplicationCommandsJSONBody, 'integration_types' | 'contexts'> {
  return adminOnly
    ? {
        integration_types: [ApplicationIntegrationType.GuildInstall],
        contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
      }
    : {
        integration_types: [ApplicationIntegrationType.GuildInstall, ApplicationIntegrationType.UserInstall],
        contexts: [InteractionContextType.Guild, InteractionContextType.BotDM, InteractionContextType.PrivateChannel],
      };
}

/** One option as Discord's application command option JSON. */
function toDiscordOption(option: CommandOption): APIApplicationCommandBasicOption {
  const base = {
    name: option.name,
    description: option.description,
    ...localized(option),
    required: option.required ?? false,
  };
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
            ? { choices: option.choices.map((c) => ({ name: c.name, ...localizedChoice(c), value: String(c.value) })) }
            : {}),
      };
    case 'integer':
    case 'number': {
      const numeric = {
        ...base,
        ...(option.minValue !== undefined ? { min_value: option.minValue } : {}),
        ...(option.maxValue !== undefined ? { max_value: option.maxValue } : {}),
        ...(option.choices
          ? { choices: option.choices.map((c) => ({ name: c.name, ...localizedChoice(c), value: Number(c.value) })) }
          : {}),
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

/** The admins the operator lists (`ADMIN_USER_IDS`, `ADMIN_ROLE_IDS`), as registration reads them. */
export interface ListedAdmins {
  /** User ids (Discord snowflakes). */
  userIds: readonly string[];
  /** Role ids (Discord snowflakes). */
  roleIds: readonly string[];
}

/**
 * The body of `PUT /applications/:id/commands` for one command (Discord's "Create Global
 * Application Command" JSON), its names and descriptions localized ({@link DISCORD_LOCALES}). Admin-only commands get `default_member_permissions` Manage
 * Server: Discord then shows them only to members who hold it (or whom a server admin allows
 * under Integrations). With `admins` listing anyone (`ADMIN_USER_IDS`, `ADMIN_ROLE_IDS`), they
 * get none, or the listed admins without Manage Server would not see them; the bot checks who
 * runs an admin command when it runs, either way (runCommand).
 * @param admins the admins the operator lists; none when undefined.
 */
export function toDiscordCommand(
  command: Command,
  admins?: ListedAdmins,
): RESTPostAPIChatInputApplicationCommandsJSONBody {
  // Admins listed by id are people Discord's permissions know nothing of.
  const listed = (admins?.userIds.length ?? 0) + (admins?.roleIds.length ?? 0) > 0;
  const hidden = command.adminOnly && !listed;
  return {
    type: ApplicationCommandType.ChatInput,
    name: command.name,
    description: command.description,
    ...localized(command),
    ...installationOf(command.adminOnly === true),
    ...(hidden ? { default_member_permissions: ADMIN_COMMAND_PERMISSIONS } : {}),
    options: command.options.map(toDiscordOption),
  };
}

/**
 * The body of `PUT /applications/:id/commands` for one message action: a message command
 * (type 3, MESSAGE: Apps → <name> in a message's menu), which has a name (1–32 characters,
 * spaces and capitals allowed) and neither description nor options (Discord refuses them). Anyone
 * who may use the app's commands sees it, in servers and in the DM with the bot, and, through
 * their own install of the app, where the bot is not a member ({@link installationOf}).
 */
export function toDiscordMessageCommand(action: MessageAction): RESTPostAPIContextMenuApplicationCommandsJSONBody {
  return {
    type: ApplicationCommandType.Message,
    name: action.name,
    ...(action.text ? { name_localizations: localizations((w) => nameIn(action, w)) } : {}),
    ...installationOf(false),
  };
}
