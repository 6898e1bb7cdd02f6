/**
 * End-to-end on Discord, mentions (issue 7): the whole bot, started from environment
 * variables by startTestBot, with real discord.js and undici, against FakeDiscord (REST,
 * gateway, signed attachment CDN) and FakeService. Users' messages arrive as MESSAGE_CREATE
 * over the fake gateway; the bot answers as a reply in the channel, streamed by editing its
 * own message, and everything it wrote is read back from the fake's records. One fake pair
 * and one bot serve the file; each test uses its own channel so that histories do not mix.
 * A mention finishes with `command.done` (`command: 'mention'`) in the conversation
 * `discord:<guild id | dm>:<channel id>`.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { DEFAULT_IMAGE_INPUT_LIMITS, MAX_IMAGE_SIDE } from '../../src/core/media/images.ts';
import type {
  FakeChannel,
  FakeDiscord,
  FakeDownload,
  FakeMessage,
  FakeTyping,
  FakeWrite,
  PostUserMessageOptions,
} from '../fakes/discord.ts';
import type { ContentPart, FakeService, RecordedRequest } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E(
  {
    discord: {},
    bot: {
      // The fake lists fake-vision as its model that takes images; without this the chat model is used.
      env: { DEFAULT_VISION_MODEL: 'fake-vision' },
    },
    // A test that failed before its scripted answers were used must not hand them to the next one.
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  },
);

/** The conversation id the bot uses for a channel, thread or DM of the fake. */
function conversationOf(channel: FakeChannel): string {
  return `discord:${channel.guildId ?? 'dm'}:${channel.id}`;
}

/** Resolves with the next `count` mention outcomes in a channel's conversation. */
function mentionsDone(channel: FakeChannel, count = 1): Promise<CommandOutcome[]> {
  const conversationId = conversationOf(channel);
  return testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationId, count);
}

/** Posts a user's message and waits until the bot has finished answering it. */
async function post(
  options: PostUserMessageOptions & { channelId: string },
  channel: FakeChannel,
): Promise<{ message: FakeMessage; outcome: CommandOutcome }> {
  const done = mentionsDone(channel);
  const message = discord.postUserMessage(options);
  const [outcome] = await done;
  return { message, outcome: outcome! };
}

/** `<@bot id> text`. */
const mention = (text: string) => `<@${discord.botUser.id}> ${text}`;

/** The bot's messages in a channel, in creation order. */
function botMessagesIn(channelId: string): FakeMessage[] {
  return discord.messagesIn(channelId).filter((m) => m.author.id === discord.botUser.id);
}

/** The pieces "word1 ", "word2 ", …, the last without a space. */
function wordPieces(count: number, word = 'token'): string[] {
  return Array.from({ length: count }, (_, i) => `${word}${i + 1}${i + 1 < count ? ' ' : ''}`);
}

/** Chat request bodies received from now on (call the returned function to read them). */
function chatRequestsFrom(): () => ReturnType<FakeService['chatRequests']> {
  const before = service.chatRequests().length;
  return () => service.chatRequests().slice(before);
}

/** The `image_url` parts of a message's content. */
function imageParts(
  content: string | ContentPart[] | undefined,
): Array<{ type: 'image_url'; image_url: { url: string } }> {
  if (!Array.isArray(content)) return [];
  return content.filter((p): p is { type: 'image_url'; image_url: { url: string } } => p.type === 'image_url');
}

/** The text of a message's content (the text part of a multi-part content). */
function textOf(content: string | ContentPart[] | undefined): string | undefined {
  if (typeof content === 'string') return content;
  return content?.find((p): p is { type: 'text'; text: string } => p.type === 'text')?.text;
}

/** Decodes a `data:image/(jpeg|png);base64,…` URL with sharp. */
async function decodeDataUrl(
  url: string,
): Promise<{ mime: string; format: string | undefined; width: number; height: number }> {
  const match = /^data:(image\/(?:jpeg|png));base64,([A-Za-z0-9+/]+=*)$/.exec(url);
  expect(match, url.slice(0, 40)).not.toBeNull();
  const meta = await sharp(Buffer.from(match![2]!, 'base64')).metadata();
  return { mime: match![1]!, format: meta.format, width: meta.width ?? 0, height: meta.height ?? 0 };
}

/** A solid PNG of one colour. */
function solidPng(width: number, height: number, background: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
}

const ALLOWED_NONE = { parse: [], replied_user: false };

describe('Discord mentions', () => {
  it('answers a mention with a WebP and an animated GIF: one vision request with both images (≤ 1024 px), a streamed reply to the message that pings no one', async () => {
    const channel = discord.addChannel('mention-images');
    // 2000×1500 WebP, and a 3-frame 1200×800 animated GIF (every frame a different colour).
    const webp = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: '#c83c28' } })
      .webp()
      .toBuffer();
    const frames = await Promise.all(['#1e7828', '#787828', '#dc7828'].map((c) => solidPng(1200, 800, c)));
    const gif = await sharp(frames, { join: { animated: true } })
      .gif({ delay: [100, 100, 100], loop: 0 })
      .toBuffer();
    const gifMeta = await sharp(gif, { animated: true }).metadata();
    expect([gifMeta.format, gifMeta.pages, gifMeta.width, gifMeta.pageHeight]).toEqual(['gif', 3, 1200, 800]);

    const pieces = wordPieces(30);
    const text = pieces.join('');
    // ~30 events 115 ms apart: about 3.5 s of streaming, and the bot edits at most about once a second.
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 115 } });
    const requests = chatRequestsFrom();

    const { message, outcome } = await post(
      {
        channelId: channel.id,
        content: mention('what is this?'),
        attachments: [
          { filename: 'photo.webp', data: webp },
          { filename: 'dance.gif', data: gif },
        ],
      },
      channel,
    );
    expect(outcome.ok).toBe(true);

    // One chat request, to a vision model, whose last user message is the text and the two images.
    expect(requests()).toHaveLength(1);
    const body = requests()[0]!;
    expect(body.model).toBe('fake-vision');
    const last = body.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(textOf(last.content)).toBe('what is this?');
    const parts = imageParts(last.content);
    expect(parts).toHaveLength(2);
    const decoded = await Promise.all(parts.map((p) => decodeDataUrl(p.image_url.url)));
    for (const image of decoded) {
      expect(['image/jpeg', 'image/png']).toContain(image.mime);
      expect(image.format).toBe(image.mime === 'image/png' ? 'png' : 'jpeg');
      expect(Math.max(image.width, image.height)).toBeLessThanOrEqual(MAX_IMAGE_SIDE);
    }
    // In the order attached, scaled down to fit 1024 px with their aspect ratios kept.
    expect([decoded[0]!.width, decoded[0]!.height]).toEqual([1024, 768]);
    expect(decoded[1]!.width).toBe(1024);
    expect(Math.abs(decoded[1]!.height - 683)).toBeLessThanOrEqual(1);
    // Both files were downloaded from the signed CDN, completely.
    for (const attachment of discord.message(message.id)!.attachments) {
      expect(discord.downloads.find((d) => d.attachmentId === attachment.id)).toMatchObject({
        completed: true,
        bytesSent: attachment.byteLength,
      });
    }

    // The answer: one bot message, a reply to the user's message, ending with exactly the streamed text.
    const answers = botMessagesIn(channel.id);
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer.content).toBe(text);
    expect(answer.reference?.messageId).toBe(message.id);
    const create = discord.requests.find(
      (r) => r.method === 'POST' && r.path.endsWith(`/channels/${channel.id}/messages`) && r.status === 200,
    );
    expect(create?.body).toMatchObject({ message_reference: { message_id: message.id } });
    // Written while it streamed: at least two revisions before the final one, each a longer prefix.
    expect(answer.revisions[0]!.via).toBe('create');
    const intermediate = answer.revisions.filter((r) => r.content !== text);
    expect(intermediate.length).toBeGreaterThanOrEqual(2);
    let previous = '';
    for (const revision of intermediate) {
      expect(text.startsWith(revision.content)).toBe(true);
      expect(revision.content.length).toBeGreaterThan(previous.length);
      previous = revision.content;
    }
    // Every write (the create and each edit) asked Discord to ping no one, the replied user included.
    const writes = discord.writes.filter((w) => w.messageId === answer.id);
    expect(writes.filter((w) => w.kind === 'create')).toHaveLength(1);
    expect(writes.filter((w) => w.kind === 'edit').length).toBeGreaterThanOrEqual(2);
    for (const write of writes) {
      expect(write.allowedMentions, `${write.kind} #${write.seq}`).toEqual(ALLOWED_NONE);
      expect(write.pinged).toEqual({ everyone: false, users: [], roles: [] });
    }
  });

  it('sends the image of the message a reply refers to, when the reply mentions the bot', async () => {
    const channel = discord.addChannel('mention-reply');
    const png = await solidPng(640, 480, '#2050d0');
    service.enqueue('chat', { stream: { pieces: ['A blue rectangle.'] } });
    service.enqueue('chat', { stream: { pieces: ['It is blue.'] } });
    const requests = chatRequestsFrom();

    const first = await post(
      { channelId: channel.id, content: mention('look at this'), attachments: [{ filename: 'shape.png', data: png }] },
      channel,
    );
    expect(first.outcome.ok).toBe(true);
    // The reply has no file of its own, and does not ping the replied (human) author.
    const second = await post(
      {
        channelId: channel.id,
        content: mention('what colour was it?'),
        replyTo: first.message.id,
        pingRepliedAuthor: false,
      },
      channel,
    );
    expect(second.outcome.ok).toBe(true);
    expect(second.message.attachments).toEqual([]);

    expect(requests()).toHaveLength(2);
    const last = requests()[1]!.messages.at(-1)!;
    expect(textOf(last.content)).toBe('what colour was it?');
    const parts = imageParts(last.content);
    expect(parts).toHaveLength(1);
    const image = await decodeDataUrl(parts[0]!.image_url.url);
    expect([image.width, image.height]).toEqual([640, 480]);
    // The earlier exchange is in the history too (its image only as a note).
    expect(requests()[1]!.messages.slice(0, -1)).toEqual([
      { role: 'user', content: 'look at this\n[1 image: shape.png]' },
      { role: 'assistant', content: 'A blue rectangle.' },
    ]);
    const answers = botMessagesIn(channel.id);
    expect(answers.map((m) => m.content)).toEqual(['A blue rectangle.', 'It is blue.']);
    expect(answers[1]!.reference?.messageId).toBe(second.message.id);
  });

  it('answers a question sent with a PDF and a 12,000 × 12,000 PNG, naming both files in the warning line under the answer', async () => {
    const channel = discord.addChannel('mention-unusable');
    const huge = await sharp({ create: { width: 12_000, height: 12_000, channels: 3, background: '#3366cc' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expect(12_000 * 12_000).toBeGreaterThan(DEFAULT_IMAGE_INPUT_LIMITS.maxPixels);
    expect(huge.length).toBeLessThan(DEFAULT_IMAGE_INPUT_LIMITS.maxBytes);
    const pdf = Buffer.from(
      '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
      'latin1',
    );
    service.enqueue('chat', { stream: { pieces: ['Paris is the capital of France.'] } });
    const requests = chatRequestsFrom();

    const { outcome } = await post(
      {
        channelId: channel.id,
        content: mention('what is the capital of France?'),
        attachments: [
          { filename: 'report.pdf', contentType: 'application/pdf', data: pdf },
          { filename: 'poster.png', data: huge },
        ],
      },
      channel,
    );
    expect(outcome.ok).toBe(true);

    // The question still went to the service, as text alone.
    expect(requests()).toHaveLength(1);
    expect(requests()[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'what is the capital of France?' });
    const answers = botMessagesIn(channel.id);
    expect(answers).toHaveLength(1);
    const [answerText, ...rest] = answers[0]!.content.split('\n\n');
    expect(answerText).toBe('Paris is the capital of France.');
    // One warning line that names both files and why.
    expect(rest).toHaveLength(1);
    const warning = rest[0]!;
    expect(warning.split('\n')).toHaveLength(1);
    expect(warning).toContain('⚠️');
    // The PDF is read as a file (files as context), and this one has no page tree pdf.js can open.
    expect(warning).toMatch(/report\.pdf \(could not be read as a PDF/);
    expect(warning).toMatch(/poster\.png \(too large to process \(12000×12000 px/);
  });

  it('refuses a 50 MB image by its declared size without downloading it, and cuts off one whose size lies, without the bot holding 50 MB', async () => {
    const channel = discord.addChannel('mention-50mb');
    discord.setMessageBudget(channel.id, { limit: 50, windowMs: 5_000 });
    const requests = chatRequestsFrom();
    const maxMb = (DEFAULT_IMAGE_INPUT_LIMITS.maxBytes / 1024 / 1024).toFixed(1);

    // What the test process (the bot runs in it) holds at most while the bot handles a message:
    // the live heap and buffers after a full collection, sampled. Not RSS: RSS also counts the
    // chunks already read and dropped that the runtime has not collected yet, which varies with
    // the runtime's collector (on this machine 24 to 52 MB on Node 20, 40 to 47 MB on Node 24,
    // for the same ~21 MB held), so a bound on it measures the collector rather than the bot.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
      const base = held();
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, held())), 25);
      try {
        const result = await work();
        return { result, growth: peak - base };
      } finally {
        clearInterval(sampler);
      }
    }

    // 1. Honest size: refused from the message's `size` alone, before any byte is fetched.
    const honest = await peakGrowth(() =>
      post(
        {
          channelId: channel.id,
          content: mention(''),
          attachments: [{ filename: 'scan.png', stream: { bytes: 50_000_000 } }],
        },
        channel,
      ),
    );
    expect(honest.result.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    const honestId = honest.result.message.attachments[0]!.id;
    expect(discord.downloads.filter((d) => d.attachmentId === honestId)).toEqual([]);
    const firstRefusal = botMessagesIn(channel.id).at(-1)!;
    expect(firstRefusal.reference?.messageId).toBe(honest.result.message.id);
    expect(firstRefusal.content).toContain(`scan.png (too large (47.7 MB; images up to ${maxMb} MB are read))`);
    expect(honest.growth).toBeLessThan(4 * 1024 * 1024);

    // 2. A size that lies (2 MB advertised, 50 MB served without Content-Length): the download is
    //    cut off once it passes the cap.
    const downloaded = new Promise<FakeDownload>((resolve) => {
      const onDownload = (d: FakeDownload) => {
        if (d.filename !== 'liar.png') return;
        discord.events.off('download', onDownload);
        resolve(d);
      };
      discord.events.on('download', onDownload);
    });
    const liar = await peakGrowth(async () => {
      const posted = await post(
        {
          channelId: channel.id,
          content: mention(''),
          attachments: [
            { filename: 'liar.png', stream: { bytes: 50_000_000 }, declaredSize: 2_000_000, chunked: true },
          ],
        },
        channel,
      );
      return { ...posted, download: await downloaded };
    });
    expect(liar.result.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    const download = liar.result.download;
    expect(download.attachmentId).toBe(liar.result.message.attachments[0]!.id);
    expect(download.completed).toBe(false);
    expect(download.aborted).toBe(true);
    expect(download.bytesSent).toBeGreaterThan(DEFAULT_IMAGE_INPUT_LIMITS.maxBytes);
    // What was in flight (socket buffers) when the bot gave up comes on top of the 20 MiB cap.
    expect(download.bytesSent).toBeLessThan(35_000_000);
    const secondRefusal = botMessagesIn(channel.id).at(-1)!;
    expect(secondRefusal.reference?.messageId).toBe(liar.result.message.id);
    expect(secondRefusal.content).toContain(
      `liar.png (too large (over ${maxMb} MB; files up to ${maxMb} MB are read))`,
    );
    // The bot held up to the 20 MiB cap for a moment (21 to 23 MB measured, on Node 20 and 24
    // alike), with what was in flight, never the 50 MB file (which, buffered and concatenated,
    // would be 50 to 100 MB).
    expect(liar.growth).toBeLessThan(DEFAULT_IMAGE_INPUT_LIMITS.maxBytes + 8 * 1024 * 1024);

    // Nothing was asked of the service: there was nothing to answer.
    expect(requests()).toEqual([]);
    expect(botMessagesIn(channel.id)).toHaveLength(2);
    // The refusals, written outside the streaming path, ping no one either.
    const writes = discord.writes.filter((w) => w.channelId === channel.id);
    expect(writes).toHaveLength(2);
    for (const write of writes) expect(write.allowedMentions).toEqual(ALLOWED_NONE);
  });

  it("ignores another bot's message that mentions it (only the person's mention after it is answered)", async () => {
    const channel = discord.addChannel('mention-bots');
    service.enqueue('chat', { stream: { pieces: ['Hello, person.'] } });
    const requests = chatRequestsFrom();
    const serviceSeen: RecordedRequest[] = [];
    const onRequest = (r: RecordedRequest) => serviceSeen.push(r);
    service.events.on('request', onRequest);
    try {
      const fromBot = discord.postUserMessage({
        channelId: channel.id,
        content: mention('please answer me, fellow bot'),
        author: { username: 'otherbot', bot: true },
      });
      expect(fromBot.author.bot).toBe(true);
      // MESSAGE_CREATEs are handled in order: once the person's mention is answered, the bot's was seen.
      const person = await post({ channelId: channel.id, content: mention('hello?') }, channel);
      expect(person.outcome.ok).toBe(true);

      expect(requests()).toHaveLength(1);
      expect(requests()[0]!.messages).toEqual([{ role: 'user', content: 'hello?' }]);
      expect(serviceSeen.filter((r) => r.route === 'chat')).toHaveLength(1);
      const answers = botMessagesIn(channel.id);
      expect(answers).toHaveLength(1);
      expect(answers[0]!.content).toBe('Hello, person.');
      expect(answers[0]!.reference?.messageId).toBe(person.message.id);
      expect(discord.typing.filter((t) => t.channelId === channel.id).length).toBeGreaterThanOrEqual(1);
      // The other bot's message left no trace in the conversation.
      expect(await testBot.bot.core.history.asChatMessages(conversationOf(channel))).toEqual([
        { role: 'user', content: 'hello?' },
        { role: 'assistant', content: 'Hello, person.' },
      ]);
    } finally {
      service.events.off('request', onRequest);
    }
  });

  it("answers a mention in a thread inside the thread, in the thread's own conversation", async () => {
    const parent = discord.addChannel('mention-thread-parent');
    const thread = discord.addThread(parent.id, 'a thread');
    service.enqueue('chat', { stream: { pieces: ['In the thread.'] } });
    const requests = chatRequestsFrom();

    const { message, outcome } = await post({ channelId: thread.id, content: mention('where am I?') }, thread);
    expect(outcome).toMatchObject({ ok: true, conversationId: `discord:${discord.guildId}:${thread.id}` });
    expect(requests()).toHaveLength(1);
    expect(requests()[0]!.messages).toEqual([{ role: 'user', content: 'where am I?' }]);
    const answers = botMessagesIn(thread.id);
    expect(answers.map((m) => m.content)).toEqual(['In the thread.']);
    expect(answers[0]!.reference?.messageId).toBe(message.id);
    expect(botMessagesIn(parent.id)).toEqual([]);
  });

  it('answers a DM that does not mention it, as a reply in the DM', async () => {
    const dm = discord.openDm({ username: 'dm-user', global_name: 'DM User' });
    service.enqueue('chat', { stream: { pieces: ['Hi ', 'there!'] } });
    const requests = chatRequestsFrom();

    const { message, outcome } = await post({ channelId: dm.id, content: 'hello, are you around?' }, dm);
    expect(outcome).toMatchObject({ ok: true, conversationId: `discord:dm:${dm.id}` });
    expect(message.content).not.toContain(discord.botUser.id);

    expect(requests()).toHaveLength(1);
    expect(requests()[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'hello, are you around?' });
    const answers = botMessagesIn(dm.id);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.content).toBe('Hi there!');
    expect(answers[0]!.reference?.messageId).toBe(message.id);
    for (const write of discord.writes.filter((w) => w.channelId === dm.id))
      expect(write.allowedMentions).toEqual(ALLOWED_NONE);
  });

  it("sends a mention's exchange with the next /chat in that channel", async () => {
    const channel = discord.addChannel('mention-then-chat');
    service.enqueue('chat', { stream: { pieces: ['The square is red.'] } });
    service.enqueue('chat', { stream: { pieces: ['Red.'] } });
    const requests = chatRequestsFrom();

    const { outcome } = await post({ channelId: channel.id, content: mention('what colour is the square?') }, channel);
    expect(outcome.ok).toBe(true);

    const chatDone = testBot.outcomes((o) => o.command === 'chat' && o.conversationId === conversationOf(channel));
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'And in one word?' },
      channelId: channel.id,
    });
    const [chatOutcome] = await chatDone;
    expect(chatOutcome!.ok).toBe(true);
    expect(interaction.original!.content).toBe('Red.');

    expect(requests()).toHaveLength(2);
    expect(requests()[1]!.messages).toEqual([
      { role: 'user', content: 'what colour is the square?' },
      { role: 'assistant', content: 'The square is red.' },
      { role: 'user', content: 'And in one word?' },
    ]);
  });

  it('shows the typing indicator in the channel before its first message of the answer', async () => {
    const channel = discord.addChannel('mention-typing');
    // Headers held back 1 s, then a short stream: the answer is awaited for a while.
    service.enqueue('chat', { stream: { pieces: ['Thinking done.'] }, delayHeadersMs: 1_000 });
    const order: string[] = [];
    const onTyping = (t: FakeTyping) => {
      if (t.channelId === channel.id) order.push('typing');
    };
    const onWrite = (w: FakeWrite) => {
      if (w.channelId === channel.id) order.push(`write:${w.kind}`);
    };
    discord.events.on('typing', onTyping);
    discord.events.on('write', onWrite);
    try {
      const { outcome } = await post({ channelId: channel.id, content: mention('take your time') }, channel);
      expect(outcome.ok).toBe(true);
    } finally {
      discord.events.off('typing', onTyping);
      discord.events.off('write', onWrite);
    }
    expect(order[0]).toBe('typing');
    expect(order).toContain('write:create');
    const typing = discord.typing.filter((t) => t.channelId === channel.id);
    expect(typing.length).toBeGreaterThanOrEqual(1);
    const first = botMessagesIn(channel.id)[0]!;
    expect(first.content).toBe('Thinking done.');
    expect(typing[0]!.at).toBeLessThanOrEqual(first.createdAt);
  });
});
