/**
 * Which failures of a model's request let the next fallback model answer (core/service/fallback.ts,
 * docs/service-api.md §10), read from the service's answers as the client reads them
 * (`errorFromResponse`), and how a chain is asked: in order, each model once, the first failure
 * told when all are unavailable, never past a Stop.
 */
import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../src/core/service/error-responses.ts';
import {
  AbortedError,
  ConnectionError,
  StreamIdleError,
  StreamInterruptedError,
  TimeoutError,
} from '../../src/core/service/errors.ts';
import { askInTurn, type FallbackStep, fallsBack, modelChain } from '../../src/core/service/fallback.ts';

const openAi = (message: string, code?: string) => ({ error: { message, type: 'invalid_request_error', code } });

describe('fallsBack', () => {
  it('falls back on 5xx, a timeout, a 404, a 400 saying the model does not exist, and a stream failing before its first text', () => {
    for (const status of [500, 502, 503, 504])
      expect(fallsBack(errorFromResponse(status, undefined)), `${status}`).toBe(true);
    expect(fallsBack(new TimeoutError('connect'))).toBe(true);
    expect(fallsBack(new TimeoutError('headers'))).toBe(true);
    // Thrown before any text was shown (an opened stream's first text is read first: first-text.ts).
    expect(fallsBack(new TimeoutError('body'))).toBe(true);
    expect(fallsBack(new StreamIdleError(1000))).toBe(true);
    expect(fallsBack(new StreamInterruptedError('the service reported an error mid-stream: overloaded'))).toBe(true);
    expect(fallsBack(errorFromResponse(404, openAi("The model 'x' does not exist", 'model_not_found')))).toBe(true);
    expect(fallsBack(errorFromResponse(400, openAi('whatever', 'model_not_found')))).toBe(true);
    expect(
      fallsBack(errorFromResponse(400, openAi('The model `x` does not exist or you do not have access to it.'))),
    ).toBe(true);
    expect(fallsBack(errorFromResponse(400, openAi('Unknown model: x')))).toBe(true);
  });

  it("does not fall back on the user's or the account's errors, 429, an unreachable service, or a Stop", () => {
    expect(fallsBack(errorFromResponse(400, openAi("Invalid 'temperature': too hot.", 'invalid_value')))).toBe(false);
    expect(fallsBack(errorFromResponse(400, openAi("the model 'x' does not support image input")))).toBe(false);
    expect(fallsBack(errorFromResponse(400, openAi('maximum context length is 8192 tokens')))).toBe(false);
    expect(fallsBack(errorFromResponse(401, openAi('bad key', 'invalid_api_key')))).toBe(false);
    expect(fallsBack(errorFromResponse(403, openAi('not allowed')))).toBe(false);
    expect(fallsBack(errorFromResponse(422, openAi('model does not exist')))).toBe(false);
    expect(fallsBack(errorFromResponse(429, openAi('slow down'), '1'))).toBe(false);
    expect(fallsBack(new ConnectionError('refused'))).toBe(false);
    expect(fallsBack(new AbortedError())).toBe(false);
    expect(fallsBack(new Error('a bug'))).toBe(false);
  });
});

describe('modelChain and askInTurn', () => {
  it('asks the model, then each fallback once in order (duplicates skipped), and names the one that answered', async () => {
    expect(modelChain('a', ['b', 'a', 'c', 'b'])).toEqual(['a', 'b', 'c']);
    expect(modelChain(undefined, ['x'])).toEqual([undefined, 'x']);
    const asked: string[] = [];
    const steps: FallbackStep[] = [];
    const answered = await askInTurn(
      modelChain('a', ['b', 'c']),
      async (model) => {
        asked.push(model);
        if (model === 'a') throw errorFromResponse(503, undefined);
        if (model === 'b') throw new TimeoutError('headers');
        return `from ${model}`;
      },
      (step) => steps.push(step),
    );
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(answered).toEqual({ value: 'from c', model: 'c', failed: 'a' });
    expect(steps.map((s) => [s.from, s.to, s.error.code])).toEqual([
      ['a', 'b', 'server_error'],
      ['b', 'c', 'timeout'],
    ]);
  });

  it("tells the first model's failure when all are unavailable, stops at a failure that does not fall back, and never goes on past a Stop", async () => {
    const first = errorFromResponse(404, openAi('no such model', 'model_not_found'));
    await expect(
      askInTurn(
        ['a', 'b'],
        async (m) => Promise.reject(m === 'a' ? first : errorFromResponse(500, undefined)),
        () => undefined,
      ),
    ).rejects.toBe(first);
    const userError = errorFromResponse(400, openAi('bad', 'invalid_value'));
    const asked: string[] = [];
    await expect(
      askInTurn(
        ['a', 'b', 'c'],
        async (m) => {
          asked.push(m);
          throw m === 'a' ? first : userError;
        },
        () => undefined,
      ),
    ).rejects.toBe(userError);
    expect(asked).toEqual(['a', 'b']);
    const stop = new AbortController();
    const stopped: string[] = [];
    await expect(
      askInTurn(
        ['a', 'b'],
        async (m) => {
          stopped.push(m);
          stop.abort();
          throw errorFromResponse(503, undefined);
        },
        () => undefined,
        stop.signal,
      ),
    ).rejects.toMatchObject({ code: 'server_error' });
    expect(stopped).toEqual(['a']);
  });
});
