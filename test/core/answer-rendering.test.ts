/**
 * A streamed answer on a platform that renders Markdown its own way (ReplyLimits `rendering`,
 * issue 39; Discord's: tables as monospaced blocks): each write shows the rendered text of the
 * answer so far, a table progressively as its rows come, the final write the rendered final text;
 * the reply's `content` (what the history keeps) stays the model's Markdown; and the rendering is
 * not run (nor the answer's text copied) until a delta could change it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnswerPages } from '../../src/core/delivery/answer-pages.ts';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import { splitMessage } from '../../src/core/delivery/split.ts';
import { type Clock, StreamingReply } from '../../src/core/delivery/streaming-reply.ts';
import { renderTables } from '../../src/core/markdown/tables.ts';
import type { MarkdownRendering, MessageHandle, OutgoingMessage, ReplyChannel } from '../../src/core/platform.ts';
import { DISCORD_MESSAGE_LIMITS } from '../../src/platforms/discord/rest.ts';

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
    for (const s of due) s.resolve();
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** A Discord-like channel (its limits, its rendering) that keeps what each message shows after each write. */
class ShownChannel implements ReplyChannel {
  readonly limits = DISCORD_MESSAGE_LIMITS;
  /** Each write's content, in order. */
  writes: string[] = [];
  contents: string[] = [];
  async defer() {}
  async send(m: OutgoingMessage): Promise<MessageHandle> {
    const index = this.contents.push(m.content) - 1;
    this.writes.push(m.content);
    return {
      edit: async (e) => {
        this.contents[index] = e.content;
        this.writes.push(e.content);
      },
    };
  }
  async sendEphemeral() {}
}

describe('a streamed answer rendered for its platform', () => {
  it('shows a table as a block from its delimiter row on, growing with its rows; the history keeps the Markdown', async () => {
    const clock = new VirtualClock();
    const channel = new ShownChannel();
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    const pieces = ['Scores:\n\n', '| Team | Points |\n', '|---|--:|\n', '| Red | 3 |\n', '| Blue | 12 |\n', '\nDone.'];
    for (const piece of pieces) {
      reply.append(piece);
      await clock.advance(1000);
    }
    const done = reply.finish();
    await clock.advance(1000);
    await done;
    expect(channel.writes).toEqual([
      'Scores:\n\n',
      'Scores:\n\n| Team | Points |\n',
      'Scores:\n\n```\nTeam | Points\n-----+-------\n```\n',
      'Scores:\n\n```\nTeam | Points\n-----+-------\nRed  |      3\n```\n',
      'Scores:\n\n```\nTeam | Points\n-----+-------\nRed  |      3\nBlue |     12\n```\n',
      'Scores:\n\n```\nTeam | Points\n-----+-------\nRed  |      3\nBlue |     12\n```\n\nDone.',
    ]);
    expect(reply.content).toBe(pieces.join(''));
  });

  it('a final text (the answer and its notes) is rendered whole', async () => {
    const clock = new VirtualClock();
    const channel = new ShownChannel();
    const reply = new StreamingReply(channel, { scheduler: new WriteScheduler({ clock }) });
    reply.append('No table yet.');
    await clock.advance(1000);
    const done = reply.finish('No table yet.\n\n| a |\n|---|\n| 1 |\n\n_⚠️ a note_');
    await clock.advance(1000);
    await done;
    expect(channel.contents).toEqual(['No table yet.\n\n```\na\n-\n1\n```\n\n_⚠️ a note_']);
  });

  it('the rendering runs only once a delta touched it, and then once a state of the text, not once a delta', () => {
    const calls: string[] = [];
    const rendering: MarkdownRendering = {
      touches: (delta) => delta.includes('|'),
      renderer: () => ({
        render: (markdown) => {
          calls.push(markdown);
          return markdown.toUpperCase();
        },
      }),
    };
    const body = new AnswerPages(rendering);
    const limits = { maxChars: 2000 };
    const state = { finishing: false, messages: 0, controls: false, finalControls: false };
    for (const delta of ['plain ', 'text ', 'only']) body.append(delta);
    expect(body.pages(limits, state)).toEqual(['plain text only']);
    expect(calls).toEqual([]);
    body.append(' | a');
    body.append(' b');
    expect(body.pages(limits, state)).toEqual(['PLAIN TEXT ONLY | A B']);
    expect(body.pages(limits, state)).toEqual(['PLAIN TEXT ONLY | A B']);
    expect(calls).toEqual(['plain text only | a b']);
    expect(body.text).toBe('plain text only | a b');
  });

  it('property: at every state of a growing answer its pages are the pages of its rendered text', () => {
    const line = fc.constantFrom('| a | b |', '|---|--:|', '| 1 | 22 |', '', 'prose words here', '```', '- item');
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 80 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1 }),
        fc.integer({ min: 40, max: 400 }),
        (lines, steps, maxChars) => {
          const text = lines.join('\n');
          const body = new AnswerPages(DISCORD_MESSAGE_LIMITS.rendering);
          const state = { finishing: false, messages: 0, controls: false, finalControls: false };
          for (let i = 0, k = 0; i < text.length; k++) {
            const step = steps[k % steps.length]!;
            body.append(text.slice(i, i + step));
            i += step;
            const expected = splitMessage(renderTables(text.slice(0, i)), maxChars).filter((p) => p.trim() !== '');
            expect(body.pages({ maxChars }, state)).toEqual(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
