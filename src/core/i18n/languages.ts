/**
 * Whose language the bot speaks (docs/i18n.md, "Whose language"): a reply only its user sees
 * (ephemeral, a DM, a form, App Home) in that user's; a public message (an answer's notes and
 * buttons, the queue line) in the place's, which `/settings locale` sets per channel, else the
 * platform's language of the place (Discord's `guild_locale`; Slack has none: the asker's),
 * else DEFAULT_LOCALE.
 */
import type { SettingsStore } from '../state/settings.ts';
import { type Locale, matchLocale, resolveLocale } from './locales.ts';
import { type Words, wordsOf } from './words.ts';

/**
 * The language tags a platform gave with an invocation, as given (not yet matched to a catalog).
 * Discord: `user` is the interaction's `locale` (absent for a message: Discord sends no language
 * with MESSAGE_CREATE), `place` its `guild_locale`, or the guild's preferred locale for a message
 * (absent in DMs: the user's language is used). Slack: `user` is `users.info`'s `locale` (with
 * `include_locale`), and `place` absent (Slack exposes no workspace language).
 */
export interface InvocationLocale {
  /** A tag, or its lookup under way (Slack's users.info, started when the invocation arrived; never rejects). */
  user?: string | undefined | Promise<string | undefined>;
  place?: string | undefined;
}

/** Where an invocation is and the tags it came with: what {@link Languages} reads. */
export interface LocalePlace {
  /** The channel's key (keys.ts), whose `/settings locale` applies to public messages. */
  channelKey: string;
  locale?: InvocationLocale | undefined;
}

/** Picks the {@link Words} for each reader; one per core. */
export class Languages {
  /**
   * @param settings the channel settings (their `locale` field: `/settings locale`).
   * @param defaultLocale DEFAULT_LOCALE: the language wherever no tag is known; read at each
   *   use, so a configuration reload sets it here.
   */
  constructor(
    private readonly settings: Pick<SettingsStore, 'get'> | undefined,
    public defaultLocale: Locale,
  ) {}

  /**
   * The words for a reply only this invocation's user sees: their language, else the place's tag,
   * else DEFAULT_LOCALE. Never rejects (a user lookup that failed gives no tag).
   */
  async forUser(where: { locale?: InvocationLocale | undefined } | undefined): Promise<Words> {
    const user = await Promise.resolve(where?.locale?.user).catch(() => undefined);
    return wordsOf(resolveLocale(user ?? where?.locale?.place, this.defaultLocale));
  }

  /**
   * The words for a public message here: the channel's `/settings locale`, else the place's tag
   * (Discord's guild locale), else the user's (a DM; Slack), else DEFAULT_LOCALE. A store that does
   * not answer is no reason to fail a message: its setting is then not applied.
   */
  async forPlace(where: LocalePlace): Promise<Words> {
    const set = await this.settings?.get(where.channelKey).then(
      (s) => s.locale,
      () => undefined,
    );
    const chosen = matchLocale(set);
    if (chosen) return wordsOf(chosen);
    if (where.locale?.place) return wordsOf(resolveLocale(where.locale.place, this.defaultLocale));
    return this.forUser(where);
  }
}
