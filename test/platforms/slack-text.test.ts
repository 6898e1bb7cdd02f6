import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainTextOf } from '../../src/platforms/slack/text.ts';

describe("plainTextOf (a user's Slack message as the model reads it)", () => {
  it("drops the bot's own mention and shows other mentions, channels, groups and links as text", () => {
    const text =
      '<@U0BOT> ask <@U0ALICE|alice> and <@U0BOB> in <#C0GEN|general> or <#C0X|>, cc <!here> <!subteam^S1|devs>: see <https://a.example/x?y=1|the doc> and <https://b.example> or <mailto:x@y.z|x@y.z>';
    expect(plainTextOf(text, 'U0BOT')).toBe(
      'ask @alice and @U0BOB in #general or #C0X, cc @here @devs: see the doc (https://a.example/x?y=1) and https://b.example or x@y.z (x@y.z)',
    );
  });

  it('unescapes &lt; &gt; &amp; after the markup is read, so typed angle brackets survive', () => {
    expect(plainTextOf('<@U0BOT|genbot> is 1 &lt; 2 &amp;&amp; 3 &gt; 2? &lt;@U0FAKE&gt;', 'U0BOT')).toBe(
      'is 1 < 2 && 3 > 2? <@U0FAKE>',
    );
  });

  it('keeps the mention of another user who happens to share a prefix with the bot', () => {
    expect(plainTextOf('<@U0BOTX> hi <@U0BOT>', 'U0BOT')).toBe('@U0BOTX hi');
  });

  it('keeps the readings of edge cases: empty labels, a label holding a tag, links without a label', () => {
    expect(plainTextOf('<@U1|> <#C1|> <!subteam^S1|> <!here|x> <https://a.example|> <mailto:x@y.z>', undefined)).toBe(
      '<@U1|> #C1 @ @here https://a.example| x@y.z',
    );
    expect(plainTextOf('<@U1|<#C2>', undefined)).toBe('@<#C2');
    expect(plainTextOf('a\n\t <@U0BOT|bot>\n b <@U0BOT>', 'U0BOT')).toBe('a b');
  });

  it('property: the same text as the chain of expressions it replaced (issue 16)', () => {
    const old = (text: string, botUserId: string | undefined) => {
      let out = text;
      if (botUserId) out = out.replace(new RegExp(`\\s*<@${botUserId}(?:\\|[^>]*)?>\\s*`, 'g'), ' ');
      out = out
        .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]+))?>/g, (_, id: string, name: string | undefined) => `@${name ?? id}`)
        .replace(/<#([CGD][A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, name: string | undefined) => `#${name || id}`)
        .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_, name: string | undefined) => `@${name ?? 'group'}`)
        .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
        .replace(
          /<(mailto:|https?:\/\/)([^|>]+)\|([^>]+)>/g,
          (_, scheme: string, rest: string, label: string) =>
            `${label} (${scheme === 'mailto:' ? rest : scheme + rest})`,
        )
        .replace(/<((?:https?:\/\/|mailto:)[^>]+)>/g, (_, url: string) => url.replace(/^mailto:/, ''));
      return out.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
    };
    const pieces = [
      '<',
      '>',
      '|',
      '@',
      '#',
      '!',
      'U123',
      'U1',
      'W9',
      'C1',
      'G2',
      'D3',
      'subteam^',
      'S1',
      'here',
      'channel',
      'everyone',
      'http://',
      'https://',
      'mailto:',
      'a',
      'x.y',
      ' ',
      '\n',
      '\t',
      '&lt;',
      '&gt;',
      '&amp;',
      '<@U123>',
      '<@U123|bot>',
      '<@U1|ada>',
      '<#C1|gen>',
      '<!here>',
      '<https://x|l>',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { maxLength: 25 }).map((a) => a.join('')),
        fc.constantFrom('U123', 'U1', undefined),
        (text, bot) => {
          expect(plainTextOf(text, bot)).toBe(old(text, bot));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
