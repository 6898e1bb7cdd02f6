/**
 * What every Discord write of the bot shares: no pings (but the one user a long answer's notice
 * mentions: OutgoingMessage.mentionUser), the message limits a streamed reply keeps,
 * the payload pieces built from the core's OutgoingMessage, and a REST request function that
 * makes discord.js's uploads work beside undici 7.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIEmbed,
  type APIModalInteractionResponseCallbackData,
  AttachmentBuilder,
  ButtonStyle,
  ComponentType,
  DefaultRestOptions,
  type RESTOptions,
  type ResponseLike,
  TextInputStyle,
} from 'discord.js';
import type { OutgoingMessage, ReplyLimits, TextForm } from '../../core/platform.ts';
import { COMPONENTS_V2_FLAG, galleryContainer } from './components-v2.ts';
import { DISCORD_RENDERING } from './markdown.ts';
import { cappedWaits } from './rest-waits.ts';

/**
 * No pings from anything the bot posts (model output included): sent on every create and
 * edit. `replied_user: false` also keeps a reply from pinging the author it answers.
 */
export const NO_MENTIONS = { parse: [] as [], repliedUser: false };

/** {@link NO_MENTIONS} as Discord's API spells it (`allowed_mentions`), for bodies sent through discord.js's REST client directly. */
export const API_NO_MENTIONS = { parse: [] as [], replied_user: false };

/** The user a message mentions and notifies (OutgoingMessage.mentionUser), when it is a Discord user id (a snowflake). */
function mentionedUser(message: OutgoingMessage): string | undefined {
  const id = message.mentionUser;
  return id !== undefined && /^\d{15,21}$/.test(id) ? id : undefined;
}

/**
 * The text Discord is sent: `content`, after the mention of {@link OutgoingMessage.mentionUser}
 * (`<@id> `) when the message has one.
 */
function textOf(message: OutgoingMessage): string {
  const id = mentionedUser(message);
  return id ? `<@${id}> ${message.content}` : message.content;
}

/**
 * What a message may ping: nobody ({@link NO_MENTIONS}), or its `mentionUser` alone (a long
 * answer's notice: `parse` empty, so that `@everyone`, roles and any other `<@id>` stay inert).
 */
function mentionsOf(message: OutgoingMessage) {
  const id = mentionedUser(message);
  return id ? { parse: [] as [], users: [id], repliedUser: false } : NO_MENTIONS;
}

/** {@link mentionsOf} as Discord's API spells it. */
function apiMentionsOf(message: OutgoingMessage) {
  const id = mentionedUser(message);
  return id ? { parse: [] as [], users: [id], replied_user: false } : API_NO_MENTIONS;
}

/** Discord's message limits (sizes and edit pace) as the core needs them (docs/platform-limits.md). Not its rate budgets: rate-limits.ts. */
export const DISCORD_MESSAGE_LIMITS: ReplyLimits = {
  /** `content` characters. */
  maxChars: 2000,
  /** ms between edits of one reply: the per-channel budget is about 5 edits per 5 s. */
  minEditIntervalMs: 1000,
  /** One embed a page: 25 fields, 6,000 characters in all, 1,024 a field value; paged with buttons. */
  cards: { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' },
  /** 10 MiB a file unless the interaction says more (boosted servers). */
  maxFileBytes: 10 * 1024 * 1024,
  /** Tables, which Discord does not render, as monospaced blocks or lists (markdown.ts). */
  rendering: DISCORD_RENDERING,
};

/** The files of a message as discord.js attachments. */
export function filesOf(message: OutgoingMessage): AttachmentBuilder[] {
  return (message.files ?? []).map(
    (f) => new AttachmentBuilder(f.data, { name: f.name, ...(f.description ? { description: f.description } : {}) }),
  );
}

/**
 * Cards and image links as embeds (at most 10 a message): a card's title, description, fields
 * and footer; an image link's image and alt text as title (cut to 256 characters).
 */
export function embedsOf(message: OutgoingMessage): APIEmbed[] {
  const cards = (message.cards ?? []).map(
    (card): APIEmbed => ({
      title: card.title.slice(0, 256),
      ...(card.description ? { description: card.description.slice(0, 4096) } : {}),
      fields: card.fields.map((f) => ({ name: f.name.slice(0, 256), value: f.value.slice(0, 1024) || '\u200b' })),
      ...(card.footer ? { footer: { text: card.footer.slice(0, 2048) } } : {}),
    }),
  );
  const images = (message.imageLinks ?? []).map(
    (link): APIEmbed => ({ image: { url: link.url }, ...(link.alt ? { title: link.alt.slice(0, 256) } : {}) }),
  );
  return [...cards, ...images].slice(0, 10);
}

const BUTTON_STYLES = {
  primary: ButtonStyle.Primary,
  secondary: ButtonStyle.Secondary,
  danger: ButtonStyle.Danger,
} as const;

/** Buttons as one action row (at most 5 buttons; `custom_id` ≤ 100, label ≤ 80 characters). */
export function componentsOf(message: OutgoingMessage): Array<APIActionRowComponent<APIButtonComponentWithCustomId>> {
  const buttons = (message.buttons ?? []).slice(0, 5);
  if (buttons.length === 0) return [];
  return [
    {
      type: ComponentType.ActionRow,
      components: buttons.map((b) => ({
        type: ComponentType.Button,
        custom_id: b.id.slice(0, 100),
        label: b.label.slice(0, 80),
        style: BUTTON_STYLES[b.style ?? 'secondary'],
        ...(b.disabled ? { disabled: true } : {}),
      })),
    },
  ];
}

/** The message (a string is its text) with its text cut to Discord's 2,000 characters (`maxChars`): a sentence, never a gallery. */
export function fittedMessage(message: string | OutgoingMessage): OutgoingMessage {
  const m = typeof message === 'string' ? { content: message } : message;
  return { ...m, content: m.content.slice(0, DISCORD_MESSAGE_LIMITS.maxChars), gallery: false };
}

/**
 * A gallery message's Components V2 form (components-v2.ts): the flag and its one Container
 * (caption, images, buttons); undefined for any other message, or a gallery that form cannot show.
 */
function componentsV2Of(message: OutgoingMessage) {
  const container = galleryContainer(message, componentsOf(message));
  return container && { flags: COMPONENTS_V2_FLAG as typeof COMPONENTS_V2_FLAG, components: [container] };
}

/**
 * The whole payload of a create: content, files, embeds, buttons, and no pings (but `mentionUser`'s); a gallery in
 * its Components V2 form (the flag, its Container, the files it names; no `content` or `embeds`).
 */
export function payloadOf(message: OutgoingMessage) {
  const v2 = componentsV2Of(message);
  if (v2) return { ...v2, files: filesOf(message), allowedMentions: NO_MENTIONS };
  return {
    content: textOf(message),
    files: filesOf(message),
    embeds: embedsOf(message),
    components: componentsOf(message),
    allowedMentions: mentionsOf(message),
  };
}

/**
 * The payload of an edit: the content, and embeds, buttons or files only when the message
 * names them (a streamed text edit leaves a message's embeds and buttons as they are); no pings
 * (but `mentionUser`'s). A gallery in its Components V2 form, `content` and `embeds` reset (null,
 * []), as Discord wants when an edit sets the flag on a message that had them (a progress line
 * becoming the image).
 */
export function editPayloadOf(message: OutgoingMessage) {
  const v2 = componentsV2Of(message);
  // New files replace the message's attachments (a progress line becoming the image).
  const files = message.files?.length ? { files: filesOf(message), attachments: [] } : {};
  if (v2) return { content: null, embeds: [], ...v2, ...files, allowedMentions: NO_MENTIONS };
  return {
    content: textOf(message),
    ...(message.cards || message.imageLinks ? { embeds: embedsOf(message) } : {}),
    ...(message.buttons ? { components: componentsOf(message) } : {}),
    ...files,
    allowedMentions: mentionsOf(message),
  };
}

/** What an edit with discord.js takes: {@link editPayloadOf}'s, or {@link payloadOf}'s for the first write of a deferred reply. */
export type EditPayload = ReturnType<typeof editPayloadOf> | ReturnType<typeof payloadOf>;

/**
 * The JSON body of a text edit (no files) for Discord's edit endpoints, sent without discord.js's
 * payload builder: the content, and embeds and buttons only when the message names them (as
 * {@link editPayloadOf}) or, `whole`, always (as {@link payloadOf}: the first write of a deferred
 * reply); no pings (but `mentionUser`'s). A gallery of links in its Components V2 form, as
 * {@link editPayloadOf}.
 */
export function editBodyOf(message: OutgoingMessage, whole = false) {
  const v2 = componentsV2Of(message);
  if (v2) return { content: null, embeds: [], ...v2, allowed_mentions: API_NO_MENTIONS };
  return {
    content: textOf(message),
    ...(whole || message.cards || message.imageLinks ? { embeds: embedsOf(message) } : {}),
    ...(whole || message.buttons ? { components: componentsOf(message) } : {}),
    allowed_mentions: apiMentionsOf(message),
  };
}

/**
 * discord.js's `rest.makeRequest`, safe for uploads, and showing discord.js no wait longer than
 * the bot holds one (rest-waits.ts `cappedWaits`). discord.js sends files as a `FormData`
 * through its own undici 6, whose `request()` dispatches on the process-wide undici dispatcher;
 * the service client's undici 7 installs itself as that dispatcher when it is imported, and
 * undici 7 cannot read a FormData it did not make (it throws "action is not a function"), so
 * every upload failed. Multipart bodies are therefore encoded to bytes first, by Node's own
 * `Response` (which knows Node's FormData), with their `content-type` (boundary included);
 * every other request goes to discord.js's default strategy unchanged.
 * @param url the full request URL.
 * @param init discord.js's request options (`headers` is a plain object).
 * @returns discord.js's response shape.
 */
export async function makeDiscordRequest(
  url: string,
  init: Parameters<RESTOptions['makeRequest']>[1],
): Promise<ResponseLike> {
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    const headers = {
      ...(init.headers as Record<string, string> | undefined),
      'content-type': encoded.headers.get('content-type')!,
    };
    const body = Buffer.from(await encoded.arrayBuffer());
    return cappedWaits(await DefaultRestOptions.makeRequest(url, { ...init, headers, body }));
  }
  return cappedWaits(await DefaultRestOptions.makeRequest(url, init));
}

/**
 * A one-field form as Discord's modal (interaction callback 9): a Label holding a required
 * paragraph TextInput of at most `form.maxLength` characters; `ids.modal` is the modal's
 * `custom_id` (what its submit is routed by), `ids.input` the input's.
 */
export function oneFieldModal(
  form: Omit<TextForm, 'id'>,
  ids: { modal: string; input: string },
): APIModalInteractionResponseCallbackData {
  return {
    custom_id: ids.modal,
    title: form.title,
    components: [
      {
        type: ComponentType.Label,
        label: form.label,
        component: {
          type: ComponentType.TextInput,
          custom_id: ids.input,
          style: TextInputStyle.Paragraph,
          placeholder: form.placeholder,
          max_length: form.maxLength,
          required: true,
        },
      },
    ],
  };
}
