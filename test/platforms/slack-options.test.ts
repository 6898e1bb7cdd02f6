import { describe, expect, it } from 'vitest';
import { parseSlashText } from '../../src/platforms/slack/options.ts';
import { checkOptions } from '../../src/core/command.ts';
import { escapeSlackText, slackLength } from '../../src/platforms/slack/text.ts';
import imagine from '../../commands/imagine.ts';
import chat from '../../commands/chat.ts';

describe('Slack slash-command text', () => {
  it('takes --name value flags of the command and leaves the rest as the prompt', () => {
    expect(parseSlashText(imagine, 'a red fox --aspect_ratio landscape --style natural')).toEqual({
      prompt: 'a red fox',
      aspect_ratio: 'landscape',
      style: 'natural',
    });
  });

  it('accepts dashes in flag names, = signs and quoted values', () => {
    expect(parseSlashText(chat, '--model="big model" why is the sky blue?')).toEqual({ model: 'big model', prompt: 'why is the sky blue?' });
    expect(parseSlashText(imagine, '--aspect-ratio=portrait a tower')).toEqual({ aspect_ratio: 'portrait', prompt: 'a tower' });
  });

  it('keeps --words that are not options of the command in the prompt', () => {
    expect(parseSlashText(chat, 'what does git push --force do?')).toEqual({ prompt: 'what does git push --force do?' });
  });

  it('undoes Slack\'s escaping of &, < and >', () => {
    expect(parseSlashText(chat, 'is 1 &lt; 2 &amp;&amp; 3 &gt; 2?')).toEqual({ prompt: 'is 1 < 2 && 3 > 2?' });
  });

  it('maps a flag without a value to an empty string, which checkOptions reports as needing a value', () => {
    expect(parseSlashText(imagine, 'a cat --style')).toEqual({ prompt: 'a cat', style: '' });
    expect(() => checkOptions(imagine, parseSlashText(imagine, 'a cat --style'))).toThrow(/`style` needs a value/);
  });

  it('takes a boolean flag alone as true, and its next word only when it is true/false/yes/no', () => {
    expect(parseSlashText(chat, 'list three colours --json')).toEqual({ prompt: 'list three colours', json: 'true' });
    expect(parseSlashText(chat, '--json give me a list')).toEqual({ prompt: 'give me a list', json: 'true' });
    expect(parseSlashText(chat, 'a list --json no')).toEqual({ prompt: 'a list', json: 'no' });
    expect(parseSlashText(chat, 'a list --json=false')).toEqual({ prompt: 'a list', json: 'false' });
    expect(checkOptions(chat, parseSlashText(chat, '--json give me a list'))).toEqual({ prompt: 'give me a list', json: true });
  });
});

describe('Slack text escaping', () => {
  it('neutralises mentions the model might write and counts the escaped length', () => {
    const text = 'Hi <!channel> and <@U123> & co';
    expect(escapeSlackText(text)).toBe('Hi &lt;!channel&gt; and &lt;@U123&gt; &amp; co');
    expect(slackLength(text)).toBe(escapeSlackText(text).length);
  });
});
