/**
 * The language tags Discord sends (docs/i18n.md): every interaction carries the user's client
 * language (`locale`) and, in a guild, the guild's (`guild_locale`, its "preferred locale", which
 * community guilds set); a message carries neither, so a mention speaks the guild's preferred
 * locale (GUILD_CREATE's `preferred_locale`), and a DM message none (DEFAULT_LOCALE).
 */
import type { Interaction, Message } from 'discord.js';
import type { InvocationLocale } from '../../core/i18n/languages.ts';

/** An interaction's tags: the user's `locale`, the guild's `guild_locale` (absent in DMs and user installs outside a guild). */
export function interactionLocale(interaction: Pick<Interaction, 'locale' | 'guildLocale'>): InvocationLocale {
  return { user: interaction.locale, place: interaction.guildLocale ?? undefined };
}

/** A message's tags: only the place's, its guild's preferred locale (Discord sends no user language with a message). */
export function messageLocale(message: Pick<Message, 'guild'>): InvocationLocale {
  return { place: message.guild?.preferredLocale ?? undefined };
}
