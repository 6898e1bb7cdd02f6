import { describe, expect, it } from 'vitest';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import { type Clock, READ_LEAD_MS, StreamingReply } from '../../src/core/delivery/streaming-reply.ts';
import type { BucketId } from '../../src/core/keys.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel, ReplyLimits } from '../../src/core/platform.ts';

/** A virtual clock: sleep() resolves when the test advances time past its deadline. */
class VirtualClock implements Clock {
  t = 0;
  private sleepers: Array<{ until: number; resolve: () => void }> = [];
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((resolve) => this.sleepers.push({ until: this.t + ms, resolve }));
  async advance(ms: number): Promise<void> {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.until <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t);
    due.forEach((s) => s.resolve());
    await settle();
  }
}
const settle = () => new Promise<void>((r) => setImmediate(r));

/** A channel that records every call and fails when two are in flight at once. */
class RecordingChannel implements ReplyChannel {
  readonly limits: ReplyLimits;
  calls: Array<{ kind: 'send' | 'edit'; message: number; content: string; at: number }> = [];
  inFlight = 0;
  maxInFlight = 0;
  failNext = 0;
  /** Every write fails with this error from now on (a deleted message). */
  failWith: unknown;
  /** Writes tried, failed ones included. */
  attempts = 0;
  isDeleted?: (error: unknown) => boolean;
  contents: string[] = [];
  buckets?: (kind: 'send' | 'edit', index: number) => BucketId[];
  constructor(
    private readonly clock: VirtualClock,
    maxChars = 2000,
    interval = 1000,
    private readonly latency = 0,
  ) {
    this.limits = {
      maxChars,
      minEditIntervalMs: interval,
      cards: { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' },
    };
  }
  private async call(kind: 'send' | 'edit', message: number, content: string) {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.latency) await this.clock.sleep(this.latency);
      this.attempts++;
      if (this.failWith !== undefined) throw this.failWith;
      if (this.failNext > 0) {
        this.failNext--;
        throw new Error('platform said no');
      }
      this.calls.push({ kind, message, content, at: this.clock.t });
      this.contents[message] = content;
    } finally {
      this.inFlight--;
    }
  }
  async defer() {}
  async send(m: OutgoingMessage): Promise<MessageHandle> {
    const index = this.contents.length;
    this.contents.push('');
    await this.call('send', index, m.content);
    return { edit: (e) => this.call('edit', index, e.content) };
  }
  async sendEphemeral() {}
}

describe('StreamingReply', () => {
  it('sends the first text at once, then paces edits at the interval with one call in flight', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000, 200);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.append('Hel');
    await settle();
    expect(channel.inFlight).toBe(1); // the first send started without waiting
    for (let i = 0; i < 30; i++) {
      reply.append('lo ');
      await clock.advance(100);
    }
    const done = reply.finish();
    for (let i = 0; i < 40; i++) await clock.advance(100);
    await done;
    expect(channel.maxInFlight).toBe(1);
    expect(channel.calls[0]).toMatchObject({ kind: 'send', content: 'Hel', at: 200 });
    const starts = channel.calls.map((c) => c.at - 200);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(1000);
    expect(channel.calls.length).toBeGreaterThanOrEqual(3);
    expect(channel.contents).toEqual([`Hel${'lo '.repeat(30)}`]);
  });

  it('readWaitMs: no wait before the first text is written; then until shortly before the next write may run', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.status('is thinking…');
    await settle();
    // A status line is no text: the stream is read at once.
    expect(channel.calls).toHaveLength(1);
    expect(reply.readWaitMs()).toBe(0);
    await clock.advance(1000);
    reply.append('Hello');
    await settle();
    expect(channel.calls.at(-1)!.content).toBe('Hello');
    expect(reply.readWaitMs()).toBe(1000 - READ_LEAD_MS);
    await clock.advance(400);
    expect(reply.readWaitMs()).toBe(600 - READ_LEAD_MS);
    await clock.advance(600);
    expect(reply.readWaitMs()).toBe(0);
    const done = reply.finish();
    expect(reply.readWaitMs()).toBe(0);
    await clock.advance(1000);
    await done;
  });

  it('continues past the limit in a follow-up message and finishes every page', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 100, 1000);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    for (const w of words) {
      reply.append(w);
      await clock.advance(50);
    }
    const done = reply.finish();
    for (let i = 0; i < 20; i++) await clock.advance(1000);
    await done;
    expect(channel.contents.length).toBeGreaterThan(1);
    channel.contents.forEach((c) => expect(c.length).toBeLessThanOrEqual(100));
    expect(channel.contents.join(' ')).toBe(words.join(''));
    expect(reply.messageCount).toBe(channel.contents.length);
  });

  it('skips a failed intermediate edit but retries the final one until it lands', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.append('one');
    await settle();
    channel.failNext = 1;
    reply.append(' two');
    await clock.advance(1000); // this edit fails and is skipped
    channel.failNext = 2;
    const done = reply.finish();
    for (let i = 0; i < 10; i++) await clock.advance(1000);
    await done;
    expect(channel.contents).toEqual(['one two']);
  });

  it('an edit in flight when finish() begins counts as final: its failure is retried, not fatal', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000, 200);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.append('one');
    await clock.advance(200); // the first send lands
    reply.append(' two');
    await clock.advance(800); // the paced edit starts (200 ms in flight)
    expect(channel.inFlight).toBe(1);
    channel.failNext = 1;
    const done = reply.finish();
    for (let i = 0; i < 10; i++) await clock.advance(200);
    await done;
    expect(channel.contents).toEqual(['one two']);
  });

  it('gives up on a final write after the allowed attempts and reports the error', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 10);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }), finalAttempts: 2 });
    reply.append('text');
    await settle();
    channel.failNext = 5;
    reply.append(' more');
    const done = reply.finish();
    const result = expect(done).rejects.toThrow('platform said no');
    for (let i = 0; i < 10; i++) await clock.advance(1000);
    await result;
  });

  it('posts no page of whitespace alone: the text after blank pages is posted, and the answer ends', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 100, 1000);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.append(`Intro\n${'\n'.repeat(1_000)}word`);
    const done = reply.finish();
    for (let i = 0; i < 10; i++) await clock.advance(1000);
    await done;
    expect(channel.contents.map((c) => c.trim())).toEqual(['Intro', 'word']);
    expect(reply.shownAnswer.trim().split(/\n+/)).toEqual(['Intro', 'word']);
  });

  it('shownAnswer: the text the messages show when a final write failed, without the status line before it', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }), finalAttempts: 2 });
    reply.status('⏳ Queued: you are next.');
    await settle();
    expect(reply.shownAnswer).toBe('');
    reply.append('shown');
    await clock.advance(1000);
    channel.failNext = 10;
    reply.append(' and never shown');
    const result = expect(reply.finish()).rejects.toThrow('platform said no');
    for (let i = 0; i < 10; i++) await clock.advance(1000);
    await result;
    expect(reply.shownAnswer).toBe('shown');
  });

  it('stops writing once a message was deleted, and fails its final write at once', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock, 2000, 1000);
    const gone = new Error('Unknown Message');
    channel.isDeleted = (error) => error === gone;
    let deletions = 0;
    const reply = new StreamingReply(channel, {
      scheduler: new WriteScheduler({ clock }),
      onDeleted: () => deletions++,
    });
    reply.append('one');
    await settle();
    channel.failWith = gone;
    reply.append(' two');
    await clock.advance(1000);
    expect(deletions).toBe(1);
    const writes = channel.attempts;
    reply.append(' three');
    await clock.advance(2000);
    expect(channel.attempts).toBe(writes);
    const result = expect(reply.finish()).rejects.toBe(gone);
    await clock.advance(10);
    await result;
    expect(channel.attempts).toBe(writes + 1);
    expect(reply.shownAnswer).toBe('one');
  });

  it('shows a notice instead of an empty message when the model said nothing', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    await reply.finish();
    expect(channel.contents).toEqual(['*(the model returned an empty answer)*']);
  });

  describe('over the messages of an earlier answer', () => {
    const STOP = { id: 'stop:1', label: 'Stop' };
    const REGENERATE = { id: 'regenerate:abc:u1', label: 'Regenerate' };
    /** Earlier messages that record what each shows and which buttons it carries. */
    function earlier(count: number) {
      const shown = Array.from({ length: count }, (_, i) => ({ content: `old ${i}`, buttons: ['regenerate:old'] }));
      const handles: MessageHandle[] = shown.map((message, i) => ({
        ref: `test:old:${i}`,
        buckets: [{ platform: 'discord', kind: 'writes', scope: `old-${i}` }],
        edit: async (m: OutgoingMessage) => {
          message.content = m.content;
          if (m.buttons) message.buttons = m.buttons.map((b) => b.id);
        },
      }));
      return { shown, handles };
    }
    /** The scheduler, recording the buckets of each write submitted. */
    function recordingScheduler(clock: VirtualClock) {
      const scheduler = new WriteScheduler({ clock });
      const buckets: string[][] = [];
      const submit = scheduler.submit.bind(scheduler);
      scheduler.submit = (write) => {
        buckets.push(write.buckets.map((b) => String(b.scope)));
        return submit(write);
      };
      return { scheduler, buckets };
    }

    it('writes a shorter answer page by page over the messages, the rest saying they were replaced without buttons, Regenerate on the last page, nothing posted', async () => {
      const clock = new VirtualClock();
      const channel = new RecordingChannel(clock, 20);
      const { shown, handles } = earlier(3);
      const { scheduler, buckets } = recordingScheduler(clock);
      const reply = new StreamingReply(channel, { scheduler, controls: [STOP], over: handles });
      expect(reply.messageRefs).toEqual(['test:old:0', 'test:old:1', 'test:old:2']);
      reply.append('first page text. ');
      await settle();
      expect(shown[0]).toEqual({ content: 'first page text. ', buttons: ['stop:1'] });
      reply.append('second page.');
      const done = reply.finish(undefined, { controls: [REGENERATE] });
      for (let i = 0; i < 10; i++) await clock.advance(1000);
      await done;
      expect(shown).toEqual([
        { content: 'first page text.', buttons: [] },
        { content: 'second page.', buttons: ['regenerate:abc:u1'] },
        { content: '*(replaced by the text above)*', buttons: [] },
      ]);
      expect(channel.calls).toEqual([]);
      expect(reply.messageCount).toBe(3);
      // Each message's writes spent its own buckets.
      expect(new Set(buckets.flat())).toEqual(new Set(['old-0', 'old-1', 'old-2']));
    });

    it('writes a longer answer over the one message, then posts the next page as usual with Regenerate', async () => {
      const clock = new VirtualClock();
      const channel = new RecordingChannel(clock, 20);
      channel.buckets = (kind: 'send' | 'edit', index: number) => [
        { platform: 'discord', kind: 'writes', scope: `${kind}-${index}` },
      ];
      const { shown, handles } = earlier(1);
      const { scheduler, buckets } = recordingScheduler(clock);
      const reply = new StreamingReply(channel, { scheduler, controls: [STOP], over: handles });
      reply.append('first page text. second page.');
      const done = reply.finish(undefined, { controls: [REGENERATE] });
      for (let i = 0; i < 10; i++) await clock.advance(1000);
      await done;
      expect(shown).toEqual([{ content: 'first page text.', buttons: [] }]);
      expect(channel.calls.map((c) => [c.kind, c.content])).toEqual([['send', 'second page.']]);
      expect(reply.messageRefs).toBeUndefined(); // the recording channel names no message
      expect(buckets.flat()).toContain('old-0');
      expect(buckets.flat()).toContain('send-1');
    });
  });

  it('ends with a sentence saying the platform is refusing writes when a write of the answer was held back for a wait named beyond MAX_HOLD_MS', async () => {
    const clock = new VirtualClock();
    const channel = new RecordingChannel(clock);
    const bucket: BucketId = { platform: 'discord', kind: 'channel', scope: '1' };
    channel.buckets = () => [bucket];
    const scheduler = new WriteScheduler({ clock });
    scheduler.define({ platform: 'discord', kind: 'channel' }, { limit: 5, windowMs: 5_000 });
    const reply = new StreamingReply(channel, { scheduler });
    reply.append('First line.');
    await settle();
    // The platform answered the first write with a reset an hour away.
    scheduler.observe(bucket, { remaining: 0, resetAfterMs: 3_600_000 });
    reply.append(' Second line.');
    const done = reply.finish();
    for (let i = 0; i < 61; i++) await clock.advance(1000);
    await done;
    expect(channel.contents).toEqual([
      'First line. Second line.\n\n_⚠️ Discord is refusing my writes here for now (it asked me to wait 60 minutes), so this answer came late._',
    ]);
    expect(channel.calls.map((c) => c.at)).toEqual([0, 60_000]);
  });
});

describe('StreamingReply: the buttons an edit names', () => {
  const STOP = { id: 'stop:1', label: 'Stop' };
  const REGENERATE = { id: 'regenerate:abc:u1', label: 'Regenerate' };
  /** A channel that records which buttons each write names (`-` for none named). */
  class ButtonsChannel extends RecordingChannel {
    named: string[] = [];
    constructor(
      clock: VirtualClock,
      readonly editsKeepButtons: boolean,
    ) {
      super(clock, 40);
    }
    private note(kind: string, index: number, m: OutgoingMessage) {
      this.named.push(`${kind} ${index}: ${m.buttons ? `[${m.buttons.map((b) => b.label).join(',')}]` : '-'}`);
    }
    override async send(m: OutgoingMessage): Promise<MessageHandle> {
      const index = this.contents.length;
      this.note('send', index, m);
      const handle = await super.send(m);
      return {
        edit: (e) => {
          this.note('edit', index, e);
          return handle.edit(e);
        },
      };
    }
  }

  /** Streams two pages (the channel holds 40 characters) with Stop, then finishes with Regenerate. */
  async function stream(editsKeepButtons: boolean): Promise<string[]> {
    const clock = new VirtualClock();
    const channel = new ButtonsChannel(clock, editsKeepButtons);
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }), controls: [STOP] });
    for (const word of ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight ', 'nine ', 'ten ']) {
      reply.append(word);
      await clock.advance(1000);
    }
    const done = reply.finish(undefined, { controls: [REGENERATE] });
    for (let i = 0; i < 5; i++) await clock.advance(1000);
    await done;
    return channel.named;
  }

  it('where an edit leaves the buttons (Discord): names them only when they change', async () => {
    expect(await stream(true)).toEqual([
      'send 0: [Stop]',
      ...Array.from({ length: 7 }, () => 'edit 0: -'),
      // The text moved on to a second message: the first loses Stop, the second carries it.
      'edit 0: []',
      'send 1: [Stop]',
      'edit 1: -',
      'edit 1: [Regenerate]',
    ]);
  });

  it('where an edit rewrites them (Slack): names them in every edit', async () => {
    const named = await stream(false);
    expect(named.filter((n) => n.startsWith('edit 0')).slice(0, 4)).toEqual([
      'edit 0: [Stop]',
      'edit 0: [Stop]',
      'edit 0: [Stop]',
      'edit 0: [Stop]',
    ]);
    expect(named.filter((n) => n.endsWith('-'))).toEqual([]);
    expect(named.at(-1)).toBe('edit 1: [Regenerate]');
  });
});
