import { describe, expect, it } from 'vitest';
import chat from '../../commands/chat.ts';
import imagine from '../../commands/imagine.ts';
import { type Command, checkOptions } from '../../src/core/command.ts';
import { OptionError } from '../../src/core/errors.ts';
import { parseSlashText } from '../../src/platforms/slack/options.ts';
import { escapeSlackText, slackLength } from '../../src/platforms/slack/text.ts';

describe('Slack slash-command text', () => {
  it('takes --name value flags of the command and leaves the rest as the prompt', () => {
    expect(parseSlashText(imagine, 'a red fox --aspect_ratio landscape --style natural')).toEqual({
      prompt: 'a red fox',
      aspect_ratio: 'landscape',
      style: 'natural',
    });
  });

  it('accepts dashes in flag names, = signs and quoted values', () => {
    expect(parseSlashText(chat, '--model="big model" why is the sky blue?')).toEqual({
      model: 'big model',
      prompt: 'why is the sky blue?',
    });
    expect(parseSlashText(imagine, '--aspect-ratio=portrait a tower')).toEqual({
      aspect_ratio: 'portrait',
      prompt: 'a tower',
    });
  });

  it('keeps text in quotes as written, flags and all', () => {
    expect(parseSlashText(chat, '"what does git push --force do?" --temperature 0.2')).toEqual({
      prompt: '"what does git push --force do?"',
      temperature: '0.2',
    });
    expect(parseSlashText(chat, 'say “--json” please')).toEqual({ prompt: 'say “--json” please' });
  });

  it("undoes Slack's escaping of &, < and >", () => {
    expect(parseSlashText(chat, 'is 1 &lt; 2 &amp;&amp; 3 &gt; 2?')).toEqual({ prompt: 'is 1 < 2 && 3 > 2?' });
  });

  it('maps a flag without a value to an empty string, which checkOptions reports as needing a value', () => {
    expect(parseSlashText(imagine, 'a cat --style')).toEqual({ prompt: 'a cat', style: '' });
    expect(() => checkOptions(imagine, parseSlashText(imagine, 'a cat --style'))).toThrow(/`style` needs a value/);
  });

  it('takes a boolean flag alone as true, or with true/false/yes/no/on/off, and refuses any other word after it', () => {
    expect(parseSlashText(chat, 'list three colours --json')).toEqual({ prompt: 'list three colours', json: 'true' });
    expect(parseSlashText(chat, 'a list --json no')).toEqual({ prompt: 'a list', json: 'false' });
    expect(parseSlashText(chat, 'a list --json=false --temperature 1')).toEqual({
      prompt: 'a list',
      json: 'false',
      temperature: '1',
    });
    expect(() => parseSlashText(chat, 'a list --json maybe')).toThrow(/`--json maybe`: `--json` takes true or false/);
    expect(() => parseSlashText(chat, '--json give me a list')).toThrow(/`--json give`/);
  });

  it('reads an em dash or en dash before a name as --, as phones type it', () => {
    expect(parseSlashText(imagine, 'a fox —style vivid –aspect_ratio portrait')).toEqual({
      prompt: 'a fox',
      style: 'vivid',
      aspect_ratio: 'portrait',
    });
    expect(parseSlashText(chat, 'a fox — red or grey?')).toEqual({ prompt: 'a fox — red or grey?' });
  });

  it('takes a negative number as a value, not as a flag', () => {
    expect(parseSlashText(chat, 'hello --frequency_penalty -1.5')).toEqual({
      prompt: 'hello',
      frequency_penalty: '-1.5',
    });
  });

  it("names back unknown options, another command's options, --prompt, short flags and repeated options, with the right forms", () => {
    const all = [chat, imagine];
    const message = (text: string, command: Command = chat) => {
      try {
        parseSlashText(command, text, all);
      } catch (error) {
        expect(error).toBeInstanceOf(OptionError);
        return (error as Error).message;
      }
      throw new Error('expected an OptionError');
    };
    expect(message('hi --unknown x')).toMatch(/^\/chat has no option `--unknown`\./);
    expect(message('hi --style vivid')).toMatch(/^`--style` is an option of \/imagine, not \/chat\./);
    expect(message('--prompt hi')).toMatch(
      /^The prompt is the text itself: write `\/chat your prompt here --option value`, without `--prompt`\./,
    );
    expect(message('a fox -s vivid', imagine)).toMatch(
      /^`-s` is not an option: options are written in full with two dashes, e\.g\. `--style vivid\|natural\|preview\|upscaled`\./,
    );
    expect(message('a fox --style vivid --style natural', imagine)).toMatch(
      /^`--style` is given twice; give it once\./,
    );
    expect(message('hi --unknown x')).toMatch(
      /Options of \/chat: `--model <text>`, `--image <https URL or Slack file link>`, .*`\/chat help` shows them with examples\.$/s,
    );
  });

  it("reads opening quotes that never close as text, and a flag's unclosed quoted value as its next word, in linear time (issue 16)", () => {
    expect(parseSlashText(chat, 'a „quote and “another --temperature 0.5 "third')).toEqual({
      prompt: 'a „quote and “another "third',
      temperature: '0.5',
    });
    expect(parseSlashText(chat, '--model “big model why --json')).toEqual({
      model: '“big',
      json: 'true',
      prompt: 'model why',
    });
    // 100,000 opening quotes, and flags whose values never close: read once, not once per quote.
    const quotes = '„ “ '.repeat(50_000);
    const started = performance.now();
    expect(parseSlashText(chat, quotes)).toEqual({ prompt: quotes.trim() });
    expect(() => parseSlashText(chat, `hi ${'--model “x '.repeat(20_000)}`)).toThrow(/`--model` is given twice/);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('Slack text escaping', () => {
  it('neutralises mentions the model might write and counts the escaped length', () => {
    const text = 'Hi <!channel> and <@U123> & co';
    expect(escapeSlackText(text)).toBe('Hi &lt;!channel&gt; and &lt;@U123&gt; &amp; co');
    expect(slackLength(text)).toBe(escapeSlackText(text).length);
  });
});
