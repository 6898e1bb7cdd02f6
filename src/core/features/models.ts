/**
 * The model list admins read with /models: the text models of `/v1/models` (§4.5) and the
 * image models (`type: image` there, display names and descriptions from
 * `/v1/images/available-models`, §4.4), marked 🖼️, in pages that fit the platform
 * (Discord: 25 fields and 6,000 characters an embed, paged with Previous/Next buttons;
 * Slack: pages posted in turn within 50 blocks).
 */

import type { Core } from '../core.ts';
import { sendOnce } from '../delivery/one-off.ts';
import { ForbiddenError } from '../errors.ts';
import { english, type Words } from '../i18n/words.ts';
import { buttonId } from '../keys.ts';
import type { ModelLists } from '../models/catalog.ts';
import type { CommandContext, ComponentContext, OutgoingMessage } from '../platform.ts';
import type { CardLimits } from '../platform-cards.ts';

/** One line of the list. */
export interface ModelEntry {
  name: string;
  value: string;
}

/** The entries of the lists in `words` (the reader's): text models first, then image models. */
export function modelEntries(lists: ModelLists, words: Words = english): ModelEntry[] {
  const text = words.t('commands.models.text_model');
  const entries: ModelEntry[] = lists.text.map((id) => ({ name: id, value: text }));
  const matched = new Set<string>();
  for (const model of lists.image) {
    const id = lists.imageIds.find((i) => i.toLowerCase() === model.display_name.toLowerCase());
    if (id) matched.add(id);
    entries.push({
      name: `🖼️ ${model.display_name}`,
      value: words.t('commands.models.image_model', {
        described: model.description ? 'yes' : 'no',
        description: model.description ?? '',
        identified: id ? 'yes' : 'no',
        id: id ?? '',
      }),
    });
  }
  for (const id of lists.imageIds)
    if (!matched.has(id)) entries.push({ name: `🖼️ ${id}`, value: words.t('commands.models.image_listed') });
  return entries;
}

/** Splits entries into pages within a platform's card limits (fields per message and characters). */
export function pageEntries(entries: readonly ModelEntry[], limits: CardLimits, reserve = 200): ModelEntry[][] {
  const pages: ModelEntry[][] = [];
  let page: ModelEntry[] = [];
  let chars = reserve;
  for (const entry of entries) {
    const fitted = { name: entry.name.slice(0, 256), value: entry.value.slice(0, limits.maxValueChars) };
    const size = fitted.name.length + fitted.value.length;
    if (page.length > 0 && (page.length >= limits.maxFields || chars + size > limits.maxChars)) {
      pages.push(page);
      page = [];
      chars = reserve;
    }
    page.push(fitted);
    chars += size;
  }
  if (page.length > 0 || pages.length === 0) pages.push(page);
  return pages;
}

/** One page as a message in `words`; with button paging, Previous/Next carry the page to show (`models:<page>:<public>`). */
function pageMessage(
  lists: ModelLists,
  pages: ModelEntry[][],
  index: number,
  limits: CardLimits,
  isPublic: boolean,
  words: Words,
): OutgoingMessage {
  const page = Math.min(Math.max(index, 0), pages.length - 1);
  const textCount = lists.text.length;
  const imageCount =
    lists.image.length +
    lists.imageIds.filter((id) => !lists.image.some((m) => m.display_name.toLowerCase() === id.toLowerCase())).length;
  const message: OutgoingMessage = {
    content: '',
    cards: [
      {
        title: words.t('commands.models.title', { text: String(textCount), image: String(imageCount) }),
        fields: pages[page]!,
        footer: words.t('commands.models.footer', { page: String(page + 1), pages: String(pages.length) }),
      },
    ],
  };
  if (limits.paging === 'buttons' && pages.length > 1) {
    const flag = isPublic ? 1 : 0;
    message.buttons = [
      { id: buttonId('models', page - 1, flag), label: words.t('commands.models.previous'), disabled: page === 0 },
      {
        id: buttonId('models', page + 1, flag),
        label: words.t('commands.models.next'),
        disabled: page === pages.length - 1,
      },
    ];
  }
  return message;
}

/** The words a list is shown in: the place's when it is shown to the channel, else the admin's own. */
function wordsFor(core: Core, ctx: CommandContext | ComponentContext, isPublic: boolean): Promise<Words> {
  return isPublic ? core.languages.forPlace(ctx) : core.languages.forUser(ctx);
}

/**
 * Shows the lists: only to the admin who asked (ephemeral, in their language) unless `isPublic`
 * (then in the place's: `core.languages.forPlace`).
 * @throws ServiceError subclasses when the lists cannot be fetched (the admin is told).
 */
export async function showModels(ctx: CommandContext, core: Core, isPublic: boolean): Promise<void> {
  const [lists, words] = await Promise.all([core.catalog.lists(ctx.signal), wordsFor(core, ctx, isPublic)]);
  const limits = ctx.reply.limits.cards;
  const pages = pageEntries(modelEntries(lists, words), limits);
  const messages =
    limits.paging === 'buttons'
      ? [pageMessage(lists, pages, 0, limits, isPublic, words)]
      : pages.map((_, i) => pageMessage(lists, pages, i, limits, isPublic, words));
  for (const message of messages) {
    if (isPublic) await sendOnce(core.scheduler, ctx.reply, message);
    else await ctx.reply.sendEphemeral(message);
  }
}

/**
 * Previous/Next: shows page `args[0]` in place of the message with the buttons. A list an admin
 * showed to the channel (`args[1]` = `1`) may be paged by anyone who sees it; a list shown to
 * one admin only by an admin, checked when pressed (one who is no longer an admin is refused).
 * @throws ForbiddenError.
 */
export async function turnModelsPage(ctx: ComponentContext, core: Core): Promise<void> {
  const isPublic = ctx.args[1] === '1';
  if (!isPublic && !(await ctx.user.isAdmin())) throw new ForbiddenError('common.admins_only', { command: 'models' });
  const limits = ctx.limits.cards;
  const index = Number.parseInt(ctx.args[0] ?? '0', 10);
  const [lists, words] = await Promise.all([core.catalog.lists(ctx.signal), wordsFor(core, ctx, isPublic)]);
  const pages = pageEntries(modelEntries(lists, words), limits);
  await ctx.update(pageMessage(lists, pages, Number.isFinite(index) ? index : 0, limits, isPublic, words));
}
