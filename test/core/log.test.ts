import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { createLogger, logUnhandledRejections, REDACTED, scrubSecrets } from '../../src/log.ts';

/** A logger writing parsed lines into `lines`. */
function collecting(secrets: string[]) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', secrets, destination }), lines };
}

describe('log', () => {
  it('scrubs a secret and its JSON-escaped form, and leaves short values alone', () => {
    expect(scrubSecrets('key sk-abc"def in "sk-abc\\"def"', ['sk-abc"def', 'abc'])).toBe(`key ${REDACTED} in "${REDACTED}"`);
  });

  it('logs an unhandled rejection once, as an error with the secret scrubbed, and the handler can be removed', () => {
    const secret = 'xapp-1-A0-secret-app-token';
    const { log, lines } = collecting([secret]);
    const fakeProcess = new EventEmitter();
    const remove = logUnhandledRejections(log, fakeProcess);
    fakeProcess.emit('unhandledRejection', new Error(`apps.connections.open failed for ${secret}`), Promise.resolve());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/^unhandled promise rejection/) });
    expect(JSON.stringify(lines[0])).toContain('apps.connections.open failed');
    expect(JSON.stringify(lines[0])).not.toContain(secret);
    remove();
    expect(fakeProcess.listenerCount('unhandledRejection')).toBe(0);
  });
});
