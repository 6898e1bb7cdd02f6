/**
 * Slack native streaming (src/platforms/slack/stream.ts) against a recording stand-in for the
 * WebClient's chat methods: pages that grow become appends with only the new text, the final
 * write stops the stream, a stream Slack closed goes on by chat.update, and refusals are
 * remembered per workspace or per channel.
 */

import type { WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NativeStream, SlackStreaming } from '../../src/platforms/slack/stream.ts';

/** A Web API platform error as @slack/web-api throws it. */
const slackError = (code: string) =>
  Object.assign(new Error(`An API error occurred: ${code}`), {
    code: 'slack_webapi_platform_error',
    data: { ok: false, error: code },
  });

function recordingClient(failures: Record<string, string[]> = {}) {
  const calls: Array<{ method: string; args: Record<string, unknown> }> = [];
  const call = (method: string) => async (args: Record<string, unknown>) => {
    calls.push({ method, args });
    const code = failures[method]?.shift();
    if (code) throw slackError(code);
    return { ok: true, channel: args.channel, ts: '1700000000.000100' };
  };
  const client = {
    chat: {
      startStream: call('chat.startStream'),
      appendStream: call('chat.appendStream'),
      stopStream: call('chat.stopStream'),
      update: call('chat.update'),
    },
  };
  return { client: client as unknown as WebClient, calls };
}

const log = pino({ level: 'silent' });
const target = { channel: 'C1', threadTs: '1700000000.000001', recipient: { teamId: 'T1', userId: 'U1' } };

describe('NativeStream', () => {
  it('starts with the recipient ids, appends only what is new, and stops with the last piece', async () => {
    const { client, calls } = recordingClient();
    const stream = await NativeStream.start(client, target, 'Hello', log);
    await stream.write('Hello, wor', false);
    await stream.write('Hello, wor', false);
    await stream.write('Hello, world & more', true);
    await stream.close();
    expect(calls).toEqual([
      {
        method: 'chat.startStream',
        args: {
          channel: 'C1',
          thread_ts: target.threadTs,
          markdown_text: 'Hello',
          recipient_team_id: 'T1',
          recipient_user_id: 'U1',
        },
      },
      { method: 'chat.appendStream', args: { channel: 'C1', ts: '1700000000.000100', markdown_text: ', wor' } },
      { method: 'chat.stopStream', args: { channel: 'C1', ts: '1700000000.000100', markdown_text: 'ld &amp; more' } },
    ]);
  });

  it('a rewritten text stops the stream and updates the message', async () => {
    const { client, calls } = recordingClient();
    const stream = await NativeStream.start(client, { channel: 'D1', threadTs: '1.1' }, '{"a":1}', log);
    await stream.write('```json\n{ "a": 1 }\n```', true);
    expect(calls.map((c) => c.method)).toEqual(['chat.startStream', 'chat.stopStream', 'chat.update']);
    expect(calls[0]!.args).not.toHaveProperty('recipient_user_id');
    // Rendered as a posted answer: the Markdown in a markdown block, mrkdwn beside it (no language label there).
    expect(calls[2]!.args.blocks).toEqual([{ type: 'markdown', text: '```json\n{ "a": 1 }\n```' }]);
    expect(calls[2]!.args.text).toBe('```\n{ "a": 1 }\n```');
  });

  it('a stream Slack closed mid-answer (message_not_in_streaming_state) continues by chat.update with the whole text', async () => {
    const { client, calls } = recordingClient({ 'chat.appendStream': ['message_not_in_streaming_state'] });
    const stream = await NativeStream.start(client, target, 'part one', log);
    await stream.write('part one, part two', false);
    await stream.write('part one, part two, end', true);
    await stream.close();
    expect(calls.map((c) => c.method)).toEqual(['chat.startStream', 'chat.appendStream', 'chat.update', 'chat.update']);
    expect(calls.at(-1)!.args.text).toBe('part one, part two, end');
  });

  it('other errors are thrown to the caller (the scheduler retries final writes)', async () => {
    const { client } = recordingClient({ 'chat.appendStream': ['internal_error'] });
    const stream = await NativeStream.start(client, target, 'a', log);
    await expect(stream.write('ab', false)).rejects.toThrow('internal_error');
  });
});

describe('SlackStreaming', () => {
  it('remembers unknown_method for the workspace and not_in_channel for the channel, for an hour', () => {
    let now = 0;
    const streaming = new SlackStreaming(undefined, { now: () => now });
    expect(streaming.allowed('T1', 'C1')).toBe(true);
    expect(streaming.refuse('T1', 'C1', slackError('not_in_channel'))).toBe(true);
    expect(streaming.allowed('T1', 'C1')).toBe(false);
    expect(streaming.allowed('T1', 'C2')).toBe(true);
    expect(streaming.refuse('T2', 'C9', slackError('unknown_method'))).toBe(true);
    expect(streaming.allowed('T2', 'C3')).toBe(false);
    expect(streaming.refuse('T1', 'C2', slackError('internal_error'))).toBe(false);
    expect(streaming.refuse('T1', 'C2', new Error('socket hang up'))).toBe(false);
    now += 60 * 60_000 + 1;
    expect(streaming.allowed('T1', 'C1')).toBe(true);
    expect(streaming.allowed('T2', 'C3')).toBe(true);
  });

  it('gives out 20 chat.startStream calls a minute per workspace (tier 2), then says no until the window moves', async () => {
    let now = 0;
    const streaming = new SlackStreaming(undefined, { now: () => now });
    const taken: boolean[] = [];
    for (let i = 0; i < 25; i++) taken.push(await streaming.takeStart('T1'));
    expect(taken.filter(Boolean)).toHaveLength(20);
    expect(taken.slice(20)).toEqual([false, false, false, false, false]);
    expect(await streaming.takeStart('T2')).toBe(true);
    now += 60_001;
    expect(await streaming.takeStart('T1')).toBe(true);
  });

  it("a startStream refused as rate limited stops native starts in the workspace for Slack's Retry-After, then allows them again", () => {
    let now = 0;
    const streaming = new SlackStreaming(undefined, { now: () => now });
    const limited = Object.assign(new Error('A rate limit was exceeded'), {
      code: 'slack_webapi_rate_limited_error',
      retryAfter: 45,
    });
    expect(streaming.refuse('T1', 'C1', limited)).toBe(true);
    expect(streaming.allowed('T1', 'C2')).toBe(false);
    now += 45_001;
    expect(streaming.allowed('T1', 'C2')).toBe(true);
  });

  it("with a shared store that does not answer, no native start is taken (the other instances' starts are unknown)", async () => {
    const silent = { kind: 'redis', increment: () => new Promise(() => undefined) } as unknown as ConstructorParameters<
      typeof SlackStreaming
    >[0];
    const streaming = new SlackStreaming(silent);
    expect(await streaming.takeStart('T1')).toBe(false);
  });
});
