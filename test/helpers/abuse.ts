/**
 * What an attacker sends, for the tests and the benchmark of issues 16 and 38 (no user stalls the
 * bot for everyone): crafted image attachments, PDFs that inflate, huge text files, an answer
 * that opens a code fence and streams whitespace, and a burst of other users' /chat whose time to
 * first text is measured.
 */
import sharp from 'sharp';
import type { FakeDiscord, FakeWrite, UserAttachmentOptions } from '../fakes/discord.ts';

/** ~230 bytes of SVG: turbulence and a wide blur over 36 megapixels (under the 40 MP limit); librsvg renders it for minutes. */
export const SLOW_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="6000" height="6000"><filter id="f"><feTurbulence baseFrequency="0.9" numOctaves="10"/><feGaussianBlur stdDeviation="400"/></filter><rect width="6000" height="6000" filter="url(#f)"/></svg>',
);

/** 6,300 × 6,300 px (39.7 MP, just under the bot's limit), Adam7-interlaced, two colours of noise: a 5 MB file that decodes to 119 MB. */
export function heavyInterlacedPng(): Promise<Buffer> {
  return sharp({
    create: {
      width: 6300,
      height: 6300,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 2 },
    },
  })
    .png({ progressive: true, compressionLevel: 9, palette: true, colours: 2 })
    .toBuffer();
}

/** The four files of the attacking mention: the SVG by its name, the SVG as a PNG, and two heavy PNGs. */
export function craftedAttachments(heavyPng: Buffer): UserAttachmentOptions[] {
  return [
    { filename: 'filter.svg', contentType: 'image/svg+xml', data: SLOW_SVG },
    { filename: 'photo.png', contentType: 'image/png', data: SLOW_SVG },
    { filename: 'big-1.png', contentType: 'image/png', data: heavyPng },
    { filename: 'big-2.png', contentType: 'image/png', data: heavyPng },
  ];
}

/** The crafted files the bot downloads (filter.svg may be refused by its name alone). */
export const DOWNLOADED_CRAFTED = ['photo.png', 'big-1.png', 'big-2.png'];

/** Ten PDFs of one page each, all `bomb` (inflatingPdf of 1 GiB of blanks, ~1 MB): more than a message's files are read. */
export function pdfBombAttachments(bomb: Buffer): UserAttachmentOptions[] {
  return Array.from({ length: 10 }, (_, i) => ({
    filename: `bomb-${i}.pdf`,
    contentType: 'application/pdf',
    data: bomb,
  }));
}

/** Ten 20 MiB text logs, generated as they are downloaded (never held): 200 MiB for a budget of ~23,000 characters. */
export function bigLogAttachments(): UserAttachmentOptions[] {
  return Array.from({ length: 10 }, (_, i) => ({
    filename: `server-${i}.log`,
    contentType: 'text/plain',
    stream: { bytes: 20 * 1024 * 1024 },
  }));
}

/** Resolves once the fake CDN has served every file named, since `since` (ms since the epoch), or after 10 s. */
export async function downloaded(discord: FakeDiscord, names: readonly string[], since: number): Promise<void> {
  const wanted = new Set(names);
  const done = () =>
    discord.downloads.filter((d) => wanted.has(d.filename) && d.completed && d.at >= since).length >= wanted.size;
  while (!done() && Date.now() < since + 10_000) await new Promise((r) => setTimeout(r, 10));
}

/** An answer of `chars` characters: an opening ```json fence, then whitespace (spaces, line breaks, tabs), in `count` pieces. */
export function fenceThenWhitespace(chars: number, count: number): string[] {
  const opening = '```json\n';
  const whitespace = ' \n  \t\n   \n'.repeat(chars).slice(0, chars - opening.length);
  const size = Math.ceil(whitespace.length / (count - 1));
  const pieces = [opening];
  for (let i = 0; i < whitespace.length; i += size) pieces.push(whitespace.slice(i, i + size));
  return pieces;
}

/**
 * One /chat per channel at once, each by another user (ids from `firstUserId` on), answered by
 * the fake service's default `Echo: …`.
 * @returns each one's time from its command to the first write showing answer text, in ms.
 * @throws Error when not every one showed text within 30 s.
 */
export async function chatBurst(
  discord: FakeDiscord,
  channelIds: readonly string[],
  firstUserId: bigint,
): Promise<number[]> {
  const startedAt = new Map<string, number>();
  const firstText = new Map<string, number>();
  const onWrite = (w: FakeWrite) => {
    if (
      w.interactionId &&
      startedAt.has(w.interactionId) &&
      !firstText.has(w.interactionId) &&
      w.content.includes('Echo:')
    )
      firstText.set(w.interactionId, w.at);
  };
  discord.events.on('write', onWrite);
  try {
    channelIds.forEach((channelId, i) => {
      const user = { id: String(firstUserId + BigInt(i)) };
      startedAt.set(
        discord.dispatchInteraction({ command: 'chat', options: { prompt: `question ${i}` }, channelId, user }).id,
        Date.now(),
      );
    });
    const deadline = Date.now() + 30_000;
    while (firstText.size < startedAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (firstText.size < startedAt.size)
      throw new Error(`${firstText.size} of ${startedAt.size} /chat showed text within 30 s`);
    return [...startedAt].map(([id, at]) => firstText.get(id)! - at);
  } finally {
    discord.events.off('write', onWrite);
  }
}

/** Whether a message's components hold a Stop button (`stop:…`): the answer is still streaming. */
function carriesStop(rows: readonly unknown[]): boolean {
  return JSON.stringify(rows).includes('"custom_id":"stop:');
}

/**
 * The bot's reply to a user's message, once finished (no Stop button left on it or on its later
 * pages, which follow it in the channel) and naming files not used (on any of them); resolves
 * with the reply's text and the time of the last write to any of them, or undefined after `timeoutMs`.
 */
export async function finishedReplyTo(
  discord: FakeDiscord,
  channelId: string,
  messageId: string,
  timeoutMs = 30_000,
): Promise<{ content: string; at: number } | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const mine = discord.messagesIn(channelId).filter((m) => m.author.id === discord.botUser.id);
    const first = mine.findIndex((m) => m.reference?.messageId === messageId);
    const pages = first < 0 ? [] : mine.slice(first);
    const ids = new Set(pages.map((m) => m.id));
    const last = discord.writes.filter((w) => w.messageId !== undefined && ids.has(w.messageId)).at(-1);
    if (last && pages.some((m) => /Not used: /.test(m.content)) && !pages.some((m) => carriesStop(m.components ?? [])))
      return { content: pages[0]!.content, at: last.at };
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}
