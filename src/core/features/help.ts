/**
 * Help texts, platform-neutral: one command's card (Slack's `/<command> help`) and `/help`,
 * every command with its options (ranges, choices) and the service's models, in as many
 * messages as the platform's card limits need, shown to the user alone, in their language
 * (descriptions from the catalog: command-words.ts).
 */

import type { Command, CommandOption } from '../command.ts';
import { choiceNameIn, descriptionIn, nameIn } from '../command-words.ts';
import type { Core } from '../core.ts';
import { english, type Words } from '../i18n/words.ts';
import type { MessageAction } from '../message-action.ts';
import { type ModelLists, modelChoices } from '../models/catalog.ts';
import { invocationForm, mainOptionOf, optionForm } from '../option-forms.ts';
import type { CommandContext, OutgoingMessage } from '../platform.ts';
import type { Card, CardLimits } from '../platform-cards.ts';
import { modelEntries } from './models.ts';

/** Models named in one option's line, at most this many (the rest: "and N more"). */
const MAX_LISTED_MODELS = 25;

/** An option's range in `words`: `from 0 to 2`, `at least 1`, `at most 5`; '' when it has none. */
function rangeIn(option: Pick<CommandOption, 'minValue' | 'maxValue'>, words: Words): string {
  const min = option.minValue === undefined ? undefined : String(option.minValue);
  const max = option.maxValue === undefined ? undefined : String(option.maxValue);
  if (min !== undefined && max !== undefined) return words.t('commands.help.range_between', { min, max });
  if (min !== undefined) return words.t('commands.help.range_min', { min });
  if (max !== undefined) return words.t('commands.help.range_max', { max });
  return '';
}

/** The values a choice option takes, in `words`: a choice whose name is words shows it beside its value (`vivid (lebhaft)`). */
function choicesIn(option: CommandOption, words: Words): string {
  return (option.choices ?? [])
    .map((c) => {
      const name = choiceNameIn(c, words);
      return name === String(c.value) ? name : `${c.value} (${name})`;
    })
    .join(', ');
}

/**
 * One option in `words` (the reader's): its description, range, values, and for a model option
 * the models (`listModels`: the first 25 named; otherwise a pointer to the Models card), joined by ` · `.
 * @param lists the model lists; undefined when the service is down.
 */
export function optionSummary(
  option: CommandOption,
  lists: ModelLists | undefined,
  listModels: boolean,
  words: Words = english,
): string {
  const parts = [descriptionIn(option, words)];
  const range = rangeIn(option, words);
  if (range) parts.push(range);
  if (option.choices) parts.push(words.t('commands.help.one_of', { values: choicesIn(option, words) }));
  if (option.autocomplete) {
    const kind = option.autocomplete === 'image_models' ? 'image' : 'text';
    const all = modelChoices(lists, kind, '', 1000).map((c) => c.value);
    const shown = all.slice(0, MAX_LISTED_MODELS).join(', ');
    const more = all.length - MAX_LISTED_MODELS;
    if (!lists) parts.push(words.t('commands.help.no_models'));
    else if (!listModels) parts.push(words.t('commands.help.model_pointer', { kind }));
    else if (!shown) parts.push(words.t('commands.help.models_none'));
    else if (more > 0) parts.push(words.t('commands.help.models_listed_more', { models: shown, more: String(more) }));
    else parts.push(words.t('commands.help.models_listed', { models: shown }));
  }
  return parts.join(' · ');
}

/**
 * One command as a card in `words` (the reader's): its form, whether it is for admins, its
 * examples, and a field per option (on Slack the main text is in the form, not a field).
 * @param listModels name the models in model options (one command's help) or point to the Models card (/help).
 */
export function commandCard(
  command: Command,
  lists: ModelLists | undefined,
  platform: 'discord' | 'slack',
  listModels: boolean,
  words: Words = english,
): Card {
  const main = platform === 'slack' ? mainOptionOf(command) : undefined;
  const fields = command.options
    .filter((o) => o !== main)
    .map((o) => ({
      name:
        platform === 'discord' && o.required
          ? words.t('commands.help.required', { form: optionForm(o, platform) })
          : optionForm(o, platform),
      value: optionSummary(o, lists, listModels, words),
    }));
  const examples =
    platform === 'slack' ? (command.examples ?? []).map((e) => `\`/${command.name}${e ? ` ${e}` : ''}\``) : [];
  const form = { form: invocationForm(command, platform), admins: command.adminOnly ? 'yes' : 'no' };
  return {
    title: words.t('commands.help.title', {
      command: nameIn(command, words),
      description: descriptionIn(command, words),
    }),
    description: examples.length
      ? words.t('commands.help.form_examples', { ...form, examples: examples.join('\n') })
      : words.t('commands.help.form', form),
    fields,
    ...(platform === 'slack' ? { footer: words.t('commands.help.slack_footer') } : {}),
  };
}

/** Models named by /help, in cards of their own, at most this many (the rest: "… and N more"). */
const MAX_MODEL_CARDS = 4;

/** Characters of a card kept free of model fields: its title, description and footer, and packCards' spare 200. */
const MODEL_CARD_RESERVE = 400;

/** One field value of names and how many names it holds. */
interface Chunk {
  value: string;
  count: number;
}

/** Items joined by `separator` into field values of at most `max` characters each (an item longer than `max` is cut). */
function chunked(items: readonly string[], max: number, separator: string): Chunk[] {
  const chunks: Chunk[] = [];
  let chunk: Chunk = { value: '', count: 0 };
  for (const item of items.map((i) => i.slice(0, max))) {
    if (chunk.count && chunk.value.length + separator.length + item.length > max) {
      chunks.push(chunk);
      chunk = { value: '', count: 0 };
    }
    chunk = { value: chunk.count ? `${chunk.value}${separator}${item}` : item, count: chunk.count + 1 };
  }
  if (chunk.count) chunks.push(chunk);
  return chunks;
}

/**
 * The service's models as cards: every text model, then every image model, in fields of at
 * most `maxValueChars`, each card within the platform's card limits (`maxFields` less 3 fields,
 * `maxChars` less {@link MODEL_CARD_RESERVE} characters: Discord's 25 fields and 6,000 characters
 * an embed). At most {@link MAX_MODEL_CARDS} cards: a longer list ends with a footer naming how
 * many models are not shown (on Discord, with where to find them: a `model` option's autocomplete).
 * @param lists the model lists; undefined when the service is down (one card saying so).
 */
export function modelsCards(
  lists: ModelLists | undefined,
  limits: CardLimits,
  platform: 'discord' | 'slack',
  words: Words = english,
): Card[] {
  const title = words.t('commands.help.models_title');
  if (!lists) return [{ title, fields: [{ name: title, value: words.t('commands.help.no_models') }] }];
  const images = modelEntries(lists, words).slice(lists.text.length);
  const field = (name: string, chunks: Chunk[]) =>
    chunks.map((chunk, i) => ({ name: i === 0 ? name : words.t('commands.help.continued', { name }), ...chunk }));
  const fields = [
    ...field(words.t('commands.help.text_models'), chunked(lists.text, limits.maxValueChars, ', ')),
    ...field(
      words.t('commands.help.image_models'),
      chunked(
        images.map((e) => words.t('commands.help.image_entry', { name: e.name, value: e.value })),
        limits.maxValueChars,
        '\n',
      ),
    ),
  ];
  const pages: (typeof fields)[] = [[]];
  let chars = 0;
  for (const f of fields) {
    const size = f.name.length + f.value.length;
    const page = pages.at(-1)!;
    if (page.length && (page.length >= limits.maxFields - 3 || chars + size > limits.maxChars - MODEL_CARD_RESERVE)) {
      pages.push([f]);
      chars = size;
    } else {
      page.push(f);
      chars += size;
    }
  }
  const shown = pages.slice(0, MAX_MODEL_CARDS);
  const more = fields.reduce((n, f) => n + f.count, 0) - shown.flat().reduce((n, f) => n + f.count, 0);
  return shown.map((page, i) => ({
    title: i === 0 ? title : words.t('commands.help.models_title_continued'),
    ...(i === 0 ? { description: words.t('commands.help.models_description') } : {}),
    fields: page.map(({ name, value }) => ({ name, value })),
    ...(more > 0 && i === shown.length - 1 ? { footer: words.t('commands.help.models_more', { more, platform }) } : {}),
  }));
}

/** Characters a card counts for Discord's 6,000 (title, description, field names and values, footer). */
const charsOf = (card: Card) =>
  card.title.length +
  (card.description?.length ?? 0) +
  (card.footer?.length ?? 0) +
  card.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);

/**
 * Cards packed into messages within a platform's card limits: at most 10 cards a message
 * (Discord's embeds); a card counts as its fields and 3 more (Slack's header, description and
 * footer blocks), all within `maxFields`; characters within `maxChars` (less 200 to spare).
 */
export function packCards(cards: readonly Card[], limits: CardLimits): OutgoingMessage[] {
  const messages: Card[][] = [];
  let page: Card[] = [];
  let units = 0;
  let chars = 0;
  for (const card of cards) {
    const size = card.fields.length + 3;
    const length = charsOf(card);
    if (
      page.length &&
      (page.length >= 10 || units + size > limits.maxFields || chars + length > limits.maxChars - 200)
    ) {
      messages.push(page);
      page = [];
      units = 0;
      chars = 0;
    }
    page.push(card);
    units += size;
    chars += length;
  }
  if (page.length) messages.push(page);
  return messages.map((page) => ({ content: '', cards: page }));
}

/**
 * How long /help waits for the model lists when none are cached, in ms: well under the 2 s after
 * which a Discord command not yet answered is deferred (platforms/discord/responder.ts
 * AUTO_DEFER_MS), a deferral everyone in the channel sees ("is thinking…"). /help's first
 * message is then the interaction's ephemeral reply, seen by the user alone.
 */
const HELP_MODELS_WAIT_MS = 1_000;

/**
 * The message actions as one card in `words`: where they are on the platform (Discord: a
 * message's Apps menu; Slack: its More actions menu) and a field per action (its name, what it does).
 * @returns undefined when there are none.
 */
export function actionsCard(
  actions: readonly MessageAction[],
  platform: 'discord' | 'slack',
  words: Words = english,
): Card | undefined {
  if (!actions.length) return undefined;
  return {
    title: words.t('commands.help.actions_title'),
    description: words.t('commands.help.actions_description', { platform }),
    fields: actions.map((a) => ({ name: nameIn(a, words), value: descriptionIn(a, words) })),
  };
}

/**
 * `/help`: every command of `list` with its options, the message actions, then the models, to
 * the user alone in their language (`core.languages.forUser`), in as many ephemeral messages as the platform's card limits need
 * (`ctx.reply.limits.cards`). Counts against no quota. The models are those cached, or fetched
 * within {@link HELP_MODELS_WAIT_MS} (else the Models card says the service did not answer).
 */
export async function showHelp(
  ctx: CommandContext,
  core: Core,
  list: readonly Command[],
  actions: readonly MessageAction[] = [],
): Promise<void> {
  const [lists, words] = await Promise.all([core.catalog.quick(HELP_MODELS_WAIT_MS), core.languages.forUser(ctx)]);
  const limits = ctx.reply.limits.cards;
  const actionCard = actionsCard(actions, ctx.platform, words);
  const cards = [
    ...list.map((c) => commandCard(c, lists, ctx.platform, false, words)),
    ...(actionCard ? [actionCard] : []),
    ...modelsCards(lists, limits, ctx.platform, words),
  ];
  for (const message of packCards(cards, limits)) await ctx.reply.sendEphemeral(message);
}
