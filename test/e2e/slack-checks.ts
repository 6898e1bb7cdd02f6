/**
 * Assertions shared by the Slack end-to-end files (HTTP mode and Socket Mode).
 *
 * A Slack /chat in a channel shows its question to the channel (`*alice* asked:` and the
 * prompt quoted, a top-level message) and streams the answer into that message's thread
 * (natively: chat.startStream → appendStream… → stopStream).
 */
import { expect } from 'vitest';
import { escapeSlack, type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';

/** Whether a message is the question a /chat posted for the channel to see. */
export const isQuestion = (message: FakeSlackMessage) => /^\*[^*\n]+\* asked:\n/.test(message.text);

/** The bot's messages in `channel` that are not the questions /chat posted (answers, images, follow-ups), oldest first. */
export function answersIn(slack: FakeSlack, channel: string): FakeSlackMessage[] {
  return slack.messages(channel).filter((m) => m.user === slack.botUserId && !isQuestion(m));
}

/**
 * Checks a /chat's question message in `channel`: top level, `*<asker>* asked:` then the
 * prompt quoted, escaped as Slack requires.
 * @returns the question message (its ts is the answer's thread).
 */
export function expectQuestion(slack: FakeSlack, channel: string, asker: string, prompt: string): FakeSlackMessage {
  const questions = slack.messages(channel).filter((m) => m.user === slack.botUserId && isQuestion(m));
  const question = questions.find(
    (q) =>
      unescapeSlack(q.text) ===
      `*${asker}* asked:\n${prompt
        .split('\n')
        .map((l) => `>${l ? ` ${l}` : ''}`)
        .join('\n')}`,
  );
  expect(question, `a question "${prompt}" by ${asker} in ${channel}`).toBeDefined();
  expect(question!.threadTs).toBeUndefined();
  expect(question!.via).toBe('chat.postMessage');
  return question!;
}

/**
 * Checks that `streamed` arrived as exactly one message of the bot in `channel` besides the
 * question: in the question's thread, streamed natively (chat.startStream, at least one
 * chat.appendStream of a strict prefix, chat.stopStream), the whole text exactly, escaped as
 * Slack requires.
 * @returns that message, for further checks.
 */
export function expectStreamedMessage(slack: FakeSlack, channel: string, streamed: string): FakeSlackMessage {
  const [message, ...others] = answersIn(slack, channel);
  expect(others).toEqual([]);
  const [question, ...moreQuestions] = slack
    .messages(channel)
    .filter((m) => m.user === slack.botUserId && isQuestion(m));
  expect(moreQuestions).toEqual([]);
  expect(message!.threadTs).toBe(question!.ts);
  expect(message!.via).toBe('chat.startStream');
  expect(unescapeSlack(message!.text)).toBe(streamed);
  expect(message!.text).toBe(escapeSlack(streamed));
  const writes = message!.stream!.writes;
  expect(writes[0]!.method).toBe('chat.startStream');
  expect(writes.at(-1)!.method).toBe('chat.stopStream');
  expect(writes.filter((w) => w.method === 'chat.appendStream').length).toBeGreaterThanOrEqual(1);
  expect(message!.stream!.state).toBe('stopped');
  return message!;
}

/**
 * The Markdown a message shows: the text of its markdown blocks (joined by a blank line) when it
 * has any (a posted or updated answer; its `text` is then only the mrkdwn fallback for
 * notifications), else its `text` (a streamed answer's markdown_text), unescaped.
 */
export function shownMarkdown(message: FakeSlackMessage): string {
  const blocks = (message.blocks ?? []) as { type?: string; text?: unknown }[];
  const markdown = blocks
    .filter((b) => b.type === 'markdown' && typeof b.text === 'string')
    .map((b) => b.text as string);
  return unescapeSlack(markdown.length ? markdown.join('\n\n') : message.text);
}
