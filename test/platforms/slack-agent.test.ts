/**
 * The agent view's small readers (src/platforms/slack/message-answer.ts, viewed-channel.ts):
 * a thread's title from its first question, `imagine …`, "summarize this channel", and the
 * channel named by what a user views (`app_context_changed`'s context).
 */
import { describe, expect, it } from 'vitest';
import { imagineText, TITLE_CHARS, titleOf } from '../../src/platforms/slack/message-answer.ts';
import { asksToSummarizeChannel, channelOfContext } from '../../src/platforms/slack/viewed-channel.ts';

describe('the agent view on Slack, its readers', () => {
  it('titles a thread with the first line of its first question, spaces collapsed, cut at a word within 80 characters', () => {
    expect(titleOf('  What is   the plan?\nMore details here.')).toBe('What is the plan?');
    const long = `${'word '.repeat(30)}end`;
    const title = titleOf(long);
    expect(title.length).toBeLessThanOrEqual(TITLE_CHARS);
    expect(title.endsWith('word…')).toBe(true);
    expect(titleOf('x'.repeat(200))).toBe(`${'x'.repeat(TITLE_CHARS - 1)}…`);
    expect(titleOf('   ')).toBe('');
  });

  it('takes a message that starts with the word imagine as an /imagine prompt, options included, and nothing else', () => {
    expect(imagineText('imagine a red fox --aspect_ratio landscape')).toBe('a red fox --aspect_ratio landscape');
    expect(imagineText('  Imagine: a lighthouse')).toBe('a lighthouse');
    expect(imagineText('IMAGINE, then a cat')).toBe('then a cat');
    expect(imagineText('imagine')).toBe('');
    expect(imagineText('imagined worlds are fun')).toBeUndefined();
    expect(imagineText('Can you imagine a fox?')).toBeUndefined();
  });

  it('knows a request to summarize a channel, in either spelling, and not one to summarize a thread', () => {
    expect(asksToSummarizeChannel('Summarize the channel I am viewing')).toBe(true);
    expect(asksToSummarizeChannel('please summarise this channel')).toBe(true);
    expect(asksToSummarizeChannel('Can you summarize what happened in this channel today?')).toBe(true);
    expect(asksToSummarizeChannel('summarize this thread')).toBe(false);
    expect(asksToSummarizeChannel('which channel should I summarize for?')).toBe(false);
    // Linear on hostile input: a long text without the words is read once.
    expect(asksToSummarizeChannel(`${'summar'.repeat(100_000)}channel`)).toBe(false);
  });

  it("reads the viewed channel from a context's entities, most relevant first, a message context's channel too", () => {
    expect(channelOfContext({ entities: [{ type: 'slack#/types/channel_id', value: 'C1', team_id: 'T1' }] })).toBe(
      'C1',
    );
    expect(
      channelOfContext({
        entities: [
          { type: 'slack#/types/canvas_id', value: 'F1' },
          { type: 'slack#/types/message_context', value: { message_ts: '1.2', channel_id: 'C2' } },
          { type: 'slack#/types/channel_id', value: 'C3' },
        ],
      }),
    ).toBe('C2');
    expect(channelOfContext({})).toBeUndefined();
    expect(channelOfContext(undefined)).toBeUndefined();
    expect(channelOfContext({ entities: 'nope' })).toBeUndefined();
  });
});
