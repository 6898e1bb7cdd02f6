/**
 * What every Discord write of the bot shares: no pings, the limits a streamed reply keeps,
 * the payload pieces built from the core's OutgoingMessage, and a REST request function that
 * makes discord.js's uploads work beside undici 7.
 */
import { AttachmentBuilder, DefaultRestOptions, type RESTOptions, type ResponseLike } from 'discord.js';
import type { OutgoingMessage } from '../../core/platform.ts';

/**
 * No pings from anything the bot posts (model output included): sent on every create and
 * edit. `replied_user: false` also keeps a reply from pinging the author it answers.
 */
export const NO_MENTIONS = { parse: [] as [], repliedUser: false };

/** Discord's limits as the streaming reply needs them (PLATFORM-LIMITS.md). */
export const DISCORD_LIMITS = {
  /** `content` characters. */
  maxChars: 2000,
  /** ms between edits of one reply: the per-channel budget is about 5 edits per 5 s. */
  minEditIntervalMs: 1000,
};

/** The files of a message as discord.js attachments. */
export function filesOf(message: OutgoingMessage): AttachmentBuilder[] {
  return (message.files ?? []).map((f) => new AttachmentBuilder(f.data, { name: f.name, ...(f.description ? { description: f.description } : {}) }));
}

/** Image links as image embeds (at most 10 a message; titles cut to 256 characters). */
export function embedsOf(message: OutgoingMessage): Array<{ image: { url: string }; title?: string }> {
  return (message.imageLinks ?? []).slice(0, 10).map((link) => ({ image: { url: link.url }, ...(link.alt ? { title: link.alt.slice(0, 256) } : {}) }));
}

/**
 * discord.js's `rest.makeRequest`, safe for uploads. discord.js sends files as a `FormData`
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
export async function makeDiscordRequest(url: string, init: Parameters<RESTOptions['makeRequest']>[1]): Promise<ResponseLike> {
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    const headers = { ...(init.headers as Record<string, string> | undefined), 'content-type': encoded.headers.get('content-type')! };
    return DefaultRestOptions.makeRequest(url, { ...init, headers, body: Buffer.from(await encoded.arrayBuffer()) });
  }
  return DefaultRestOptions.makeRequest(url, init);
}
