/**
 * The sample answers of `npm run screenshots` (scripts/screenshots.ts): Markdown holding every
 * construct a model writes (issue 39, item 5), a long answer that takes more than one message,
 * and the prompt of an image result.
 */

/** An answer with a heading, bold, italics, strikethrough, a link, lists, a quote, code and a table. */
export const EVERY_CONSTRUCT = `## Trip plan for Saturday

Here is the **short version**, with the _details_ below (the ~~Friday~~ date moved).

1. Meet at the pier at **7:15**
2. Board the *Blue Heron* — tickets at [the harbour site](https://example.com/tickets)
3. Lunch on the island

- bring \`sunscreen\`
- a jacket, since it gets windy
  - and gloves

> The ferry leaves on time: late passengers wait for the 11:00 one.

| Stop | Arrives | Cost |
|:-----|:-------:|-----:|
| Pier 4 | 7:15 | $0 |
| Seal Rock | 8:40 | $12 |
| Island café | 12:30 | $18.50 |

\`\`\`python
def total(costs):
    return sum(costs)  # 30.5
\`\`\`
`;

/** About 3,500 characters of prose and a table: two Discord messages, one long Slack message. */
export const LONG_ANSWER = [
  '# Why the tide changes twice a day',
  '',
  ...Array.from(
    { length: 9 },
    (_, i) =>
      `${i + 1}. The Moon's pull makes a bulge of water on the side of the Earth facing it, and a second bulge on the far side, where the Earth is pulled away from the water. As the Earth turns through both bulges each day, a coast meets two high tides and two low tides, about 12 hours and 25 minutes apart (paragraph ${i + 1}).\n`,
  ),
  '| Body | Share of the tide |',
  '|---|---:|',
  '| Moon | 69 % |',
  '| Sun | 31 % |',
  '',
  'So: **two tides a day**, a little later each day.',
].join('\n');

/** The /imagine prompt of the image result. */
export const IMAGE_PROMPT = 'a lighthouse at dawn, watercolor';
