/**
 * The mention feature: a user mentions the bot (or writes to it in a DM), with or without
 * images and files; the answer streams in as a reply that has looked at the images (§4.1 image
 * input) and read the files, and joins the conversation's history, exactly like /chat. Platform adapters decide when a
 * message is addressed to the bot and turn it into a {@link MentionRequest}; the conversation
 * around it that the platform holds (Discord: the reply chain; Slack: the thread the bot is
 * called into) comes as its {@link MentionContext}.
 */

import type { Core } from '../core.ts';
import { type Note, noteText } from '../delivery/answer-stream.ts';
import { InputError } from '../errors.ts';
import { type Sentence, sentence, type Words } from '../i18n/words.ts';
import { collectImages, looksLikeImage, skippedLine } from '../media/attachments.ts';
import { MAX_LISTED_FILES, shortName } from '../media/file-lines.ts';
import { collectFiles, cutLine, fileLimits } from '../media/files.ts';
import type { PreparedImage } from '../media/images.ts';
import type { Attachment, CommandContext } from '../platform.ts';
import type { ChatMessage, ContentPart } from '../service/schemas.ts';
import { chat } from './chat.ts';
import { startDeferral } from './deferral.ts';
import { imageRefsOf } from './kept-request.ts';
import { subjectOf } from './usage.ts';

/** One earlier message of the conversation around a mention, as an adapter read it. */
export interface ContextTurn {
  /** `assistant`: a message of the bot's own; `user`: anyone else's. */
  role: 'user' | 'assistant';
  /** The author's display name; a user turn is sent as `<author>: <text>` (as llmcord does). */
  author?: string;
  /** The message text, mentions shown as names. */
  text: string;
  /** The message's files; the images among a user turn's are sent with it (an assistant turn's are not read). */
  attachments?: readonly Attachment[];
}

/**
 * The conversation around a mention that the platform holds: Discord's reply chain, a Slack
 * thread the bot has no history for. Adapters keep it within REPLY_CHAIN_MAX messages and
 * about HISTORY_TOKEN_BUDGET tokens (core/tokens.ts estimates); chat trims it to the budget.
 */
export interface MentionContext {
  /** Oldest first; the question itself is not among them. */
  turns: readonly ContextTurn[];
  /** True: sent instead of the conversation's stored history (no turn twice); false: after it. */
  replacesHistory: boolean;
  /** Messages that could not be read: their authors (each named once in the line under the answer) and why. */
  skipped?: { authors: readonly string[]; why: string };
}

/** A message addressed to the bot, as an adapter hands it over. */
export interface MentionRequest {
  /** The message text, the bot's own mention removed and other mentions shown as names. */
  text: string;
  /** The message's own files first, then those of the message it replies to (one level) when that is not in `context`. */
  attachments: readonly Attachment[];
  /** Sentences from the adapter to show under the answer (e.g. a replied-to message it could not read). */
  notices?: readonly Note[];
  /** The conversation around the message, when the platform holds one the bot should read. */
  context?: MentionContext;
  /** Where the message is (keys.ts `messageRef`): an edit of it within EDIT_REANSWER_MINUTES re-answers it. */
  ref?: string;
  /** The message action answered (its id), when one is (the answer's feedback record names it). */
  command?: string;
}

/** The instruction sent when a message holds images and no text. */
export const DEFAULT_IMAGE_PROMPT = 'Describe this image.';
/** The same for several images. */
export const DEFAULT_IMAGES_PROMPT = 'Describe these images.';
/** The instruction sent when a message holds files (text, PDFs) and no text. */
export const DEFAULT_FILES_PROMPT = 'Summarize the attached files.';

/** The instruction sent without the user's text, by what was attached; '' when nothing usable was. */
function defaultPrompt(images: number, files: number): string {
  if (files > 0) return DEFAULT_FILES_PROMPT;
  return images > 1 ? DEFAULT_IMAGES_PROMPT : images === 1 ? DEFAULT_IMAGE_PROMPT : '';
}

/**
 * Answers a mention or DM in `ctx`'s conversation: downloads and prepares the images (capped,
 * at most `core.inputImages.maxCount` in all: the message's own first, then the context's,
 * newest first) and reads the message's other files as context (text files and PDFs:
 * media/files.ts, each cut to `MAX_FILE_CHARS`, all within the history budget), then chats with
 * the vision model when there are images, the context's turns before the question. Files not
 * used or read in part, and messages not read, are named in lines under the answer.
 * @throws InputError when there is neither text nor a usable file (the sentence says why);
 *   otherwise as {@link chat}.
 */
export async function answerMention(ctx: CommandContext, core: Core, request: MentionRequest): Promise<void> {
  // Under way while the files download; the answer's first text waits for it (chat's deferral).
  void startDeferral(ctx);
  const text = request.text.trim();
  const turns = request.context?.turns ?? [];
  // Only the images of the context's user turns are read (their other files are not).
  const turnImages = [...turns]
    .reverse()
    .flatMap((turn) => (turn.role === 'user' ? (turn.attachments ?? []).filter(looksLikeImage) : []));
  const work = { images: core.images, pdfs: core.pdfs, key: subjectOf(ctx), signal: ctx.signal, log: ctx.log };
  const [collected, files] = await Promise.all([
    collectImages([...request.attachments.filter(looksLikeImage), ...turnImages], core.inputImages, work),
    collectFiles(
      request.attachments.filter((a) => !looksLikeImage(a)),
      fileLimits(core.limits, core.inputImages.maxBytes, text),
      work,
    ),
  ]);
  const imagesOf = (list: readonly Attachment[]) =>
    collected.images.filter((_, i) => list.includes(collected.sources[i]!));
  const images = imagesOf(request.attachments);
  const notices = new Map([...collected.notices, ...files.notices].map((n) => [n.key, n]));
  const notes: Note[] = [...(request.notices ?? []), ...notices.values()];
  const skipped = request.context?.skipped;
  // The answer's public lines (notes, buttons) are in the place's words.
  const words = await core.languages.forPlace(ctx);
  if (skipped?.authors.length) notes.push(unreadLine(skipped.authors, skipped.why, words));
  for (const line of [skippedLine([...collected.skipped, ...files.skipped]), cutLine(files.cut)])
    if (line) notes.push(line);
  const prompt = text || defaultPrompt(images.length, files.files.length);
  if (!prompt) {
    if (!notes.length) throw new InputError('answers.mention.nothing');
    // Why nothing could be used, told to the user alone: in their words.
    const theirs = await core.languages.forUser(ctx);
    throw new InputError('answers.mention.unusable', { lines: notes.map((n) => noteText(n, theirs)).join('\n') });
  }
  const context = request.context && {
    messages: contextMessages(turns, imagesOf),
    replacesHistory: request.context.replacesHistory,
  };
  await chat(ctx, core, {
    prompt,
    images,
    imageRefs: imageRefsOf(collected.images, collected.sources),
    files: files.files,
    notes,
    words,
    mention: { text, ref: request.ref },
    ...(request.command ? { command: request.command } : {}),
    ...(context ? { context } : {}),
    ...(context && collected.images.length > images.length ? { vision: true } : {}),
  });
}

/**
 * The line naming the authors of messages not read (each once, at most {@link MAX_LISTED_FILES}
 * named, the rest counted), e.g. `Not read: 2 messages, by bob and carol (why).`: the names
 * listed as `words`' locale lists them (Intl.ListFormat), the line a Sentence in the same words.
 */
function unreadLine(authors: readonly string[], why: string, words: Words): Sentence {
  const all = [...new Set(authors)].map((name) => shortName(name));
  const others = all.length - MAX_LISTED_FILES;
  const names =
    others > 0 ? [...all.slice(0, MAX_LISTED_FILES), words.t('answers.mention.others', { count: others })] : all;
  const list = new Intl.ListFormat(words.locale, { type: 'conjunction' }).format(names);
  return sentence('answers.mention.not_read', { count: authors.length, authors: list, why });
}

/**
 * The context's turns as chat messages, oldest first: `assistant` with the bot's text; `user`
 * as `<author>: <text>`, with its images as `image_url` parts. A turn with neither text nor a
 * usable image is left out.
 */
function contextMessages(
  turns: readonly ContextTurn[],
  imagesOf: (files: readonly Attachment[]) => PreparedImage[],
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const turn of turns) {
    const text = turn.text.trim();
    if (turn.role === 'assistant') {
      if (text) messages.push({ role: 'assistant', content: text });
      continue;
    }
    const images = imagesOf(turn.attachments ?? []);
    if (!text && images.length === 0) continue;
    const said = turn.author ? `${turn.author}: ${text}`.trimEnd() : text;
    const content: string | ContentPart[] = images.length
      ? [
          { type: 'text', text: said },
          ...images.map((i): ContentPart => ({ type: 'image_url', image_url: { url: i.url } })),
        ]
      : said;
    messages.push({ role: 'user', content });
  }
  return messages;
}
