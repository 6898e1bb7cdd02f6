/**
 * `/export` (issue 41, item 3): the history of the conversation where the command runs (the
 * channel, thread or DM; on Discord's user install, that user's own conversation there) given to
 * the asker alone as two files, `conversation.md` and `conversation.json` (export-format.ts).
 * Only that conversation is read: the one the platform says the asker is in, never another.
 *
 * Privately: where the platform's ephemeral message carries files (Discord), in it; else in the
 * asker's DM with the bot (`CommandContext.sendDirect`: Slack), with an ephemeral line saying so.
 * Each file is kept within the platform's upload limit (`ReplyLimits.maxFileBytes`) and
 * {@link EXPORT_MAX_FILE_BYTES}: the oldest turns are left out first, and the files and the
 * message say so.
 *
 * It calls no service and counts against no chat quota; per user, one export runs at a time (in
 * this process) and at most {@link EXPORT_LIMIT} are made in {@link EXPORT_WINDOW_MS} (a counter
 * in the store, keys.ts `quota('export', …)`, shared by every instance).
 */

import type { Logger } from '../../log.ts';
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { type Sentence, sentence, type Words } from '../i18n/words.ts';
import { storeKeys } from '../keys.ts';
import type { CommandContext, OutgoingMessage } from '../platform.ts';
import { QuotaError } from '../state/quotas.ts';
import { exportTurnOf, fitExport, leftOutNote, placeOf } from './export-format.ts';
import { subjectOf, waitSentence } from './usage.ts';

/** The largest export file, in bytes, whatever the platform takes: the two files stay within Discord's 25 MiB a request. */
export const EXPORT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Exports a user may make in {@link EXPORT_WINDOW_MS}. */
export const EXPORT_LIMIT = 5;

/** The window of {@link EXPORT_LIMIT}, in ms: 10 minutes. */
export const EXPORT_WINDOW_MS = 10 * 60_000;

/** What /export says (catalog sentences, rendered in the asker's words), in one place. */
export const EXPORT_SENTENCES = {
  empty: sentence('commands.export.empty'),
  busy: sentence('commands.export.busy'),
  sentByDm: sentence('commands.export.sent_by_dm'),
  /** The line with the files: the place (in the reader's words already), how many turns, and what was left out. */
  ready(place: string, kept: number, leftOut: number): Sentence {
    const note = leftOutNote(leftOut);
    return sentence('commands.export.ready', { place, count: kept, partial: note ? 'yes' : 'no', note: note ?? '' });
  },
  /** The refusal past {@link EXPORT_LIMIT}. */
  limited(resetInMs: number): Sentence {
    return sentence('commands.export.limited', { limit: String(EXPORT_LIMIT), wait: waitSentence(resetInMs) });
  },
} as const;

/**
 * What the App Home's exports say (Slack's Home tab: platforms/slack/home-export.ts), in one place:
 * catalog sentences, rendered in the Home's user's words. Places come formatted (a channel's
 * mention, a date) by the caller.
 */
export const HOME_EXPORT_SENTENCES = {
  title: sentence('commands.home_export.title'),
  intro: sentence('commands.home_export.intro', { limit: String(EXPORT_LIMIT) }),
  none: sentence('commands.home_export.none'),
  notListed: sentence('commands.home_export.not_listed'),
  button: sentence('commands.home_export.button'),
  /** A conversation in the user's DM with the bot (the Messages tab); `when` it began, when known. */
  direct(when: string | undefined): Sentence {
    return when ? sentence('commands.home_export.direct_since', { when }) : sentence('commands.home_export.direct');
  },
  /** A thread's conversation in a channel. */
  thread(channel: string, when: string): Sentence {
    return sentence('commands.home_export.thread', { channel, when });
  },
  /** A channel's own conversation (slash commands there). */
  channel(channel: string): Sentence {
    return sentence('commands.home_export.channel', { channel });
  },
  /** The line under a place: its turns and its first words. */
  detail(turns: number, start: string): Sentence {
    return start
      ? sentence('commands.home_export.detail_start', { count: turns, start })
      : sentence('commands.home_export.detail', { count: turns });
  },
  /** Said under the list when older conversations are not shown. */
  more(count: number): Sentence {
    return sentence('commands.home_export.more', { count });
  },
  sent: sentence('commands.home_export.sent'),
  notYours: sentence('commands.home_export.not_yours'),
  notOffered: sentence('commands.home_export.not_offered'),
  notReadable: sentence('commands.home_export.not_readable'),
  notChecked: sentence('commands.home_export.not_checked'),
} as const;

/** Users whose export is being made in this process, by quota subject. */
const running = new Set<string>();

/**
 * Counts one export for the user, or refuses it.
 * @returns gives the count back (an export that failed). Never throws.
 * @throws QuotaError past {@link EXPORT_LIMIT} in the window; the store's error.
 */
async function admitExport(core: Core, subject: string): Promise<() => Promise<void>> {
  const key = storeKeys.quota('export', subject);
  const counted = await core.store.increment(key, 1, EXPORT_WINDOW_MS);
  const giveBack = () =>
    core.store.increment(key, -1, EXPORT_WINDOW_MS).then(
      () => undefined,
      () => undefined,
    );
  if (counted.value > EXPORT_LIMIT) {
    await giveBack();
    throw new QuotaError(EXPORT_SENTENCES.limited(counted.resetInMs), counted.resetInMs);
  }
  return giveBack;
}

/**
 * The export message of a conversation in `words` (the asker's): the sentence and the two files,
 * each within `maxBytes`; undefined when nothing of it is stored.
 * @throws the store's error.
 */
export async function exportMessage(
  core: Core,
  conversationId: string,
  maxBytes: number,
  words: Words,
): Promise<OutgoingMessage | undefined> {
  const stored = await core.history.get(conversationId);
  if (!stored.length) return undefined;
  const turns = stored.map(exportTurnOf);
  const fitted = fitExport(turns, { conversationId, at: Date.now(), words }, maxBytes);
  return {
    content: words.say(EXPORT_SENTENCES.ready(placeOf(conversationId, words), fitted.kept, fitted.leftOut)),
    files: [
      { name: 'conversation.md', data: Buffer.from(fitted.markdown), mimeType: 'text/markdown' },
      { name: 'conversation.json', data: Buffer.from(fitted.json), mimeType: 'application/json' },
    ],
  };
}

/** One export to make: whose, of which conversation, how big, where it goes. */
export interface ExportJob {
  /** The asker's quota subject (keys.ts `quotaSubject`): the rate limit and the one-at-a-time rule are theirs. */
  subject: string;
  conversationId: string;
  /** The largest file, in bytes (at most {@link EXPORT_MAX_FILE_BYTES}). */
  maxBytes: number;
  /** The asker's words: the message's and the files'. */
  words: Words;
  log: Logger;
  /** Sends the export message (the sentence and the two files) to the asker alone. */
  send(message: OutgoingMessage): Promise<void>;
}

/**
 * Makes one export and sends it, counted against the asker's {@link EXPORT_LIMIT} (given back when
 * it was not sent), one at a time per asker: what `/export`, Slack's "Export this thread" and the
 * App Home's buttons share.
 * @returns false when nothing of the conversation is stored (nothing was sent; the export counts).
 * @throws QuotaError past {@link EXPORT_LIMIT}; InputError ({@link EXPORT_SENTENCES}.busy) while the
 *   asker's previous export is being made; what `send` throws; the store's error.
 */
export async function sendExport(core: Core, job: ExportJob): Promise<boolean> {
  if (running.has(job.subject)) throw new InputError(EXPORT_SENTENCES.busy);
  running.add(job.subject);
  let giveBack: (() => Promise<void>) | undefined;
  try {
    giveBack = await admitExport(core, job.subject);
    const maxBytes = Math.min(job.maxBytes, EXPORT_MAX_FILE_BYTES);
    const message = await exportMessage(core, job.conversationId, maxBytes, job.words);
    if (!message) return false;
    job.log.info(
      { conversation: job.conversationId, bytes: message.files!.reduce((n, f) => n + f.data.length, 0) },
      'conversation exported',
    );
    await job.send(message);
    return true;
  } catch (error) {
    // An export that was not sent does not count.
    await giveBack?.();
    throw error;
  } finally {
    running.delete(job.subject);
  }
}

/**
 * Runs `/export` for `ctx`'s user in `ctx`'s conversation.
 * @throws QuotaError past {@link EXPORT_LIMIT}; InputError while the user's previous export is being
 *   made; what `sendDirect` throws; the store's error.
 */
export async function exportConversation(ctx: CommandContext, core: Core): Promise<void> {
  // For the asker alone: their words.
  const words = await core.languages.forUser(ctx);
  const sent = await sendExport(core, {
    words,
    subject: subjectOf(ctx),
    conversationId: ctx.conversationId,
    maxBytes: ctx.reply.limits.maxFileBytes ?? EXPORT_MAX_FILE_BYTES,
    log: ctx.log,
    send: async (message) => {
      if (ctx.sendDirect) await ctx.sendDirect(message);
      else await ctx.reply.sendEphemeral(message);
    },
  });
  if (!sent) await ctx.reply.sendEphemeral(words.say(EXPORT_SENTENCES.empty));
  else if (ctx.sendDirect) await ctx.reply.sendEphemeral(words.say(EXPORT_SENTENCES.sentByDm));
}
