/**
 * The catalogs stay complete and true to their source (issue 42, "Checks that keep it true"):
 * every locale has exactly English's keys, the same placeholders of the same kinds (select
 * options too; plural categories are the locale's own), the plural forms its language needs,
 * and every message of every locale renders (no missing value, no raw key, no ICU left).
 */
import { type MessageFormatElement, parse, TYPE } from '@formatjs/icu-messageformat-parser';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { flatCatalog } from '../../src/core/i18n/catalogs.ts';
import { type Locale, SHIPPED_LOCALES, SOURCE_LOCALE } from '../../src/core/i18n/locales.ts';

/** A placeholder: its name and kind (`string`, `number`, `date`, `time`, `plural`, `select`, `selectordinal`), with select's options. */
type Placeholder = string;

/** The placeholders of a parsed message, as sorted descriptions, e.g. `count:plural`, `kind:select(a|b|other)`. */
function placeholders(elements: MessageFormatElement[], into = new Set<Placeholder>()): Set<Placeholder> {
  for (const el of elements) {
    switch (el.type) {
      case TYPE.argument:
        into.add(`${el.value}:string`);
        break;
      case TYPE.number:
        into.add(`${el.value}:number`);
        break;
      case TYPE.date:
        into.add(`${el.value}:date`);
        break;
      case TYPE.time:
        into.add(`${el.value}:time`);
        break;
      case TYPE.select:
        into.add(`${el.value}:select(${Object.keys(el.options).sort().join('|')})`);
        for (const option of Object.values(el.options)) placeholders(option.value, into);
        break;
      case TYPE.plural:
        into.add(`${el.value}:${el.pluralType === 'ordinal' ? 'selectordinal' : 'plural'}`);
        for (const option of Object.values(el.options)) placeholders(option.value, into);
        break;
      case TYPE.tag:
        placeholders(el.children, into);
        break;
      default:
        break;
    }
  }
  return into;
}

/** The plural elements of a parsed message (nested ones too). */
function plurals(
  elements: MessageFormatElement[],
  into: Array<{ name: string; ordinal: boolean; options: string[] }> = [],
) {
  for (const el of elements) {
    if (el.type === TYPE.plural) {
      into.push({ name: el.value, ordinal: el.pluralType === 'ordinal', options: Object.keys(el.options) });
      for (const option of Object.values(el.options)) plurals(option.value, into);
    } else if (el.type === TYPE.select) for (const option of Object.values(el.options)) plurals(option.value, into);
    else if (el.type === TYPE.tag) plurals(el.children, into);
  }
  return into;
}

const parseMessage = (message: string) => parse(message, { ignoreTag: true });
const source = flatCatalog(SOURCE_LOCALE);
const translations = SHIPPED_LOCALES.filter((l) => l !== SOURCE_LOCALE);

/** Values for every placeholder of a message: text, numbers, dates; each select's first non-`other` option. */
function sampleValues(elements: MessageFormatElement[], n: number, into: Record<string, unknown> = {}) {
  for (const el of elements) {
    if (el.type === TYPE.argument) into[el.value] ??= `«${el.value}»`;
    else if (el.type === TYPE.number || el.type === TYPE.plural) into[el.value] ??= n;
    else if (el.type === TYPE.date || el.type === TYPE.time)
      into[el.value] ??= new Date(Date.UTC(2026, 10, 29, 12, 30));
    else if (el.type === TYPE.select) {
      into[el.value] ??= Object.keys(el.options).find((k) => k !== 'other') ?? 'other';
      for (const option of Object.values(el.options)) sampleValues(option.value, n, into);
    }
    if (el.type === TYPE.plural) for (const option of Object.values(el.options)) sampleValues(option.value, n, into);
    if (el.type === TYPE.tag) sampleValues(el.children, n, into);
  }
  return into;
}

describe('the catalogs of the bot’s words', () => {
  it('English, the source, has messages, each valid ICU with an `other` in every plural and select', () => {
    expect(source.size).toBeGreaterThan(0);
    for (const [key, message] of source) {
      const elements = parseMessage(message);
      for (const p of plurals(elements)) expect(p.options, `${key}: ${p.name}`).toContain('other');
    }
  });

  for (const locale of translations) {
    describe(locale, () => {
      const catalog = flatCatalog(locale);

      it('has every key of English and no other', () => {
        const missing = [...source.keys()].filter((k) => !catalog.has(k));
        const extra = [...catalog.keys()].filter((k) => !source.has(k));
        expect({ missing, extra }).toEqual({ missing: [], extra: [] });
      });

      it('keeps every placeholder of English, of the same kind, and adds none', () => {
        const changed: string[] = [];
        for (const [key, english] of source) {
          const translated = catalog.get(key);
          if (translated === undefined) continue;
          const want = [...placeholders(parseMessage(english))].sort();
          const got = [...placeholders(parseMessage(translated))].sort();
          if (JSON.stringify(want) !== JSON.stringify(got))
            changed.push(`${key}: ${want.join(',')} → ${got.join(',')}`);
        }
        expect(changed).toEqual([]);
      });

      it('gives each plural the forms its language uses', () => {
        const short: string[] = [];
        for (const [key, message] of catalog) {
          for (const p of plurals(parseMessage(message))) {
            const needed = new Intl.PluralRules(locale, { type: p.ordinal ? 'ordinal' : 'cardinal' }).resolvedOptions()
              .pluralCategories;
            // `many` in French, Spanish and Portuguese is for millions ("1 million de …"); `other` serves it.
            const lacking = needed.filter(
              (c) => c !== 'many' && !p.options.includes(c) && !p.options.some((o) => o.startsWith('=')),
            );
            if (lacking.length) short.push(`${key} ${p.name}: lacks ${lacking.join(', ')}`);
          }
        }
        expect(short).toEqual([]);
      });
    });
  }

  for (const locale of SHIPPED_LOCALES) {
    it(`renders every message in ${locale} (no missing value, no raw key, no ICU left)`, () => {
      const catalog = flatCatalog(locale as Locale);
      const broken: string[] = [];
      for (const [key, message] of catalog) {
        const elements = parseMessage(message);
        for (const n of [0, 1, 2, 5, 1_000_000]) {
          const values = sampleValues(elements, n);
          let out: string;
          try {
            out = String(
              new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).format(values as never),
            );
          } catch (error) {
            broken.push(`${key}: ${(error as Error).message}`);
            break;
          }
          if (out === key || out.trim() === '' || /\{[a-z_]+(, ?(number|plural|select|date|time))?[^}]*\}/i.test(out))
            broken.push(`${key} (${n}): ${out}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
