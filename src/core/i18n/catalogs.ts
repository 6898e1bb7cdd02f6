/**
 * Every catalog of the bot's own words, by locale then namespace: `locales/<locale>/<namespace>.json`,
 * ICU MessageFormat messages (docs/i18n.md) in nested objects, a message's key being its path
 * joined with dots under its namespace (`errors.quota.daily`). English is the source; the other
 * catalogs are translations of it, checked key for key and placeholder for placeholder by
 * test/core/i18n-catalogs.test.ts.
 *
 * Namespaces split the words by area (one file each per locale):
 * `common` (the runner's and shared words), `errors` (failures and refusals), `media` (files and
 * images users send), `answers` (what surrounds an answer: notes, buttons, queue and progress
 * lines), `commands` (command, option and choice names and descriptions; /help, /usage, /models,
 * /settings, /export, /forget), `slack` and `discord` (each platform's own surfaces).
 */

import de_answers from './locales/de/answers.json' with { type: 'json' };
import de_commands from './locales/de/commands.json' with { type: 'json' };
import de_common from './locales/de/common.json' with { type: 'json' };
import de_discord from './locales/de/discord.json' with { type: 'json' };
import de_errors from './locales/de/errors.json' with { type: 'json' };
import de_media from './locales/de/media.json' with { type: 'json' };
import de_slack from './locales/de/slack.json' with { type: 'json' };
import en_answers from './locales/en/answers.json' with { type: 'json' };
import en_commands from './locales/en/commands.json' with { type: 'json' };
import en_common from './locales/en/common.json' with { type: 'json' };
import en_discord from './locales/en/discord.json' with { type: 'json' };
import en_errors from './locales/en/errors.json' with { type: 'json' };
import en_media from './locales/en/media.json' with { type: 'json' };
import en_slack from './locales/en/slack.json' with { type: 'json' };
import es_answers from './locales/es/answers.json' with { type: 'json' };
import es_commands from './locales/es/commands.json' with { type: 'json' };
import es_common from './locales/es/common.json' with { type: 'json' };
import es_discord from './locales/es/discord.json' with { type: 'json' };
import es_errors from './locales/es/errors.json' with { type: 'json' };
import es_media from './locales/es/media.json' with { type: 'json' };
import es_slack from './locales/es/slack.json' with { type: 'json' };
import fr_answers from './locales/fr/answers.json' with { type: 'json' };
import fr_commands from './locales/fr/commands.json' with { type: 'json' };
import fr_common from './locales/fr/common.json' with { type: 'json' };
import fr_discord from './locales/fr/discord.json' with { type: 'json' };
import fr_errors from './locales/fr/errors.json' with { type: 'json' };
import fr_media from './locales/fr/media.json' with { type: 'json' };
import fr_slack from './locales/fr/slack.json' with { type: 'json' };
import ja_answers from './locales/ja/answers.json' with { type: 'json' };
import ja_commands from './locales/ja/commands.json' with { type: 'json' };
import ja_common from './locales/ja/common.json' with { type: 'json' };
import ja_discord from './locales/ja/discord.json' with { type: 'json' };
import ja_errors from './locales/ja/errors.json' with { type: 'json' };
import ja_media from './locales/ja/media.json' with { type: 'json' };
import ja_slack from './locales/ja/slack.json' with { type: 'json' };
import ptBR_answers from './locales/pt-BR/answers.json' with { type: 'json' };
import ptBR_commands from './locales/pt-BR/commands.json' with { type: 'json' };
import ptBR_common from './locales/pt-BR/common.json' with { type: 'json' };
import ptBR_discord from './locales/pt-BR/discord.json' with { type: 'json' };
import ptBR_errors from './locales/pt-BR/errors.json' with { type: 'json' };
import ptBR_media from './locales/pt-BR/media.json' with { type: 'json' };
import ptBR_slack from './locales/pt-BR/slack.json' with { type: 'json' };
import type { Locale } from './locales.ts';

/** The namespaces, in the order {@link CATALOGS} lists them. */
export const NAMESPACES = ['common', 'errors', 'media', 'answers', 'commands', 'slack', 'discord'] as const;

/** One namespace's messages as written: nested objects whose leaves are ICU messages. */
export type CatalogTree = { readonly [key: string]: string | CatalogTree };

/** The source (English) catalog, as typed by its JSON: the shape {@link MessageKey} is derived from. */
export const SOURCE = {
  common: en_common,
  errors: en_errors,
  media: en_media,
  answers: en_answers,
  commands: en_commands,
  slack: en_slack,
  discord: en_discord,
};

/** Every locale's catalog, namespace by namespace (the JSON as written). */
export const CATALOGS: Record<Locale, Record<(typeof NAMESPACES)[number], CatalogTree>> = {
  en: SOURCE,
  de: {
    common: de_common,
    errors: de_errors,
    media: de_media,
    answers: de_answers,
    commands: de_commands,
    slack: de_slack,
    discord: de_discord,
  },
  fr: {
    common: fr_common,
    errors: fr_errors,
    media: fr_media,
    answers: fr_answers,
    commands: fr_commands,
    slack: fr_slack,
    discord: fr_discord,
  },
  es: {
    common: es_common,
    errors: es_errors,
    media: es_media,
    answers: es_answers,
    commands: es_commands,
    slack: es_slack,
    discord: es_discord,
  },
  'pt-BR': {
    common: ptBR_common,
    errors: ptBR_errors,
    media: ptBR_media,
    answers: ptBR_answers,
    commands: ptBR_commands,
    slack: ptBR_slack,
    discord: ptBR_discord,
  },
  ja: {
    common: ja_common,
    errors: ja_errors,
    media: ja_media,
    answers: ja_answers,
    commands: ja_commands,
    slack: ja_slack,
    discord: ja_discord,
  },
};

/** The dotted paths of a catalog tree's leaves, e.g. `quota.daily` for `{ quota: { daily: '…' } }`. */
type Leaves<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${P}${K}` : Leaves<T[K], `${P}${K}.`>;
}[keyof T & string];

/** A message's key: its namespace and its path in it, e.g. `common.button_gone`. */
export type MessageKey = { [N in keyof typeof SOURCE]: Leaves<(typeof SOURCE)[N], `${N}.`> }[keyof typeof SOURCE];

/**
 * A catalog tree flattened to `namespace.path` → message, as {@link MessageKey}s name them.
 * Anything that is not a string or an object (a catalog file is JSON) is left out.
 */
export function flatten(tree: CatalogTree, prefix: string, into: Map<string, string> = new Map()): Map<string, string> {
  for (const [key, value] of Object.entries(tree)) {
    const path = `${prefix}${key}`;
    if (typeof value === 'string') into.set(path, value);
    else if (value && typeof value === 'object') flatten(value, `${path}.`, into);
  }
  return into;
}

/** A locale's whole catalog flattened (every namespace), `namespace.path` → ICU message. */
export function flatCatalog(locale: Locale): Map<string, string> {
  const into = new Map<string, string>();
  for (const [ns, tree] of Object.entries(CATALOGS[locale])) flatten(tree, `${ns}.`, into);
  return into;
}
