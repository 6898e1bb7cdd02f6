/**
 * One-off platform writes in the write scheduler's budgets (scheduler.ts): every write that is
 * not a streamed answer's own (a /chat's question, an ephemeral sentence, a button's answer, a
 * /models page, an image, an error line) spends the same buckets as streamed text, so that the
 * two together stay within the platform's budgets (docs/architecture.md, "Which writes spend
 * which buckets").
 *
 * A one-off write has a key of its own (never coalesced with, nor replaced by, another write) and
 * is submitted as a final write of a stream of its own: the scheduler serves final writes before
 * intermediate ones and, among them, the stream served longest ago (a new one: first), so a
 * write a user waits for (an acknowledgement, a refusal, the last text) never queues behind a
 * backlog of streamed answers' cosmetic edits; it waits only for its buckets' room.
 *
 * Never nest: a `run` must not itself wait for a scheduled write of a bucket it spends (a
 * bucket with no room until the outer write completes would wait forever). Wrap each platform
 * call, not a sequence of them with fallbacks.
 */
import { randomUUID } from 'node:crypto';
import type { BucketId } from '../keys.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../platform.ts';
import type { WriteScheduler } from './scheduler.ts';
import type { WriteRequest } from './write-request.ts';

/** One write outside a streamed answer. */
export interface OneOffWrite<T> {
  /** The buckets it spends one write of (none: it runs at once, counted nowhere). */
  buckets: readonly BucketId[];
  /** Performs the write. Its result resolves {@link writeOnce}; its rejection rejects it. */
  run(): Promise<T>;
  /** Told when the write goes out held back by a wait the platform named beyond MAX_HOLD_MS (WriteRequest.onHeld). */
  onHeld?: WriteRequest['onHeld'];
}

/** Where one-off writes are scheduled: the bot's scheduler, or nothing (a write then runs at once: tests of a part alone). */
export type OneOffScheduler = Pick<WriteScheduler, 'submit'> | undefined;

/**
 * Runs one write when its buckets have room, ahead of intermediate (cosmetic) writes.
 * @returns what `run` returned.
 * @throws what `run` threw.
 */
export async function writeOnce<T>(scheduler: OneOffScheduler, write: OneOffWrite<T>): Promise<T> {
  if (!scheduler || write.buckets.length === 0) return write.run();
  const key = `once:${randomUUID()}`;
  let result: { value: T } | undefined;
  await scheduler.submit({
    key,
    stream: key,
    buckets: write.buckets,
    final: true,
    run: async () => {
      result = { value: await write.run() };
    },
    ...(write.onHeld ? { onHeld: write.onHeld } : {}),
  });
  // A one-off key is never replaced, so the write ran.
  return result!.value;
}

/**
 * Posts one public message of a reply outside a streamed answer (a /models page, an image, a
 * line of links), spending the buckets the reply names for a new message.
 * @param index which message of the reply it is (0: the first), as ReplyChannel.buckets reads it.
 * @throws what ReplyChannel.send throws.
 */
export function sendOnce(
  scheduler: OneOffScheduler,
  reply: ReplyChannel,
  message: OutgoingMessage,
  index = 0,
): Promise<MessageHandle> {
  const buckets = reply.buckets?.('send', index, message) ?? [];
  return writeOnce(scheduler, { buckets, run: () => reply.send(message) });
}

/**
 * Edits one message of a reply outside a streamed answer (an image put into its progress line,
 * an error line), spending the buckets the reply names for an edit.
 * @throws what MessageHandle.edit throws.
 */
export function editOnce(
  scheduler: OneOffScheduler,
  reply: ReplyChannel,
  handle: MessageHandle,
  message: OutgoingMessage,
  index = 0,
): Promise<void> {
  const buckets = reply.buckets?.('edit', index, message) ?? [];
  return writeOnce(scheduler, { buckets, run: () => handle.edit(message) });
}
