/**
 * The Models cards of /help (core/features/help.ts modelsCards): however many models the
 * service lists, every card keeps within the platform's card limits (Discord: 25 fields and
 * 6,000 characters an embed, 1,024 a field value), and /help posts at most 4 of them: past that
 * the last card's footer says how many models are not shown, and on Discord where to find them.
 */
import { describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import { actionsCard, modelsCards, packCards } from '../../src/core/features/help.ts';
import type { ModelLists } from '../../src/core/models/catalog.ts';
import type { Card, CardLimits } from '../../src/core/platform-cards.ts';
import { DISCORD_MESSAGE_LIMITS } from '../../src/platforms/discord/rest.ts';
import { SLACK_MESSAGE_LIMITS } from '../../src/platforms/slack/message-limits.ts';

const DISCORD: CardLimits = DISCORD_MESSAGE_LIMITS.cards;
const SLACK: CardLimits = SLACK_MESSAGE_LIMITS.cards;

/** `count` text models with ids of about 90 characters, and `images` image models. */
function lists(count: number, images = 3): ModelLists {
  return {
    text: Array.from(
      { length: count },
      (_, i) => `an-organisation/a-rather-long-text-model-family-name-instruct-v${String(i).padStart(5, '0')}`,
    ),
    imageIds: [],
    image: Array.from({ length: images }, (_, i) => ({
      display_name: `Painter ${i}`,
      description: `image model ${i}`,
    })),
    fetchedAt: 0,
  };
}

/** Characters Discord counts in an embed. */
const charsOf = (card: Card) =>
  card.title.length +
  (card.description?.length ?? 0) +
  (card.footer?.length ?? 0) +
  card.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);

/** Every card within Discord's embed limits, and every message of them within its 6,000 characters and 10 embeds. */
function expectWithinDiscord(cards: readonly Card[]): void {
  for (const card of cards) {
    expect(card.fields.length).toBeLessThanOrEqual(25);
    expect(card.title.length).toBeLessThanOrEqual(256);
    for (const f of card.fields) {
      expect(f.name.length).toBeLessThanOrEqual(256);
      expect(f.value.length).toBeLessThanOrEqual(1024);
    }
    expect(charsOf(card)).toBeLessThanOrEqual(6000);
  }
  for (const message of packCards(cards, DISCORD)) {
    expect(message.cards!.length).toBeLessThanOrEqual(10);
    expect(message.cards!.reduce((n, c) => n + charsOf(c), 0)).toBeLessThanOrEqual(6000);
  }
}

/** The model names a card lists. */
const namesIn = (cards: readonly Card[]) =>
  cards.flatMap((c) => c.fields.flatMap((f) => f.value.split(f.name.startsWith('Image') ? '\n' : ', ')));

describe('modelsCards', () => {
  it('200 long-named models on Discord: every one named, in cards within the embed limits, and no "more" line', () => {
    const given = lists(200);
    const cards = modelsCards(given, DISCORD, 'discord');
    expectWithinDiscord(cards);
    expect(cards.length).toBeGreaterThan(1);
    expect(cards.length).toBeLessThanOrEqual(4);
    expect(cards.map((c) => c.title)).toEqual(['Models', ...cards.slice(1).map(() => 'Models (continued)')]);
    const names = namesIn(cards);
    expect(names.filter((n) => !n.startsWith('🖼️ Painter'))).toEqual(given.text);
    expect(names.filter((n) => n.startsWith('🖼️ Painter'))).toHaveLength(3);
    expect(cards.some((c) => c.footer)).toBe(false);
  });

  it('2,000 models on Discord: 4 cards within the limits, the last saying how many more and where to find them', () => {
    const given = lists(2000);
    const cards = modelsCards(given, DISCORD, 'discord');
    expectWithinDiscord(cards);
    expect(cards).toHaveLength(4);
    const shown = namesIn(cards);
    expect(shown).toEqual(given.text.slice(0, shown.length));
    const more = 2000 + 3 - shown.length;
    expect(cards.slice(0, 3).every((c) => c.footer === undefined)).toBe(true);
    expect(cards[3]!.footer).toBe(
      `… and ${more.toLocaleString('en')} more models: type part of a name in a \`model\` option to find the others.`,
    );
  });

  it('on Slack the same list fits its larger cards; past 4 of them, the footer says how many more without the Discord hint', () => {
    const cards = modelsCards(lists(200), SLACK, 'slack');
    expect(cards).toHaveLength(1);
    for (const f of cards[0]!.fields) expect(f.value.length).toBeLessThanOrEqual(SLACK.maxValueChars);
    const huge = modelsCards(lists(20_000, 0), SLACK, 'slack');
    expect(huge).toHaveLength(4);
    for (const card of huge) expect(card.fields.length).toBeLessThanOrEqual(SLACK.maxFields - 3);
    // English numbers are grouped by thousands (Intl), e.g. `14,424`.
    expect(huge[3]!.footer).toMatch(/^… and \d{1,3}(,\d{3})* more models\.$/);
  });

  it('when the service did not answer, one card says so', () => {
    expect(modelsCards(undefined, DISCORD, 'discord')).toEqual([
      { title: 'Models', fields: [{ name: 'Models', value: 'models: the service did not answer; try again later' }] },
    ]);
  });
});

describe('/help: the message actions', () => {
  it('on Slack, say where the shortcuts are and what each does, in one card within the limits', () => {
    const card = actionsCard(messageActions, 'slack')!;
    expect(card.description).toContain('More actions');
    expect(card.fields.map((f) => f.name)).toEqual(messageActions.map((a) => a.name));
    expect(card.fields.map((f) => f.value)).toEqual(messageActions.map((a) => a.description));
    expect(packCards([card], SLACK)).toHaveLength(1);
  });

  it('no actions, no card', () => {
    expect(actionsCard([], 'discord')).toBeUndefined();
  });
});
