/**
 * StreamBody (service/stream-body.ts), driven as undici's dispatch would drive it (a controller
 * that records pause / resume / abort): a read takes all that arrived in one step, past 1 MiB not
 * taken the connection is paused until the reader takes it, a failure comes after the bytes
 * before it, `text` and `dump` are bounded.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_BYTES, requestStream, StreamBody } from '../../src/core/service/stream-body.ts';

/** A dispatch controller that records what the body asked of it. */
function controller() {
  const calls: string[] = [];
  let paused = false;
  let aborted = false;
  const c = {
    calls,
    get paused() {
      return paused;
    },
    get aborted() {
      return aborted;
    },
    reason: null,
    pause() {
      paused = true;
      calls.push('pause');
    },
    resume() {
      paused = false;
      calls.push('resume');
    },
    abort() {
      aborted = true;
      calls.push('abort');
    },
  };
  return c as typeof c & Dispatcher.DispatchController;
}

describe('StreamBody', () => {
  it('one read takes every chunk that arrived since the last, then waits for more, then ends', async () => {
    const body = new StreamBody(controller());
    body.push(Buffer.from('data: a\n\n'));
    body.push(Buffer.from('data: b\n\n'));
    const reads = body[Symbol.asyncIterator]();
    expect(Buffer.from((await reads.next()).value!).toString()).toBe('data: a\n\ndata: b\n\n');
    const waiting = reads.next();
    body.push(Buffer.from('data: c\n\n'));
    expect(Buffer.from((await waiting).value!).toString()).toBe('data: c\n\n');
    body.end();
    expect((await reads.next()).done).toBe(true);
  });

  it("keeps a copy of each read's bytes (not the read's own buffer), and hands the reader bytes of its own", async () => {
    const body = new StreamBody(controller());
    const read = Buffer.from('data: a\n\n');
    body.push(read);
    // The read's buffer is let go (here: reused) at once; what the body keeps is unchanged.
    read.fill(0);
    const first = (await body.next()).value!;
    expect(Buffer.from(first).toString()).toBe('data: a\n\n');
    body.push(Buffer.from('data: b\n\n'));
    const second = (await body.next()).value!;
    // Taking the next bytes left the first ones as the reader had them.
    expect(Buffer.from(first).toString()).toBe('data: a\n\n');
    expect(Buffer.from(second).toString()).toBe('data: b\n\n');
  });

  it('pauses the connection past 1 MiB not taken, and resumes it when the reader takes them', async () => {
    const c = controller();
    const body = new StreamBody(c);
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let sent = 0; sent <= MAX_BUFFERED_BYTES; sent += chunk.length) body.push(chunk);
    expect(c.calls).toEqual(['pause']);
    const read = await body.next();
    expect(read.value!.length).toBe(MAX_BUFFERED_BYTES + chunk.length);
    expect(c.calls).toEqual(['pause', 'resume']);
  });

  it('a failure comes after the bytes that arrived before it', async () => {
    const body = new StreamBody(controller());
    body.push(Buffer.from('data: kept\n\n'));
    body.end(new Error('other side closed'));
    expect(Buffer.from((await body.next()).value!).toString()).toBe('data: kept\n\n');
    await expect(body.next()).rejects.toThrow('other side closed');
  });

  it('text() reads at most 1 MiB, then lets the request go', async () => {
    const c = controller();
    const body = new StreamBody(c);
    const reading = body.text();
    body.push(Buffer.from('{"error":'));
    await Promise.resolve();
    body.push(Buffer.alloc(MAX_BUFFERED_BYTES, 'x'));
    const text = await reading;
    expect(text.startsWith('{"error":')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + 16);
    expect(c.calls).toContain('abort');
  });

  it('dump() drops what comes until the end; past its limit it cancels the request', async () => {
    const c = controller();
    const body = new StreamBody(c);
    const dumped = body.dump();
    body.push(Buffer.alloc(10_000));
    body.end();
    await dumped;
    expect(c.calls).not.toContain('abort');

    const limited = controller();
    const other = new StreamBody(limited);
    const done = other.dump({ limit: 1_000 });
    other.push(Buffer.alloc(2_000));
    await done;
    expect(limited.calls).toContain('abort');
  });

  it("requestStream lets go of the response's raw header buffers once it has the headers", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'abc' });
      res.write('data: a\n\n');
      setTimeout(() => res.end('data: [DONE]\n\n'), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent();
    // An interceptor that sees the controller undici hands the body's handler.
    const controllers: Array<{ rawHeaders?: unknown }> = [];
    const seen = agent.compose(
      (dispatch) => (options, handler) =>
        dispatch(options, {
          ...handler,
          onRequestStart: (c, context) => handler.onRequestStart?.(c, context),
          onResponseStart: (c, status, headers, message) => {
            controllers.push(c as { rawHeaders?: unknown });
            return handler.onResponseStart?.(c, status, headers, message);
          },
          onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
          onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
          onResponseError: (c, error) => handler.onResponseError?.(c, error),
        }),
    );
    try {
      const { port } = server.address() as AddressInfo;
      const response = await requestStream(seen, { origin: `http://127.0.0.1:${port}`, path: '/', method: 'GET' });
      expect(response.headers['x-request-id']).toBe('abc');
      expect(controllers).toHaveLength(1);
      // Kept for the stream's life, they would hold the socket's first read (and a Buffer per name and value).
      expect(controllers[0]!.rawHeaders).toBeNull();
      expect(await response.body.text()).toBe('data: a\n\ndata: [DONE]\n\n');
    } finally {
      await agent.close();
      server.close();
    }
  });
});
