/**
 * A streamed answer, from the service's chunks to the platform's messages: the text of each
 * network read, written into a StreamingReply; notes under the answer; a stream broken after
 * text was shown keeps that text with the reason. Reports `stream.start` / `stream.end`
 * (time to first text, duration, outcome) on the bot's events.
 */
import type { CommandContext } from '../platform.ts';
import { StreamingReply, type Clock } from './streaming-reply.ts';
import { ShownError, withReference } from '../command.ts';
import { ServiceError, userMessageOf } from '../service/errors.ts';
import type { Stream } from '../service/stream.ts';
import type { BotEvents } from '../events.ts';

/**
 * The text of a streamed completion, one string per network read (the pieces of its chunks
 * joined; reads that carry no text are skipped).
 * @param pieceOf the text of one chunk (§4.1 streaming rule 2: `delta` or `content` may be absent).
 */
export async function* textOf<T>(stream: Stream<T>, pieceOf: (chunk: T) => string | null | undefined): AsyncGenerator<string, void, undefined> {
  for await (const chunks of stream.batches()) {
    let text = '';
    for (const chunk of chunks) text += pieceOf(chunk) ?? '';
    if (text) yield text;
  }
}

/** What an answer without text shows. */
const EMPTY_ANSWER = '*(the model returned an empty answer)*';

/**
 * Streams text deltas into the reply and finishes it.
 * @param finalize turns the complete text into what is finally shown (e.g. pretty JSON).
 * @returns the complete streamed text.
 * @throws ServiceError before any text arrived; ShownError when the stream broke after text
 *   was shown (the notice is appended to the message).
 */
export async function streamAnswer(
  ctx: CommandContext,
  deltas: AsyncIterable<string>,
  options: { clock?: Clock; finalize?: (text: string) => string; notes?: readonly string[]; events?: BotEvents } = {},
): Promise<string> {
  const notes = options.notes?.length ? `\n\n${options.notes.map((n) => `_⚠️ ${n}_`).join('\n')}` : '';
  const reply = new StreamingReply(ctx.reply, { log: ctx.log, ...(options.clock ? { clock: options.clock } : {}) });
  const started = performance.now();
  let firstTokenMs: number | undefined;
  const end = (outcome: string) => options.events?.emit('stream.end', { platform: ctx.platform, firstTokenMs, durationMs: performance.now() - started, outcome });
  options.events?.emit('stream.start', { platform: ctx.platform });
  try {
    for await (const delta of deltas) {
      firstTokenMs ??= performance.now() - started;
      reply.append(delta);
    }
  } catch (error) {
    end(error instanceof ServiceError ? error.code : 'internal');
    if (reply.content === '' || !(error instanceof ServiceError)) throw error;
    const partial = reply.content;
    await reply.finish(`${partial}\n\n⚠️ ${error.code === 'aborted' ? userMessageOf(error) : withReference(userMessageOf(error), ctx.ref)}${notes}`);
    throw new ShownError(error, partial);
  }
  const answer = reply.content;
  const shown = options.finalize ? options.finalize(answer) : answer;
  try {
    await reply.finish(notes ? `${shown.trim() ? shown : EMPTY_ANSWER}${notes}` : shown);
  } finally {
    end('done');
  }
  ctx.log.debug({ chars: answer.length, messages: reply.messageCount, writes: reply.writes }, 'answer streamed');
  return answer;
}

