/**
 * The pieces of Discord's conversation threads that need no gateway: the thread's name from
 * the question (1–100 characters, Discord's "Start Thread from Message"), the question a
 * /chat's reply shows (within a message's 2,000 characters), where a thread may be opened,
 * and /chat's `thread` option on Slack (accepted: a Slack /chat is answered in a thread always).
 */

import { ChannelType, DiscordAPIError, PermissionFlagsBits, PermissionsBitField } from 'discord.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import chat from '../../commands/chat.ts';
import { checkOptions } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { questionMessage } from '../../src/platforms/discord/thread-open.ts';
import {
  NO_THREAD,
  THREAD_PERMISSION_SENTENCE,
  ThreadReply,
  threadNameOf,
  threadParentOf,
  threadRefusedLine,
} from '../../src/platforms/discord/threads.ts';
import { parseSlashText } from '../../src/platforms/slack/options.ts';

/** A stand-in for a discord.js channel of a type (only what threadParentOf reads). */
function channelOf(type: ChannelType): never {
  return {
    type,
    isDMBased: () => type === ChannelType.DM,
    isThread: () => type === ChannelType.PublicThread,
  } as never;
}

const ALL = new PermissionsBitField(
  PermissionFlagsBits.CreatePublicThreads | PermissionFlagsBits.SendMessagesInThreads,
);

describe('Discord thread names', () => {
  it("is the question's first line with spaces collapsed, cut to 100 code points with an ellipsis", () => {
    expect(threadNameOf('  What is   RAID 5?\nExplain in detail.')).toBe('What is RAID 5?');
    const long = threadNameOf('🧵'.repeat(150));
    expect(Array.from(long)).toHaveLength(100);
    expect(long.endsWith('…')).toBe(true);
    expect(threadNameOf('x'.repeat(100))).toBe('x'.repeat(100));
  });

  it('is "Conversation" for a question with no text', () => {
    expect(threadNameOf('  \n ')).toBe('Conversation');
  });
});

describe("a /chat's question in its reply", () => {
  it('names the asker (Markdown escaped), quotes every line and the attached file', () => {
    expect(questionMessage('ada_lovelace', 'line one\nline two', 'notes.py')).toBe(
      '**ada\\_lovelace** asked:\n> line one\n> line two\n📎 notes.py',
    );
  });

  it("stays within a message's 2,000 characters for the longest prompt", () => {
    const shown = questionMessage('a'.repeat(200), 'word '.repeat(1200), 'f'.repeat(300));
    expect(Array.from(shown).length).toBeLessThanOrEqual(2000);
    expect(shown).toContain('…');
  });
});

describe('where a thread may be opened', () => {
  it('in a text or announcement channel where the bot may create public threads and post in them', () => {
    expect(threadParentOf(channelOf(ChannelType.GuildText), ALL)).toHaveProperty('parent');
    expect(threadParentOf(channelOf(ChannelType.GuildAnnouncement), ALL)).toHaveProperty('parent');
    expect(threadParentOf(channelOf(ChannelType.GuildText), null)).toHaveProperty('parent');
  });

  it('not in a DM, a thread, a voice channel, or without either permission', () => {
    expect(threadParentOf(null, ALL)).toEqual({ why: NO_THREAD.dm });
    expect(threadParentOf(channelOf(ChannelType.DM), ALL)).toEqual({ why: NO_THREAD.dm });
    expect(threadParentOf(channelOf(ChannelType.PublicThread), ALL)).toEqual({ why: NO_THREAD.inThread });
    expect(threadParentOf(channelOf(ChannelType.GuildVoice), ALL)).toEqual({ why: NO_THREAD.channelType });
    const noCreate = new PermissionsBitField(PermissionFlagsBits.SendMessagesInThreads);
    const noSend = new PermissionsBitField(PermissionFlagsBits.CreatePublicThreads);
    expect(threadParentOf(channelOf(ChannelType.GuildText), noCreate)).toEqual({ why: NO_THREAD.permission });
    expect(threadParentOf(channelOf(ChannelType.GuildText), noSend)).toEqual({ why: NO_THREAD.permission });
  });

  it('not for someone who could not open one there themselves (Create Public Threads and Send Messages in Threads)', () => {
    const text = channelOf(ChannelType.GuildText);
    const sendOnly = new PermissionsBitField(
      PermissionFlagsBits.SendMessages | PermissionFlagsBits.SendMessagesInThreads,
    );
    expect(threadParentOf(text, ALL, sendOnly)).toEqual({ why: NO_THREAD.yours });
    expect(threadParentOf(text, ALL, ALL)).toHaveProperty('parent');
    expect(threadParentOf(text, ALL, new PermissionsBitField(PermissionFlagsBits.Administrator))).toHaveProperty(
      'parent',
    );
    // The bot's own permission is said first.
    expect(threadParentOf(text, sendOnly, sendOnly)).toEqual({ why: NO_THREAD.permission });
  });
});

/** A Discord refusal as discord.js throws it. */
const refusal = (code: number, status: number) =>
  new DiscordAPIError({ code, message: 'refused' }, code, status, 'POST', '/channels/1/messages', { body: {} });

describe("Discord's refusals around threads, in sentences", () => {
  it('a missing permission inside a thread names Send Messages in Threads; other refusals are the usual sentences', () => {
    const reply = new ThreadReply({} as never, pino({ level: 'silent' }));
    expect(reply.explain(refusal(50013, 403))).toBe(THREAD_PERMISSION_SENTENCE);
    expect(english.say(reply.explain(refusal(10003, 404))!)).toBe('This channel no longer exists.');
  });

  it('a thread Discord would not open gives the line under the answer in place', () => {
    expect(threadRefusedLine(refusal(50013, 403))).toBe(NO_THREAD.permission);
    expect(english.say(threadRefusedLine(refusal(10003, 404)))).toBe(
      'I answered here, not in a thread: Discord would not open one: This channel no longer exists.',
    );
    expect(english.say(threadRefusedLine(refusal(160004, 400)))).toBe(
      'I answered here, not in a thread: Discord would not open one.',
    );
  });
});

describe("/chat's thread option on Slack", () => {
  it('is accepted on Slack (`--thread` alone means true), where a /chat is answered in its question thread always', () => {
    const parsed = parseSlashText(chat, 'hello --thread');
    expect(parsed).toEqual({ prompt: 'hello', thread: 'true' });
    expect(checkOptions(chat, parsed)).toEqual({ prompt: 'hello', thread: true });
  });
});
