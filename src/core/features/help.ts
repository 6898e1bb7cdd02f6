/**
 * Help texts, platform-neutral: one command's card (Slack's `/<command> help`) and `/help`,
 * every command with its options (ranges, choices) and the service's models, in as many
 * messages as the platform's card limits need, shown to the user alone.
 */

import type { Command, CommandOption } from '../command.ts';
import { rangeOf } from '../command.ts';
import type { Core } from '../core.ts';
import { type ModelLists, modelChoices } from '../models/catalog.ts';
import { invocationForm, mainOptionOf, optionForm } from '../option-forms.ts';
import type { Card, CardLimits, CommandContext, OutgoingMessage } from '../platform.ts';
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
  if (range) parts.push(range);
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

/** Lines joined by `, ` (or new lines) into field values of at most `max` characters each. */
function chunked(items: readonly string[], max: number, separator: string): string[] {
  const values: string[] = [];
  let value = '';
  for (const item of items.map((i) => i.slice(0, max))) {
    if (value && value.length + separator.length + item.length > max) {
      values.push(value);
      value = '';
    }
    value = value ? `${value}${separator}${item}` : item;
  }
  if (value) values.push(value);
  return values;
}

/** The service's models as a card: every text and image model, in fields within the card limits. */
export function modelsCard(lists: ModelLists | undefined, limits: CardLimits): Card {
  if (!lists) return { title: 'Models', fields: [{ name: 'Models', value: NO_MODELS }] };
  const images = modelEntries(lists).slice(lists.text.length);
  const field = (name: string, values: string[]) =>
    values.map((value, i) => ({ name: i === 0 ? name : `${name} (continued)`, value }));
  return {
    title: 'Models',
    description: 'What `model` options take (/settings sets a channel’s defaults).',
    fields: [
      ...field('Text models', chunked(lists.text, limits.maxValueChars, ', ')),
      ...field(
        'Image models',
        chunked(
          images.map((e) => `${e.name}: ${e.value}`),
          limits.maxValueChars,
          '\n',
        ),
      ),
    ].slice(0, limits.maxFields - 3),
  };
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
 * `/help`: every command of `list` with its options, then the models, to the user alone, in as
 * many ephemeral messages as the platform's card limits need (`ctx.reply.limits.cards`).
 */
export async function showHelp(ctx: CommandContext, core: Core, list: readonly Command[]): Promise<void> {
  const lists = await core.catalog.quick();
  const limits = ctx.reply.limits.cards;
  const cards = [...list.map((c) => commandCard(c, lists, ctx.platform, false)), modelsCard(lists, limits)];
  for (const message of packCards(cards, limits)) await ctx.reply.sendEphemeral(message);
}
