/**
 * Help texts, platform-neutral: one command's card (Slack's `/<command> help`) and `/help`,
 * every command with its options (ranges, choices) and the service's models, in as many
 * messages as the platform's card limits need, shown to the user alone.
 */

import type { Command, CommandOption } from '../command.ts';
import { rangeOf } from '../command.ts';
import type { Core } from '../core.ts';
import { english } from '../i18n/words.ts';
import type { MessageAction } from '../message-action.ts';
import { type ModelLists, modelChoices } from '../models/catalog.ts';
import { invocationForm, mainOptionOf, optionForm } from '../option-forms.ts';
import type { CommandContext, OutgoingMessage } from '../platform.ts';
import type { Card, CardLimits } from '../platform-cards.ts';
import { modelEntries } from './models.ts';

/** Models named in one option's line, at most this many (the rest: "and N more"). */
const MAX_LISTED_MODELS = 25;

/** What a model option says when the service did not answer for the lists. */
const NO_MODELS = 'models: the service did not answer; try again later';

/**
 * One option in words: its description, range, values, and for a model option the models
 * (`listModels`: the first 25 named; otherwise a pointer to the Models card), joined by ` · `.
 * @param lists the model lists; undefined when the service is down.
 */
export function optionSummary(option: CommandOption, lists: ModelLists | undefined, listModels: boolean): string {
  const parts = [option.description];
  const range = rangeOf(option);
  if (range) parts.push(english.say(range));
  if (option.choices) parts.push(`one of ${option.choices.map((c) => c.value).join(', ')}`);
  if (option.autocomplete) {
    const kind = option.autocomplete === 'image_models' ? 'image' : 'text';
    const all = modelChoices(lists, kind, '', 1000).map((c) => c.value);
    const shown = all.slice(0, MAX_LISTED_MODELS).join(', ');
    const more = all.length > MAX_LISTED_MODELS ? `, and ${all.length - MAX_LISTED_MODELS} more` : '';
    if (!lists) parts.push(NO_MODELS);
    else
      parts.push(
        listModels
          ? `models: ${shown || 'none listed'}${more}`
          : `${kind === 'image' ? 'an image' : 'a text'} model (see “Models”)`,
      );
  }
  return parts.join(' · ');
}

/**
 * One command as a card: its form, whether it is for admins, its examples, and a field per
 * option (on Slack the main text is in the form, not a field).
 * @param listModels name the models in model options (one command's help) or point to the Models card (/help).
 */
export function commandCard(
  command: Command,
  lists: ModelLists | undefined,
  platform: 'discord' | 'slack',
  listModels: boolean,
): Card {
  const main = platform === 'slack' ? mainOptionOf(command) : undefined;
  const fields = command.options
    .filter((o) => o !== main)
    .map((o) => ({
      name: `${optionForm(o, platform)}${platform === 'discord' && o.required ? ' (required)' : ''}`,
      value: optionSummary(o, lists, listModels),
    }));
  const examples =
    platform === 'slack' ? (command.examples ?? []).map((e) => `\`/${command.name}${e ? ` ${e}` : ''}\``) : [];
  return {
    title: `/${command.name}: ${command.description}`,
    description: `\`${invocationForm(command, platform)}\`${command.adminOnly ? ' (admins only)' : ''}${examples.length ? `\nExamples:\n${examples.join('\n')}` : ''}`,
    fields,
    ...(platform === 'slack'
      ? { footer: 'Text in quotes is taken as written. Options may come before or after the text.' }
      : {}),
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
export function modelsCards(lists: ModelLists | undefined, limits: CardLimits, platform: 'discord' | 'slack'): Card[] {
  if (!lists) return [{ title: 'Models', fields: [{ name: 'Models', value: NO_MODELS }] }];
  const images = modelEntries(lists).slice(lists.text.length);
  const field = (name: string, chunks: Chunk[]) =>
    chunks.map((chunk, i) => ({ name: i === 0 ? name : `${name} (continued)`, ...chunk }));
  const fields = [
    ...field('Text models', chunked(lists.text, limits.maxValueChars, ', ')),
    ...field(
      'Image models',
      chunked(
        images.map((e) => `${e.name}: ${e.value}`),
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
    title: i === 0 ? 'Models' : 'Models (continued)',
    ...(i === 0 ? { description: 'What `model` options take (/settings sets a channel’s defaults).' } : {}),
    fields: page.map(({ name, value }) => ({ name, value })),
    ...(more > 0 && i === shown.length - 1
      ? {
          footer: `… and ${more} more model${more > 1 ? 's' : ''}${platform === 'discord' ? ': type part of a name in a `model` option to find the others' : ''}.`,
        }
      : {}),
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
 * The message actions as one card: where they are on the platform (Discord: a message's Apps
 * menu; Slack: its More actions menu) and a field per action (its name, what it does).
 * @returns undefined when there are none.
 */
export function actionsCard(actions: readonly MessageAction[], platform: 'discord' | 'slack'): Card | undefined {
  if (!actions.length) return undefined;
  const where =
    platform === 'discord'
      ? 'Right-click (or long-press) a message → Apps'
      : 'Hover a message → More actions (⋮), or “More message shortcuts…”';
  return {
    title: 'Message actions',
    description: `${where}: the message’s text, images and files are what the answer reads.`,
    fields: actions.map((a) => ({ name: a.name, value: a.description })),
  };
}

/**
 * `/help`: every command of `list` with its options, the message actions, then the models, to
 * the user alone, in as many ephemeral messages as the platform's card limits need
 * (`ctx.reply.limits.cards`). Counts against no quota. The models are those cached, or fetched
 * within {@link HELP_MODELS_WAIT_MS} (else the Models card says the service did not answer).
 */
export async function showHelp(
  ctx: CommandContext,
  core: Core,
  list: readonly Command[],
  actions: readonly MessageAction[] = [],
): Promise<void> {
  const lists = await core.catalog.quick(HELP_MODELS_WAIT_MS);
  const limits = ctx.reply.limits.cards;
  const actionCard = actionsCard(actions, ctx.platform);
  const cards = [
    ...list.map((c) => commandCard(c, lists, ctx.platform, false)),
    ...(actionCard ? [actionCard] : []),
    ...modelsCards(lists, limits, ctx.platform),
  ];
  for (const message of packCards(cards, limits)) await ctx.reply.sendEphemeral(message);
}
