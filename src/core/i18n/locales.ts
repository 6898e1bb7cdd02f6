/**
 * The languages the bot's own words ship in, and how a platform's language tag finds one.
 * Discord sends its client languages as tags such as `en-US`, `es-419`, `pt-BR`, `ja`
 * (docs/i18n.md, "Whose language"); Slack's `users.info` with `include_locale` gives `ja-JP`,
 * `pt-BR`, `en-US`. A tag is matched exactly (case-insensitive), then by its base language
 * (`es-419` → `es`, `de-AT` → `de`); a tag that matches neither has no catalog.
 */

import { z } from 'zod';

/** The locales with a complete catalog; English (`en`) is the source every other is translated from. */
export const SHIPPED_LOCALES = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja'] as const;

/** A shipped locale (BCP 47 tag as {@link SHIPPED_LOCALES} spells it). */
export type Locale = (typeof SHIPPED_LOCALES)[number];

/** The source locale: what every catalog is checked against and the last fallback. */
export const SOURCE_LOCALE: Locale = 'en';

/** Longest tag looked at, in characters (BCP 47 tags in practice are far shorter; hostile input is cut). */
const MAX_TAG_LENGTH = 35;

/**
 * The shipped locale for a language tag: itself when shipped (any case, `_` read as `-`), else
 * its base language's (`es-419` → `es`, `ja-JP` → `ja`, `pt-PT` → `pt-BR`, Portuguese having one
 * catalog), else undefined (no catalog: the caller falls back to English, or to DEFAULT_LOCALE
 * where no tag was given at all).
 * @param tag a platform's tag, e.g. Discord's `interaction.locale` or Slack's `user.locale`.
 */
export function matchLocale(tag: string | undefined | null): Locale | undefined {
  if (!tag || typeof tag !== 'string' || tag.length > MAX_TAG_LENGTH) return undefined;
  const wanted = tag.replaceAll('_', '-').toLowerCase();
  const exact = SHIPPED_LOCALES.find((l) => l.toLowerCase() === wanted);
  if (exact) return exact;
  const base = wanted.split('-')[0];
  return SHIPPED_LOCALES.find((l) => l.toLowerCase().split('-')[0] === base);
}

/**
 * The locale to speak for a tag, per docs/i18n.md: no tag → `fallback` (DEFAULT_LOCALE); a tag
 * with a catalog (itself or its base language) → that; a tag without one → English.
 */
export function resolveLocale(tag: string | undefined | null, fallback: Locale): Locale {
  if (!tag) return fallback;
  return matchLocale(tag) ?? SOURCE_LOCALE;
}

/** A setting naming a language (DEFAULT_LOCALE): a tag {@link matchLocale} finds, as that shipped locale. */
export const localeTag = z.string().transform((tag, ctx): Locale => {
  const locale = matchLocale(tag);
  if (!locale) ctx.addIssue({ code: 'custom', message: `must be one of ${SHIPPED_LOCALES.join(', ')}` });
  return locale ?? SOURCE_LOCALE;
});
