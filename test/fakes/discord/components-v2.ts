/**
 * Components V2 (components/reference.mdx) as Discord checks and stores them: the component
 * tree of a message sent with the IS_COMPONENTS_V2 flag (`1 << 15`), its limits, its
 * `attachment://` references, the media Discord resolves for them, and what a message shows
 * of it (its text, its buttons, the attachments it references). The rules a write must keep
 * with the flag (no `content`, no `embeds`, the flag never removed) are in writes.ts.
 *
 * Limits checked, each a 400 "Invalid Form Body" (50035) at the offending path:
 * - top level: Action Row (1), Section (9), Text Display (10), Media Gallery (12), File (13),
 *   Separator (14), Container (17); in a Container the same but a Container; an Action Row as
 *   in a legacy message (validation.ts `checkActionRow`), `custom_id`s unique in the message;
 * - at most 40 components in all, nested ones and buttons counted (gallery items are not):
 *   `COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED`, the code Discord answers (its message is the fake's);
 * - Text Displays: a non-empty `content`, at most 4,000 characters across the whole message
 *   (BASE_TYPE_MAX_LENGTH at the Text Display that passes it);
 * - Media Gallery: 1–10 items, each with `media.url` an http(s) URL or `attachment://<name>`
 *   naming a file of the message (ATTACHMENT_NOT_FOUND, as for `attachments`: the fake's
 *   wording), alt text (`description`) of at most 1,024 characters; a File's `file.url` only
 *   `attachment://`; a Section 1–3 Text Displays and a button or thumbnail as accessory.
 */
import { addError, type ErrorTree } from './errors.ts';
import type { FakeAttachment } from './model.ts';
import type { Json } from './types.ts';
import { codePoints, isObject } from './util.ts';
import { checkActionRow, checkButton, checkCustomId } from './validation.ts';

/** Discord's limits of a Components V2 message. */
export const V2_LIMITS = { components: 40, galleryItems: 10, textChars: 4000, description: 1024, sectionTexts: 3 };

const TOP_LEVEL = [1, 9, 10, 12, 13, 14, 17];
const IN_CONTAINER = [1, 9, 10, 12, 13, 14];

type Path = Array<string | number>;

/** What one check of a tree gathers: `custom_id`s seen, components and text counted, files referenced. */
interface Walk {
  errors: ErrorTree;
  seen: Set<string>;
  count: number;
  text: number;
  /** `attachment://` names, with the path of each reference. */
  references: Array<{ name: string; at: Path }>;
}

/**
 * Checks the `components` of a message with the Components V2 flag (see the file comment).
 * @param files the names of the files the message will carry (uploads of the request and kept
 *   attachments): what an `attachment://` reference may name.
 * @returns the components as given (objects only); see {@link resolveMedia} for what is stored.
 */
export function checkComponentsV2(value: unknown[], errors: ErrorTree, files: readonly string[]): Json[] {
  const walk: Walk = { errors, seen: new Set(), count: 0, text: 0, references: [] };
  value.forEach((c, i) => checkComponent(c, ['components', i], TOP_LEVEL, walk));
  if (walk.count > V2_LIMITS.components)
    addError(
      errors,
      ['components'],
      'COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED',
      `A message can have at most ${V2_LIMITS.components} components in all.`,
    );
  for (const { name, at } of walk.references) {
    if (!files.includes(name))
      addError(errors, at, 'ATTACHMENT_NOT_FOUND', `Attachment "${name}" was not found in the request or the message.`);
  }
  return value.filter(isObject);
}

/** Checks one component of a type in `allowed` and what it holds. */
function checkComponent(c: unknown, at: Path, allowed: number[], walk: Walk): void {
  const { errors } = walk;
  if (!isObject(c) || !allowed.includes(c.type as number)) {
    addError(
      errors,
      [...at, 'type'],
      'UNION_TYPE_CHOICES',
      `Value of field "type" must be one of (${allowed.join(', ')}).`,
    );
    return;
  }
  walk.count += 1;
  if (c.type === 1) {
    walk.count += Array.isArray(c.components) ? c.components.length : 0;
    checkActionRow(c, at, errors, walk.seen);
  } else if (c.type === 9) checkSection(c, at, walk);
  else if (c.type === 10) checkText(c, at, walk);
  else if (c.type === 12) checkGallery(c, at, walk);
  else if (c.type === 13) checkMedia(c.file, [...at, 'file'], walk, false);
  else if (c.type === 14) {
    if (c.spacing !== undefined && c.spacing !== 1 && c.spacing !== 2)
      addError(errors, [...at, 'spacing'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
  } else checkContainer(c, at, walk);
}

/** A Container: 1 or more components of {@link IN_CONTAINER}'s types, an optional RGB `accent_color`. */
function checkContainer(c: Json, at: Path, walk: Walk): void {
  if (!Array.isArray(c.components) || c.components.length === 0) {
    addError(walk.errors, [...at, 'components'], 'BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.');
    return;
  }
  const color = c.accent_color;
  const rgb = typeof color === 'number' && Number.isInteger(color) && color >= 0 && color <= 0xffffff;
  if (color !== undefined && color !== null && !rgb)
    addError(
      walk.errors,
      [...at, 'accent_color'],
      'NUMBER_TYPE_MAX',
      'Int value should be less than or equal to 16777215.',
    );
  c.components.forEach((child, i) => checkComponent(child, [...at, 'components', i], IN_CONTAINER, walk));
}

/** A Text Display: a non-empty `content`, counted toward the message's 4,000 characters. */
function checkText(c: Json, at: Path, walk: Walk): void {
  if (typeof c.content !== 'string' || c.content.length === 0) {
    addError(walk.errors, [...at, 'content'], 'BASE_TYPE_REQUIRED', 'This field is required');
    return;
  }
  walk.text += codePoints(c.content);
  if (walk.text > V2_LIMITS.textChars)
    addError(
      walk.errors,
      [...at, 'content'],
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${V2_LIMITS.textChars} or fewer in length.`,
    );
}

/** A Section: 1–3 Text Displays and an accessory, a button or a thumbnail (11). */
function checkSection(c: Json, at: Path, walk: Walk): void {
  const texts = c.components;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > V2_LIMITS.sectionTexts)
    addError(walk.errors, [...at, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 3 in length.');
  else texts.forEach((t, i) => checkComponent(t, [...at, 'components', i], [10], walk));
  const accessory = c.accessory;
  const where = [...at, 'accessory'];
  if (!isObject(accessory) || (accessory.type !== 2 && accessory.type !== 11)) {
    addError(walk.errors, [...where, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (2, 11).');
    return;
  }
  walk.count += 1;
  if (accessory.type === 11) checkMedia(accessory.media, [...where, 'media'], walk, true);
  else if (checkButton(accessory, where, walk.errors))
    checkCustomId(accessory.custom_id, [...where, 'custom_id'], walk.errors, walk.seen);
}

/** A Media Gallery: 1–10 items, each a media and alt text of at most 1,024 characters. */
function checkGallery(c: Json, at: Path, walk: Walk): void {
  const items = c.items;
  if (!Array.isArray(items) || items.length === 0) {
    addError(walk.errors, [...at, 'items'], 'BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.');
    return;
  }
  if (items.length > V2_LIMITS.galleryItems)
    addError(
      walk.errors,
      [...at, 'items'],
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${V2_LIMITS.galleryItems} or fewer in length.`,
    );
  items.forEach((item, i) => {
    const where = [...at, 'items', i];
    if (!isObject(item)) {
      addError(walk.errors, where, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    checkMedia(item.media, [...where, 'media'], walk, true);
    const d = item.description;
    if (d !== undefined && d !== null && (typeof d !== 'string' || codePoints(d) > V2_LIMITS.description))
      addError(
        walk.errors,
        [...where, 'description'],
        'BASE_TYPE_MAX_LENGTH',
        `Must be ${V2_LIMITS.description} or fewer in length.`,
      );
  });
}

/** An unfurled media item: `url` an `attachment://` reference, or (`links`) an http(s) URL. */
function checkMedia(media: unknown, at: Path, walk: Walk, links: boolean): void {
  const url = isObject(media) ? media.url : undefined;
  const reference = typeof url === 'string' ? /^attachment:\/\/(.+)$/.exec(url) : null;
  if (reference) walk.references.push({ name: reference[1]!, at: [...at, 'url'] });
  else if (!links || typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url))
    addError(walk.errors, [...at, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
}

/** Calls `visit` for every component of a tree, nested ones and accessories included. */
function eachComponent(components: readonly unknown[], visit: (c: Json) => void): void {
  for (const c of components) {
    if (!isObject(c)) continue;
    visit(c);
    if (Array.isArray(c.components)) eachComponent(c.components, visit);
    if (isObject(c.accessory)) eachComponent([c.accessory], visit);
  }
}

/**
 * The components as Discord stores a Components V2 message's: ids given in tree order to those
 * sent without one (unused numbers from 1), and each `attachment://` media resolved to the
 * attachment it names (its CDN `url`, `proxy_url`, size in pixels, `content_type`,
 * `attachment_id`), an http(s) one to itself with a `proxy_url`. The input is not changed.
 */
export function resolveMedia(components: readonly Json[], attachments: readonly FakeAttachment[]): Json[] {
  const tree = structuredClone(components) as Json[];
  const used = new Set<number>();
  eachComponent(tree, (c) => {
    if (typeof c.id === 'number' && c.id > 0) used.add(c.id);
  });
  let next = 1;
  const resolve = (media: unknown): Json | undefined => {
    if (!isObject(media) || typeof media.url !== 'string') return undefined;
    const name = /^attachment:\/\/(.+)$/.exec(media.url)?.[1];
    if (name === undefined) return { url: media.url, proxy_url: media.url, flags: 0 };
    const a = attachments.find((f) => f.filename === name);
    if (!a) return undefined;
    return {
      url: a.url,
      proxy_url: a.proxyUrl,
      ...(a.width !== undefined
        ? { width: a.width, height: a.height, placeholder: 'fakeplaceholder', placeholder_version: 1 }
        : {}),
      ...(a.contentType ? { content_type: a.contentType } : {}),
      flags: 0,
      attachment_id: a.id,
    };
  };
  eachComponent(tree, (c) => {
    if (typeof c.id !== 'number' || c.id <= 0) {
      while (used.has(next)) next += 1;
      c.id = next;
      used.add(next);
    }
    if (Array.isArray(c.items))
      for (const item of c.items) if (isObject(item)) item.media = resolve(item.media) ?? item.media;
    if (c.type === 11) c.media = resolve(c.media) ?? c.media;
    if (c.type === 13) c.file = resolve(c.file) ?? c.file;
  });
  return tree;
}

/** The ids of the attachments a stored component tree shows (Discord leaves them out of the message's `attachments`). */
export function referencedAttachments(components: readonly unknown[]): Set<string> {
  const ids = new Set<string>();
  const note = (media: unknown) => {
    if (isObject(media) && typeof media.attachment_id === 'string') ids.add(media.attachment_id);
  };
  eachComponent(components, (c) => {
    if (Array.isArray(c.items)) for (const item of c.items) if (isObject(item)) note(item.media);
    note(c.media);
    note(c.file);
  });
  return ids;
}

/** The text a component tree shows: its Text Displays' contents, in order, joined by newlines. */
export function componentsText(components: readonly unknown[]): string {
  const texts: string[] = [];
  eachComponent(components, (c) => {
    if (c.type === 10 && typeof c.content === 'string') texts.push(c.content);
  });
  return texts.join('\n');
}

/** Every button (type 2) of a component tree, in action rows or as a Section's accessory, in order. */
export function buttonsIn(components: readonly unknown[]): Json[] {
  const buttons: Json[] = [];
  eachComponent(components, (c) => {
    if (c.type === 2) buttons.push(c);
  });
  return buttons;
}
