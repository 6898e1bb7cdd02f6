/**
 * Components V2 on Discord (components/reference.mdx; docs/platform-limits.md, "Components V2"):
 * a gallery message (OutgoingMessage.gallery) as one Container holding a Text Display (the
 * caption), a Media Gallery (the uploaded images by `attachment://<name>`, then image links by
 * URL, each with its alt text) and the buttons' action row, sent with the IS_COMPONENTS_V2 flag
 * and without `content` or `embeds`, which Discord refuses with it; the fallback to the plain
 * message (attachments and text) where that form cannot be used; and the images of such a
 * message read back (Discord leaves uploads that components show out of `attachments`).
 */
import {
  type APIActionRowComponent,
  type APIComponentInMessageActionRow,
  type APIContainerComponent,
  type APIMediaGalleryItem,
  type APIMessageTopLevelComponent,
  type APITextDisplayComponent,
  ComponentType,
  MessageFlags,
} from 'discord.js';
import type { OutgoingMessage } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { isInvalidForm } from './errors.ts';

/**
 * Discord's limits of a Components V2 message: components in all (nested ones and buttons
 * counted, gallery items not), items of one Media Gallery, characters of all Text Displays
 * together, characters of an item's alt text.
 */
export const COMPONENTS_V2_LIMITS = { components: 40, galleryItems: 10, textChars: 4000, descriptionChars: 1024 };

/** The flag that makes a message a Components V2 one (`1 << 15`); it cannot be removed once set. */
export const COMPONENTS_V2_FLAG: MessageFlags.IsComponentsV2 = MessageFlags.IsComponentsV2;

/**
 * A file name an `attachment://` reference finds as is: Discord keeps an upload's name when it
 * is made of letters, digits, `.`, `_` and `-` (others it rewrites, and the reference would miss).
 */
const REFERABLE_NAME = /^[\w.-]{1,100}$/;

/** A gallery item: a media URL (an upload's `attachment://` reference, or an http(s) link) and its alt text. */
function item(url: string, alt: string | undefined): APIMediaGalleryItem {
  const description = alt?.trim().slice(0, COMPONENTS_V2_LIMITS.descriptionChars);
  return { media: { url }, ...(description ? { description } : {}) };
}

/**
 * The Container a gallery message is shown as: its caption (`content`, cut to the 4,000
 * characters all Text Displays share) in a Text Display, its images in a Media Gallery, then
 * `rows` (the buttons' action row). At most 3 + the rows' components, far within the 40.
 * @param rows the message's buttons as action rows (rest.ts `componentsOf`).
 * @returns undefined when the message is not a gallery or cannot be shown as one: a file that
 *   is not an image, or whose name an `attachment://` reference would not find (two files of one
 *   name included), a link that is not http(s), no image, or more than 10.
 */
export function galleryContainer(
  message: OutgoingMessage,
  rows: Array<APIActionRowComponent<APIComponentInMessageActionRow>>,
): APIContainerComponent | undefined {
  if (!message.gallery) return undefined;
  const files = message.files ?? [];
  const links = message.imageLinks ?? [];
  const referable = files.every((f) => f.mimeType.startsWith('image/') && REFERABLE_NAME.test(f.name));
  if (!referable || new Set(files.map((f) => f.name)).size !== files.length) return undefined;
  if (!links.every((l) => /^https?:\/\/\S+$/i.test(l.url))) return undefined;
  const items = [
    ...files.map((f) => item(`attachment://${f.name}`, f.description)),
    ...links.map((l) => item(l.url, l.alt)),
  ];
  if (items.length === 0 || items.length > COMPONENTS_V2_LIMITS.galleryItems) return undefined;
  const caption = message.content.trim().slice(0, COMPONENTS_V2_LIMITS.textChars);
  return {
    type: ComponentType.Container,
    components: [
      ...(caption ? [{ type: ComponentType.TextDisplay, content: caption } as const] : []),
      { type: ComponentType.MediaGallery, items },
      ...rows,
    ],
  };
}

/** Whether a message's flags (a number, as the bot writes them) make it a Components V2 one. */
export function isComponentsV2(flags: unknown): boolean {
  return typeof flags === 'number' && (flags & COMPONENTS_V2_FLAG) !== 0;
}

/** The characters of every Text Display in a component tree. */
function textChars(components: readonly unknown[]): number {
  let total = 0;
  for (const c of components as Array<{ type?: number; content?: unknown; components?: unknown[] }>) {
    if (c.type === ComponentType.TextDisplay && typeof c.content === 'string') total += c.content.length;
    if (Array.isArray(c.components)) total += textChars(c.components);
  }
  return total;
}

/**
 * A Components V2 message's components with `text` added as a Text Display after them (a note
 * where a plain message would add a line to `content`), when it fits within the 4,000
 * characters; as they are when it does not, or when they show it already.
 */
export function withTextDisplay(
  components: readonly APIMessageTopLevelComponent[],
  text: string,
): APIMessageTopLevelComponent[] {
  const shown = components.some((c) => c.type === ComponentType.TextDisplay && c.content === text);
  if (shown || textChars(components) + text.length > COMPONENTS_V2_LIMITS.textChars) return [...components];
  const note: APITextDisplayComponent = { type: ComponentType.TextDisplay, content: text };
  return [...components, note];
}

/**
 * Writes a message; when it is a gallery Discord refused in its Components V2 form (400, 50035
 * Invalid Form Body: nothing was written), writes it once more as a plain message (attachments,
 * the caption as `content`, the buttons' row), and logs it. Any other error is thrown as it is.
 * @throws what `write` throws (the plain form's error after a refused gallery).
 */
export async function withGalleryFallback<T>(
  message: OutgoingMessage,
  write: (message: OutgoingMessage) => Promise<T>,
  log: Logger,
): Promise<T> {
  if (!galleryContainer(message, [])) return write(message);
  try {
    return await write(message);
  } catch (error) {
    if (!isInvalidForm(error)) throw error;
    log.warn({ err: error }, 'Discord refused the gallery (Components V2): posting the images as attachments');
    return write({ ...message, gallery: false });
  }
}

/** An image a Components V2 message shows from its own uploads (a Media Gallery item with an `attachment_id`). */
export interface GalleryImage {
  /** The attachment's id (as the attachment ids of `attachments`). */
  id: string;
  /** The CDN URL Discord gave the item (signed: reference.mdx, "Signed Attachment CDN URLs"). */
  url: string;
  /** The file's name, from the URL's last path segment. */
  name: string;
  contentType: string | undefined;
}

/**
 * The images a message's components show from its uploads, in order: every Media Gallery's
 * items (in Containers too) whose media Discord resolved to one of the message's attachments
 * (`attachment_id`) and says is an image. Linked images (no `attachment_id`) are left out: they
 * are not the bot's files.
 * @param components the message's components as API JSON (discord.js `component.toJSON()`).
 */
export function galleryImages(components: readonly unknown[]): GalleryImage[] {
  const found: GalleryImage[] = [];
  for (const c of components as Array<{ type?: number; items?: unknown[]; components?: unknown[] }>) {
    if (c.type === ComponentType.MediaGallery && Array.isArray(c.items)) {
      for (const i of c.items as Array<{
        media?: { url?: unknown; attachment_id?: unknown; content_type?: unknown };
      }>) {
        const { url, attachment_id: id, content_type: type } = i.media ?? {};
        if (typeof url !== 'string' || typeof id !== 'string') continue;
        if (typeof type !== 'string' || !type.startsWith('image/')) continue;
        found.push({ id, url, name: nameOf(url), contentType: type });
      }
    }
    if (Array.isArray(c.components)) found.push(...galleryImages(c.components));
  }
  return found;
}

/** The file name of a URL: its last path segment, decoded; `image` when there is none. */
function nameOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') || 'image';
  } catch {
    return 'image';
  }
}
