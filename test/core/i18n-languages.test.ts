/**
 * Whose language the bot speaks (docs/i18n.md): a tag finds its catalog or its base language's,
 * then English; no tag at all is DEFAULT_LOCALE; a channel's `/settings locale` sets its public
 * words; the user's own language is for what only they see.
 */
import { describe, expect, it } from 'vitest';
import { Languages } from '../../src/core/i18n/languages.ts';
import { matchLocale, resolveLocale } from '../../src/core/i18n/locales.ts';
import { sentence, wordsOf } from '../../src/core/i18n/words.ts';

describe('locale resolution', () => {
  it('matches a shipped tag in any case, then its base language, else none', () => {
    expect(matchLocale('pt-BR')).toBe('pt-BR');
    expect(matchLocale('PT_br')).toBe('pt-BR');
    expect(matchLocale('es-419')).toBe('es');
    expect(matchLocale('es-ES')).toBe('es');
    expect(matchLocale('ja-JP')).toBe('ja');
    expect(matchLocale('en-GB')).toBe('en');
    expect(matchLocale('ko')).toBeUndefined();
    expect(matchLocale('x'.repeat(100))).toBeUndefined();
    expect(matchLocale(undefined)).toBeUndefined();
  });

  it('falls back to DEFAULT_LOCALE without a tag, and to English for a tag without a catalog', () => {
    expect(resolveLocale(undefined, 'de')).toBe('de');
    expect(resolveLocale('ko', 'de')).toBe('en');
    expect(resolveLocale('fr-CA', 'de')).toBe('fr');
  });
});

describe('Languages', () => {
  const settings = (locale?: string) => ({ get: async () => (locale ? { locale } : {}) });

  it('speaks to a user in their language, waiting for a lookup under way', async () => {
    const languages = new Languages(settings(), 'en');
    expect((await languages.forUser({ locale: { user: 'de', place: 'fr' } })).locale).toBe('de');
    expect((await languages.forUser({ locale: { user: Promise.resolve('ja-JP') } })).locale).toBe('ja');
    expect((await languages.forUser({ locale: { user: Promise.resolve(undefined), place: 'fr' } })).locale).toBe('fr');
    expect((await languages.forUser({})).locale).toBe('en');
    expect((await new Languages(settings(), 'es').forUser(undefined)).locale).toBe('es');
  });

  it('speaks in public as the channel setting says, else the place, else the asker', async () => {
    const place = { channelKey: 'discord:g:c', locale: { user: 'de', place: 'fr' } };
    expect((await new Languages(settings('ja'), 'en').forPlace(place)).locale).toBe('ja');
    expect((await new Languages(settings(), 'en').forPlace(place)).locale).toBe('fr');
    expect(
      (await new Languages(settings(), 'en').forPlace({ channelKey: 'slack:T:C', locale: { user: 'pt-BR' } })).locale,
    ).toBe('pt-BR');
    const failing = { get: async () => Promise.reject(new Error('store down')) };
    expect((await new Languages(failing, 'es').forPlace({ channelKey: 'x' })).locale).toBe('es');
  });
});

describe('Words', () => {
  it('renders nested sentences in the same language and shows the key for an unknown one', () => {
    const de = wordsOf('de');
    const said = sentence('common.with_reference', { sentence: sentence('common.button_gone'), ref: 'K7M2QX' });
    expect(de.say(said)).toBe(`${de.t('common.button_gone')} (Ref. K7M2QX)`);
    expect(de.t('common.button_gone')).not.toBe(wordsOf('en').t('common.button_gone'));
    expect(de.t('no.such.key' as never)).toBe('no.such.key');
  });
});
