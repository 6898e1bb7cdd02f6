/**
 * Slack's one-off writes in the write scheduler's budgets (core/delivery/one-off.ts): the
 * buckets each Web API method spends (docs/platform-limits.md, Slack, "Rate budgets"), and the
 * calls outside a streamed answer that spend them: an ephemeral sentence (`chat.postEphemeral`,
 * counted in the channel's posts as `chat.postMessage`), a notice posted in a DM, the update of
 * a pressed message (`chat.update`, the workspace's budget).
 */
import type {
  ChatPostEphemeralArguments,
  ChatPostMessageArguments,
  ChatUpdateArguments,
  WebClient,
} from '@slack/web-api';
import { type OneOffScheduler, type OneOffWrite, writeOnce } from '../../core/delivery/one-off.ts';
import type { BucketId } from '../../core/keys.ts';
import type { OutgoingMessage } from '../../core/platform.ts';

/**
 * Whether a message is text alone (it may stream natively): no files, cards or image links, and
 * no mention to notify with (a streamed message notifies nobody: it is posted).
 */
export function isPlainText(message: OutgoingMessage): boolean {
  return !message.files?.length && !message.cards?.length && !message.imageLinks?.length && !message.mentionUser;
}

/**
 * The `text` of a message posted with chat.postMessage: `escaped` (the content as blocks.ts
 * escapes it), after the mention of {@link OutgoingMessage.mentionUser} (`<@U…> `, the one
 * mention the bot writes, left unescaped so that Slack notifies that user) when it is a Slack
 * user id.
 */
export function withMention(message: OutgoingMessage, escaped: string): string {
  const id = message.mentionUser;
  return id !== undefined && /^[UW][A-Z0-9]{2,30}$/.test(id) ? `<@${id}> ${escaped}` : escaped;
}

/** The bucket of a channel's posts (`chat.postMessage`, `chat.postEphemeral`, file shares): about one a second. */
export function postBucket(channel: string): BucketId {
  return { platform: 'slack', kind: 'post', scope: channel };
}

/** The bucket of a workspace's `chat.update` calls (tier 3). */
export function updateBucket(team: string): BucketId {
  return { platform: 'slack', kind: 'update', scope: team };
}

/** The bucket of a workspace's `chat.appendStream` calls (tier 4). */
export function appendBucket(team: string): BucketId {
  return { platform: 'slack', kind: 'appendStream', scope: team };
}

/**
 * `chat.postEphemeral` in the channel's post budget.
 * @throws what the Web API throws.
 */
export function postEphemeral(scheduler: OneOffScheduler, client: WebClient, args: ChatPostEphemeralArguments) {
  return writeOnce(scheduler, { buckets: [postBucket(args.channel)], run: () => client.chat.postEphemeral(args) });
}

/**
 * `chat.postMessage` of a one-off message (not an answer's own) in the channel's post budget;
 * `onHeld` is told when it goes out held back by a wait Slack named beyond MAX_HOLD_MS.
 * @throws what the Web API throws.
 */
export function postMessage(
  scheduler: OneOffScheduler,
  client: WebClient,
  args: ChatPostMessageArguments,
  onHeld?: OneOffWrite<unknown>['onHeld'],
) {
  const run = () => client.chat.postMessage(args);
  return writeOnce(scheduler, { buckets: [postBucket(args.channel)], run, ...(onHeld ? { onHeld } : {}) });
}

/**
 * `chat.update` of a message outside a streamed answer (a pressed message) in the workspace's budget.
 * @throws what the Web API throws.
 */
export function updateMessage(scheduler: OneOffScheduler, client: WebClient, team: string, args: ChatUpdateArguments) {
  return writeOnce(scheduler, { buckets: [updateBucket(team)], run: () => client.chat.update(args) });
}
