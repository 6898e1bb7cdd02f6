/**
 * The feedback on answers summed per model for admins (/usage feedback): the votes of a place
 * (keys.ts `placeOf`: the Discord server or the Slack workspace of the channel asked from), from
 * its tally in the store (state/feedback.ts), as one card.
 */
import { english, type Words } from '../i18n/words.ts';
import { parseConversationKey, placeOf } from '../keys.ts';
import type { Card, CardLimits } from '../platform-cards.ts';
import { readTally, type TallyLine } from '../state/feedback.ts';
import type { StateStore } from '../state/store.ts';

/** Most models listed in the card (the busiest first; the rest are counted in its footer). */
const MAX_MODELS = 20;

/** One model's votes, in all and by kind of answer. */
interface ModelVotes {
  model: string;
  up: number;
  down: number;
  kinds: TallyLine[];
}

/** The tally's lines summed per model, the most voted first (then by name). */
export function votesByModel(lines: readonly TallyLine[]): ModelVotes[] {
  const byModel = new Map<string, ModelVotes>();
  for (const line of lines) {
    if (line.up + line.down === 0) continue;
    const votes = byModel.get(line.model) ?? { model: line.model, up: 0, down: 0, kinds: [] };
    votes.up += line.up;
    votes.down += line.down;
    votes.kinds.push(line);
    byModel.set(line.model, votes);
  }
  return [...byModel.values()].sort((a, b) => b.up + b.down - (a.up + a.down) || a.model.localeCompare(b.model));
}

/** A model's line: `👍 3 · 👎 1 (75% 👍)`, and by kind when it answered more than one kind. */
function votesLine(votes: ModelVotes, maxChars: number): string {
  const share = Math.round((100 * votes.up) / (votes.up + votes.down));
  const total = `👍 ${votes.up} · 👎 ${votes.down} (${share}% 👍)`;
  if (votes.kinds.length < 2) return `${total} — ${votes.kinds[0]?.kind ?? ''}`.slice(0, maxChars);
  const kinds = votes.kinds.map((k) => `${k.kind}: 👍 ${k.up} · 👎 ${k.down}`).join('; ');
  return `${total}\n${kinds}`.slice(0, maxChars);
}

/**
 * The card of the votes on answers given in `channelKey`'s place, per model, within `limits`, in
 * `words` (the admin's who asked: the card is theirs alone; English when absent).
 * @throws the store's error.
 */
export async function feedbackCard(
  store: StateStore,
  channelKey: string,
  limits: CardLimits,
  words: Words = english,
): Promise<Card> {
  const models = votesByModel(await readTally(store, placeOf(channelKey)));
  const shown = models.slice(0, Math.min(MAX_MODELS, limits.maxFields));
  const place = parseConversationKey(channelKey)?.platform === 'slack' ? 'slack' : 'discord';
  const more = models.length - shown.length;
  return {
    title: words.t('answers.feedback_report.title'),
    description: words.t(models.length ? 'answers.feedback_report.votes' : 'answers.feedback_report.none', { place }),
    fields: shown.map((votes) => ({ name: votes.model.slice(0, 100), value: votesLine(votes, limits.maxValueChars) })),
    ...(more > 0 ? { footer: words.t('answers.feedback_report.more', { count: more }) } : {}),
  };
}
