/**
 * Assertions shared by the Slack end-to-end files (HTTP mode and Socket Mode).
 */
import { expect } from 'vitest';
import { escapeSlack, unescapeSlack, type FakeSlack } from '../fakes/slack.ts';

/**
 * Checks that `streamed` arrived in `channel` as exactly one message: posted by
 * chat.postMessage, updated by chat.update while streaming (at least one update showed a
 * strict prefix of it), its last revision the whole text, escaped as Slack requires.
 * @returns that message, for further checks.
 */
export function expectStreamedMessage(slack: FakeSlack, channel: string, streamed: string) {
  const [message, ...others] = slack.messages(channel);
  expect(others).toEqual([]);
  expect(message!.via).toBe('chat.postMessage');
  expect(unescapeSlack(message!.text)).toBe(streamed);
  expect(message!.text).toBe(escapeSlack(streamed));
  const updates = message!.revisions.filter((r) => r.method === 'chat.update');
  const partial = updates.filter((r) => unescapeSlack(r.text).length < streamed.length && streamed.startsWith(unescapeSlack(r.text)));
  expect(partial.length).toBeGreaterThanOrEqual(1);
  expect(updates.at(-1)!.text).toBe(message!.text);
  return message!;
}
