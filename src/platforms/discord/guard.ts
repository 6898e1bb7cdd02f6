/**
 * A guard in front of discord.js for gateway packets it cannot build an object from. An
 * INTERACTION_CREATE with neither `member` (guilds) nor `user` (DMs) makes discord.js throw
 * while building the interaction (`data.user ?? data.member.user`), inside its gateway
 * listener: an unhandled promise rejection with a stack trace, and no answer for the user.
 *
 * discord.js emits every dispatch as the client's `raw` event before it handles it, with the
 * same packet object; the guard renames such a packet there, so that discord.js finds no
 * handler for it and skips it, then answers the interaction with its id and token (which is
 * all an answer needs) and logs one line.
 */

import {
  type Client,
  Events,
  type Interaction,
  InteractionResponseType,
  InteractionType,
  type Message,
  MessageFlags,
  Routes,
} from 'discord.js';
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { type Locale, resolveLocale, SOURCE_LOCALE } from '../../core/i18n/locales.ts';
import { wordsOf } from '../../core/i18n/words.ts';
import { RESTARTING_KEY } from '../../core/running.ts';
import type { Logger } from '../../log.ts';
import { API_NO_MENTIONS, NO_MENTIONS } from './rest.ts';

/** What the user reads when Discord sent their interaction without saying who they are. */
export const MALFORMED_INTERACTION_TEXT: MessageKey = 'discord.malformed_interaction';

/** The event name a guarded packet is given: discord.js has no handler for it. */
const SKIPPED = 'GENBOT_SKIPPED_MALFORMED_INTERACTION';

/** The fields of a gateway dispatch the guard reads. */
interface RawPacket {
  t?: unknown;
  d?: unknown;
}

/** The fields of an INTERACTION_CREATE payload the guard reads. */
interface RawInteraction {
  id?: unknown;
  token?: unknown;
  type?: unknown;
  user?: unknown;
  member?: { user?: unknown } | null;
  guild_id?: unknown;
  /** The user's language (Discord sends it with every interaction but a PING). */
  locale?: unknown;
  channel_id?: unknown;
  data?: { name?: unknown; custom_id?: unknown } | null;
}

/**
 * The interaction of an INTERACTION_CREATE packet that names no invoker (neither `user` nor
 * `member.user`), or undefined for any other packet.
 */
export function malformedInteraction(packet: unknown): RawInteraction | undefined {
  const { t, d } = (packet ?? {}) as RawPacket;
  if (t !== 'INTERACTION_CREATE' || typeof d !== 'object' || d === null) return undefined;
  const interaction = d as RawInteraction;
  if (interaction.user || interaction.member?.user) return undefined;
  return interaction;
}

/**
 * Installs the guard on `client` (before it logs in): a malformed interaction is kept from
 * discord.js, answered with {@link MALFORMED_INTERACTION_TEXT} (only to its user; an empty
 * list for an autocomplete) and logged once as a warning.
 */
export function guardMalformedInteractions(client: Client, log: Logger, defaultLocale: Locale = SOURCE_LOCALE): void {
  client.on(Events.Raw, (packet: RawPacket) => {
    const interaction = malformedInteraction(packet);
    if (!interaction) return;
    packet.t = SKIPPED;
    const about = {
      interaction: typeof interaction.id === 'string' ? interaction.id : undefined,
      type: interaction.type,
      command: interaction.data?.name ?? interaction.data?.custom_id,
      guild: interaction.guild_id,
      channel: interaction.channel_id,
    };
    const message = 'discord sent an interaction with neither member nor user; not run';
    if (typeof interaction.id !== 'string' || typeof interaction.token !== 'string') {
      log.warn({ ...about, answered: false }, message);
      return;
    }
    const body =
      interaction.type === InteractionType.ApplicationCommandAutocomplete
        ? { type: InteractionResponseType.ApplicationCommandAutocompleteResult, data: { choices: [] } }
        : {
            type: InteractionResponseType.ChannelMessageWithSource,
            data: {
              // Only its user sees it: in their language (the interaction's `locale`).
              content: wordsOf(
                resolveLocale(typeof interaction.locale === 'string' ? interaction.locale : undefined, defaultLocale),
              ).t(MALFORMED_INTERACTION_TEXT),
              flags: MessageFlags.Ephemeral,
              allowed_mentions: API_NO_MENTIONS,
            },
          };
    client.rest.post(Routes.interactionCallback(interaction.id, interaction.token), { body, auth: false }).then(
      () => log.warn({ ...about, answered: true }, message),
      (error: unknown) =>
        log.warn(
          { ...about, answered: false, reason: error instanceof Error ? error.message : String(error) },
          message,
        ),
    );
  });
}

/**
 * Refuses new work while the bot stops (running.ts `RESTARTING_KEY`), in the language Discord gave
 * with it, no lookup being started then: an interaction's `locale` (ephemeral; an autocomplete gets
 * an empty list), a message's guild's preferred locale; else DEFAULT_LOCALE.
 * @throws what discord.js throws for the reply.
 */
export async function refuseWhileStopping(
  target: Interaction | Message,
  languages: { defaultLocale: Locale },
): Promise<void> {
  if ('author' in target) {
    const content = wordsOf(resolveLocale(target.guild?.preferredLocale, languages.defaultLocale)).t(RESTARTING_KEY);
    await target.reply({ content, allowedMentions: NO_MENTIONS });
  } else if (target.isAutocomplete()) await target.respond([]);
  else if (target.isRepliable()) {
    const content = wordsOf(resolveLocale(target.locale, languages.defaultLocale)).t(RESTARTING_KEY);
    await target.reply({ content, flags: MessageFlags.Ephemeral });
  }
}
