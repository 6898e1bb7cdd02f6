/**
 * A streamed response (§4.1 "Streaming rules": `text/event-stream`) read through undici's
 * dispatch API (`Dispatcher.dispatch` with a DispatchHandler: onResponseStart, onResponseData,
 * onResponseEnd, onResponseError) instead of `request()`'s Readable. Each network read's bytes
 * go into an array; a reader takes everything that arrived since its last read in one step.
 *
 * Why not a Readable: a streamed answer is read in bursts (once per write of the answer once its
 * first text is shown: text-of.ts `pace`), and a Readable that is not read meanwhile still pays
 * its stream machinery per network read, and loses what it holds when the connection fails
 * (`destroy` discards its buffer). Here a chunk nobody waits for costs one copy into the body's
 * own buffer, and a failure is seen after the bytes that came before it: nothing that arrived is
 * lost.
 *
 * Why copied: undici hands each read's bytes as a view of the socket's read buffer. Kept until the
 * reader's next turn (about a second once paced), ~10 views and their buffers per stream outlived
 * the young generation's collections and were promoted, to be collected later by full ones
 * (bench:streams, 1,000 streams); copied into one buffer per body, each read's own is let go at once.
 *
 * Backpressure: past {@link MAX_BUFFERED_BYTES} not taken, the connection is paused
 * (`controller.pause()`) until the reader takes them.
 */
import { type Dispatcher, errors as undiciErrors } from 'undici';

/** Bytes kept for the reader, at most, before the connection is paused (1 MiB). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Bytes of an error body read, at most (the rest is let go). */
const MAX_TEXT_BYTES = 1024 * 1024;

/** The smallest buffer a body keeps its bytes in, and the largest it keeps once they are taken (bytes). */
const KEPT_BUFFER_BYTES = { min: 4 * 1024, max: 64 * 1024 };

const NO_BYTES = Buffer.alloc(0);

/** A response whose body is a {@link StreamBody}. */
export interface StreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: StreamBody;
}

/**
 * The body of a streamed response: async-iterable (each step all the bytes that arrived since
 * the last, in one Buffer), or read whole (`text`), or let go (`dump`, `destroy`).
 */
export class StreamBody implements AsyncIterableIterator<Uint8Array, undefined> {
  /** The bytes not taken yet are its first `bytes` (a buffer of the body's own, grown as needed). */
  private buffer: Buffer = NO_BYTES;
  private bytes = 0;
  private ended = false;
  private failure: unknown;
  /** Once the body is let go (dump): bytes dropped as they come, and how many may be before the request is cancelled. */
  private discarding: { left: number } | undefined;
  /** The reader waiting for bytes or the end, if one is. */
  private waiter: (() => void) | undefined;
  /** Told once when the body ends, however it does ({@link watchEnd}). */
  private endWatcher: (() => void) | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** From the handler: bytes of the body. */
  push(chunk: Buffer): void {
    if (this.discarding) {
      this.discarding.left -= chunk.length;
      if (this.discarding.left < 0) this.destroy();
      return;
    }
    const needed = this.bytes + chunk.length;
    if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.buffer.length * 2, KEPT_BUFFER_BYTES.min));
      this.buffer.copy(grown, 0, 0, this.bytes);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.bytes);
    this.bytes = needed;
    if (this.bytes > MAX_BUFFERED_BYTES) this.controller.pause();
    this.wake();
  }

  /** From the handler: the body ended (`error` when it failed); bytes not taken stay readable first. */
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) this.failure = error;
    this.wake();
    const watcher = this.endWatcher;
    this.endWatcher = undefined;
    watcher?.();
  }

  /**
   * Calls `onEnd` once the body ended (completed, failed, cancelled), whether or not its bytes
   * were read: at once when it has. One watcher at a time: a later call replaces it, and
   * `undefined` removes it. (A waiter that raced the end against each of its waits with one
   * long-lived promise left a reaction on that promise per wait, for as long as the stream ran.)
   */
  watchEnd(onEnd: (() => void) | undefined): void {
    if (onEnd && this.ended) {
      this.endWatcher = undefined;
      onEnd();
      return;
    }
    this.endWatcher = onEnd;
  }

  /**
   * The next step: every byte that arrived since the last one (waiting for some), then done.
   * @throws the transport's error (a reset, a timeout, an abort), once the bytes before it were read.
   */
  async next(): Promise<IteratorResult<Uint8Array, undefined>> {
    for (;;) {
      if (this.bytes > 0) return { done: false, value: this.take() };
      if (this.ended) {
        if (this.failure !== undefined) throw this.failure;
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** Leaving a loop over the body early cancels the request ({@link destroy}). */
  async return(): Promise<IteratorResult<Uint8Array, undefined>> {
    this.destroy();
    return { done: true, value: undefined };
  }

  /** The body is its own iterator (one reader; no iterator object of its own per stream). */
  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array, undefined> {
    return this;
  }

  /**
   * The whole body as UTF-8 text (at most {@link MAX_TEXT_BYTES}: past them the request is let go).
   * @throws the transport's error.
   */
  async text(): Promise<string> {
    const parts: Uint8Array[] = [];
    let size = 0;
    for (let read = await this.next(); !read.done; read = await this.next()) {
      parts.push(read.value);
      size += read.value.length;
      if (size > MAX_TEXT_BYTES) {
        this.destroy();
        break;
      }
    }
    return Buffer.concat(parts).toString('utf8');
  }

  /**
   * Lets the rest of the body go without keeping it (so the connection can serve another request
   * once it ends); past `limit` bytes, the request is cancelled instead. Resolves once it ended.
   */
  async dump(options: { limit?: number } = {}): Promise<void> {
    this.discarding = { left: options.limit ?? Number.POSITIVE_INFINITY };
    this.buffer = NO_BYTES;
    this.bytes = 0;
    if (this.controller.paused) this.controller.resume();
    while (!this.ended) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** Cancels the request (its connection is closed); what was not read is dropped. */
  destroy(error?: Error): void {
    this.buffer = NO_BYTES;
    this.bytes = 0;
    this.cancel(error);
  }

  /**
   * Cancels the request (its connection is closed); the bytes that arrived before stay readable,
   * then a read fails with `error` (default RequestAbortedError).
   */
  cancel(error?: Error): void {
    if (!this.ended) this.end(error ?? new undiciErrors.RequestAbortedError());
    if (!this.controller.aborted) this.controller.abort(error ?? new undiciErrors.RequestAbortedError());
  }

  /** The bytes not taken yet, as a buffer of their own (the reader may keep it); a body's buffer grown past KEPT_BUFFER_BYTES.max is let go. */
  private take(): Buffer {
    const value = Buffer.from(this.buffer.subarray(0, this.bytes));
    if (this.buffer.length > KEPT_BUFFER_BYTES.max) this.buffer = NO_BYTES;
    this.bytes = 0;
    if (this.controller.paused) this.controller.resume();
    return value;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

/**
 * Sends a request whose answer is read as a stream ({@link StreamBody}); resolves at its status
 * and headers (1xx skipped).
 * @param options undici's dispatch options (origin, path, method, headers, body, headersTimeout,
 *   bodyTimeout) and a signal: its abort cancels the request (before or after the headers).
 * @throws undici's errors (connect/headers timeouts, resets, RequestAbortedError) before the headers.
 */
export function requestStream(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions & { signal?: AbortSignal | undefined },
): Promise<StreamResponse> {
  const { signal, ...dispatch } = options;
  return new Promise<StreamResponse>((resolve, reject) => {
    if (signal?.aborted) return reject(new undiciErrors.RequestAbortedError());
    dispatcher.dispatch(dispatch, new StreamHandler(signal, resolve, reject));
  });
}

/**
 * The dispatch handler of one {@link requestStream}, and the listener of its signal's abort: one
 * object per request (a streamed answer's request lives as long as the answer; a handler of
 * closures cost a dozen objects per stream for every collection to mark).
 */
class StreamHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private body: StreamBody | undefined;

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (response: StreamResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The signal's abort (an EventListener object): cancels the request. */
  handleEvent(): void {
    this.controller?.abort(new undiciErrors.RequestAbortedError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal?.aborted) controller.abort(new undiciErrors.RequestAbortedError());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // undici's compatibility controller keeps the response's raw header Buffers (views of the
    // socket's first read) for as long as the stream lasts; `headers` has what they said.
    (controller as { rawHeaders?: unknown }).rawHeaders = null;
    if (statusCode < 200) return;
    this.body = new StreamBody(controller);
    this.resolve({ statusCode, headers, body: this.body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.push(chunk);
  }

  onResponseEnd(): void {
    this.done();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.done(error);
  }

  private done(error?: unknown): void {
    this.signal?.removeEventListener('abort', this);
    if (this.body) this.body.end(error);
    else this.reject(error ?? new undiciErrors.SocketError('the response ended before its headers'));
  }
}
