/**
 * Message actions in the core (core/message-action.ts, features/message-actions.ts): the question
 * sent about a chosen message, the checks of a form's question, and the definitions' sizes
 * against both platforms' limits (docs/platform-limits.md, "Modals").
 */

import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { Core } from '../../src/core/core.ts';
import { BotEvents } from '../../src/core/events.ts';
import {
  MAX_CHOSEN_MESSAGE_CHARS,
  promptAbout,
  SUMMARIZE_INSTRUCTION,
} from '../../src/core/features/message-actions.ts';
import { Languages } from '../../src/core/i18n/languages.ts';
import { english } from '../../src/core/i18n/words.ts';
import { type ChosenMessage, type MessageAction, runMessageAction } from '../../src/core/message-action.ts';
import { MAY_NOT_POST_HERE } from '../../src/core/rights.ts';
import { recorder } from './recorder.ts';

const silent = pino({ level: 'silent' });
const core = () =>
  ({ events: new BotEvents(), log: silent, languages: new Languages(undefined, 'en') }) as unknown as Core;
const bob: ChosenMessage = { author: 'bob', fromBot: false, text: 'The boat leaves at 7.', attachments: [] };

describe('the question about a chosen message', () => {
  it('is the instruction, then the message quoted with its author', () => {
    expect(promptAbout(SUMMARIZE_INSTRUCTION, bob)).toBe(
      'Summarize this message.\n\nMessage by bob:\n"""\nThe boat leaves at 7.\n"""',
    );
    expect(promptAbout('Why?', { ...bob, author: 'genbot', fromBot: true })).toContain('Message by genbot (you):');
    expect(promptAbout('What is this?', { ...bob, text: '  ' })).toBe(
      'What is this?\n\nThe message, by bob, has no text: its files are attached.',
    );
  });

  it('cuts a message longer than MAX_CHOSEN_MESSAGE_CHARS', () => {
    const prompt = promptAbout('Sum up.', { ...bob, text: 'a'.repeat(MAX_CHOSEN_MESSAGE_CHARS + 10) });
    expect(prompt).toContain(`${'a'.repeat(MAX_CHOSEN_MESSAGE_CHARS)}\n[…cut]`);
    expect(prompt).not.toContain('a'.repeat(MAX_CHOSEN_MESSAGE_CHARS + 1));
  });
});

describe('runMessageAction', () => {
  const asked: Array<string | undefined> = [];
  const action: MessageAction = {
    name: 'Ask',
    id: 'ask',
    description: 'Ask',
    question: {
      title: 'answers.ask_form.title',
      label: 'answers.ask_form.label',
      placeholder: 'answers.ask_form.placeholder',
      submit: 'answers.ask_form.submit',
      maxLength: 10,
    },
    async execute(_ctx, _core, use) {
      asked.push(use.question);
    },
  };

  it('trims the question and refuses a blank or too long one, telling the user, before reading the message', async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      return bob;
    };
    const ok = recorder('discord:1:2', {});
    expect(await runMessageAction(action, ok.ctx, core(), { read, question: '  Why?  ' })).toMatchObject({
      ok: true,
      command: 'ask',
    });
    expect(asked).toEqual(['Why?']);
    for (const question of ['   ', 'x'.repeat(11)]) {
      const r = recorder('discord:1:2', {});
      expect(await runMessageAction(action, r.ctx, core(), { read, question })).toMatchObject({
        ok: false,
        errorCode: 'invalid_input',
      });
      expect(r.ephemerals).toHaveLength(1);
    }
    expect(reads).toBe(1);
  });

  it('refuses, in a sentence only they see, a user who may not post where the answer would go (a form submitted after their right was taken), before reading the message', async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      return bob;
    };
    const r = recorder('discord:1:2', {});
    const ctx = { ...r.ctx, user: { ...r.ctx.user, canPost: async () => false } };
    expect(await runMessageAction(action, ctx, core(), { read, question: 'Why?' })).toMatchObject({
      ok: false,
      errorCode: 'forbidden',
    });
    expect(r.ephemerals).toEqual([english.say(MAY_NOT_POST_HERE)]);
    expect(reads).toBe(0);
    // Where the platform says they may (or says nothing: Slack), the action runs.
    for (const canPost of [async () => true, undefined]) {
      const ok = recorder('discord:1:2', {});
      const user = { ...ok.ctx.user, ...(canPost ? { canPost } : {}) };
      expect(await runMessageAction(action, { ...ok.ctx, user }, core(), { read, question: 'Why?' })).toMatchObject({
        ok: true,
      });
    }
    expect(reads).toBe(2);
  });
});

describe('the message actions of commands/', () => {
  it('fit both platforms: names (Discord 32, Slack 24), ids (Slack callback_id, Discord custom_id prefix), descriptions, forms', () => {
    expect(messageActions.length).toBeGreaterThan(0);
    for (const action of messageActions) {
      expect(action.name.length).toBeLessThanOrEqual(24);
      expect(action.id).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(action.description.length).toBeLessThanOrEqual(150);
      const form = action.question;
      if (!form) continue;
      expect(form.title.length).toBeLessThanOrEqual(24);
      expect(form.submit.length).toBeLessThanOrEqual(24);
      expect(form.label.length).toBeLessThanOrEqual(45);
      expect(form.placeholder.length).toBeLessThanOrEqual(100);
      expect(form.maxLength).toBeGreaterThan(0);
      expect(form.maxLength).toBeLessThanOrEqual(3000);
    }
  });
});
