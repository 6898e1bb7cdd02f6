/**
 * howToForget (core/features/forget.ts): the end of the history-budget notice says how to clear
 * the history where the user is: /forget where a slash command reaches the conversation (with
 * who may use it in a channel), and in a Slack thread, where no slash command runs, a mention
 * with `forget` in the thread or the message shortcut "Forget this thread".
 */
import { describe, expect, it } from 'vitest';
import { allWords, english, wordsOf } from '../../src/core/i18n/words.ts';
import { conversationKey } from '../../src/core/keys.ts';
import { FORGET_THREAD_SHORTCUT_NAME, forgetRefused, howToForget, sentenceOf } from '../../src/core/sentences.ts';
import { ContextLengthError } from '../../src/core/service/errors.ts';

const SHORTCUT = `the message shortcut “${FORGET_THREAD_SHORTCUT_NAME}”`;

describe('howToForget, per place', () => {
  it('a Discord channel: /forget, by an admin or a member who may manage messages', () => {
    const conversationId = conversationKey({ platform: 'discord', guild: 'G1', channel: 'C1' });
    expect(english.say(howToForget({ conversationId, isDirectMessage: false }))).toBe(
      'an admin or a member who may manage messages can start afresh with /forget',
    );
  });

  it('a Discord DM: /forget, for anyone', () => {
    const conversationId = conversationKey({ platform: 'discord', guild: undefined, channel: 'D1' });
    expect(english.say(howToForget({ conversationId, isDirectMessage: true }))).toBe('/forget starts afresh');
  });

  it('a Slack channel: /forget, by an admin', () => {
    const conversationId = conversationKey({ platform: 'slack', team: 'T1', channel: 'C1' });
    expect(english.say(howToForget({ conversationId, isDirectMessage: false }))).toBe(
      'an admin can start afresh with /forget',
    );
  });

  it('a Slack thread in a channel: a mention with forget in the thread, or the shortcut; never /forget', () => {
    const conversationId = conversationKey({
      platform: 'slack',
      team: 'T1',
      channel: 'C1',
      thread: '1700000000.000100',
    });
    const how = english.say(howToForget({ conversationId, isDirectMessage: false }));
    expect(how).toBe(`an admin can start afresh in this thread: mention me with \`forget\` in it, or use ${SHORTCUT}`);
    expect(how).not.toContain('/forget');
  });

  it('a Slack DM: /forget, for anyone', () => {
    const conversationId = conversationKey({ platform: 'slack', team: 'T1', channel: 'D1' });
    expect(english.say(howToForget({ conversationId, isDirectMessage: true }))).toBe('/forget starts afresh');
  });

  it('a thread in a Slack DM: `forget` said in the thread (no mention needed), or the shortcut; never /forget', () => {
    const conversationId = conversationKey({
      platform: 'slack',
      team: 'T1',
      channel: 'D1',
      thread: '1700000000.000200',
    });
    const how = english.say(howToForget({ conversationId, isDirectMessage: true }));
    expect(how).toBe(`to start afresh in this thread, say \`forget\` in it, or use ${SHORTCUT}`);
    expect(how).not.toContain('/forget');
  });

  it('a conversation too long for the model, in a Slack thread: the sentence names the thread ways, not /forget', () => {
    const conversationId = conversationKey({
      platform: 'slack',
      team: 'T1',
      channel: 'C1',
      thread: '1700000000.000300',
    });
    const sentence = english.say(
      sentenceOf(new ContextLengthError('too long', 400), { conversationId, isDirectMessage: false }),
    );
    expect(sentence).toBe(
      `The conversation is too long for the model. An admin can start afresh in this thread: mention me with \`forget\` in it, or use ${SHORTCUT} (or ask a shorter question).`,
    );
  });

  it('a button press in a Discord DM (whether it is a DM not said): told by its key as a DM', () => {
    const conversationId = conversationKey({ platform: 'discord', guild: undefined, channel: 'D2' });
    expect(english.say(howToForget({ conversationId }))).toBe('/forget starts afresh');
  });
});

describe('forgetRefused, per platform', () => {
  it("names Discord's admins and members who may manage messages, and Slack's admins only (Slack has no such permission)", () => {
    expect(english.say(forgetRefused('discord', '/forget'))).toBe(
      '/forget in a channel is for admins and members who may manage messages. In a DM with the bot anyone may use it.',
    );
    expect(english.say(forgetRefused('slack', 'Forgetting a thread'))).toBe(
      'Forgetting a thread in a channel is for admins. In a DM with the bot anyone may use it.',
    );
  });
});

describe('in the reader’s language', () => {
  const discordChannel = conversationKey({ platform: 'discord', guild: 'G1', channel: 'C1' });
  const slackThread = conversationKey({ platform: 'slack', team: 'T1', channel: 'C1', thread: '1700000000.000400' });

  it('howToForget and sentenceOf read the same place in each shipped language, commands and the shortcut kept as written', () => {
    const de = wordsOf('de');
    expect(de.say(howToForget({ conversationId: discordChannel, isDirectMessage: false }))).toBe(
      'ein Admin oder ein Mitglied, das Nachrichten verwalten darf, kann mit /forget neu anfangen',
    );
    expect(de.say(sentenceOf(new ContextLengthError('too long', 400), { conversationId: discordChannel }))).toBe(
      'Die Unterhaltung ist zu lang für das Modell. Ein Admin oder ein Mitglied, das Nachrichten verwalten darf, kann mit /forget neu anfangen (oder stelle eine kürzere Frage).',
    );
    const ja = wordsOf('ja').say(howToForget({ conversationId: slackThread, isDirectMessage: false }));
    expect(ja).toContain(`「${FORGET_THREAD_SHORTCUT_NAME}」`);
    expect(ja).toContain('`forget`');
    expect(ja).not.toContain('/forget');
    for (const words of allWords()) {
      const how = words.say(howToForget({ conversationId: slackThread, isDirectMessage: true }));
      expect(how, words.locale).toContain(FORGET_THREAD_SHORTCUT_NAME);
      expect(how, words.locale).not.toMatch(/[{}]/);
      const dm = words.say(sentenceOf(new ContextLengthError('too long', 400)));
      expect(dm, words.locale).toContain('/forget');
      if (words.locale !== 'en')
        expect(dm, words.locale).not.toBe(english.say(sentenceOf(new ContextLengthError('x', 400))));
    }
  });

  it('forgetRefused names who may in the reader’s language, the command as written', () => {
    expect(wordsOf('fr').say(forgetRefused('slack', '/forget'))).toBe(
      '/forget dans un canal est réservé aux admins. Dans un message privé avec le bot, tout le monde peut l’utiliser.',
    );
    expect(wordsOf('es').say(forgetRefused('discord', 'Forgetting a thread'))).toBe(
      'Olvidar un hilo en un canal es solo para admins y miembros que pueden gestionar mensajes. En un mensaje directo con el bot cualquiera puede usarlo.',
    );
  });
});
