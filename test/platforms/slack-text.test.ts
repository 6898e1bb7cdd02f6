import { describe, expect, it } from 'vitest';
import { plainTextOf } from '../../src/platforms/slack/text.ts';

describe('plainTextOf (a user\'s Slack message as the model reads it)', () => {
  it('drops the bot\'s own mention and shows other mentions, channels, groups and links as text', () => {
    const text = '<@U0BOT> ask <@U0ALICE|alice> and <@U0BOB> in <#C0GEN|general> or <#C0X|>, cc <!here> <!subteam^S1|devs>: see <https://a.example/x?y=1|the doc> and <https://b.example> or <mailto:x@y.z|x@y.z>';
    expect(plainTextOf(text, 'U0BOT')).toBe(
      'ask @alice and @U0BOB in #general or #C0X, cc @here @devs: see the doc (https://a.example/x?y=1) and https://b.example or x@y.z (x@y.z)',
    );
  });

  it('unescapes &lt; &gt; &amp; after the markup is read, so typed angle brackets survive', () => {
    expect(plainTextOf('<@U0BOT|genbot> is 1 &lt; 2 &amp;&amp; 3 &gt; 2? &lt;@U0FAKE&gt;', 'U0BOT')).toBe('is 1 < 2 && 3 > 2? <@U0FAKE>');
  });

  it('keeps the mention of another user who happens to share a prefix with the bot', () => {
    expect(plainTextOf('<@U0BOTX> hi <@U0BOT>', 'U0BOT')).toBe('@U0BOTX hi');
  });
});
