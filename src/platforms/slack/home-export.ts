/**
 * Exports from the App Home (issue 41, item 3; Slack's Home tab, home.ts): the user's recent
 * conversations with the bot, each with an "Export" button that sends that conversation as
 * `/export` does (features/export.ts `sendExport`: conversation.md and conversation.json, in the
 * user's DM with the bot, within the upload limit, counted in the same 5 exports per 10 minutes).
 *
 * What is offered: the conversations of the user's index (state/user-index.ts: those where a turn
 * of theirs is stored, the one they spoke in last first), of this workspace, at most
 * {@link MAX_EXAMINED} looked at and {@link MAX_HOME_EXPORTS} shown: each with stored turns and in
 * a conversation the user may read now, checked with conversations.members
 * (viewed-channel.ts `membership`: one call per channel, the user's DM with the bot, which
 * `app_home_opened` names, needing none). A channel the user left is not offered.
 *
 * A press is checked when it runs, against the current state, never against the view it came
 * from: the button's `action_id` (`home-export:<owner>:<channel>[:<thread_ts>]`) names the Home's
 * owner, who alone may press it; the conversation must still be in the presser's index, and the
 * presser a member of its channel now. A Home tab's press carries no `response_url` (nothing
 * ephemeral can answer it): the result, sent or refused, is told by publishing the presser's Home
 * again with a line at its top, where they are looking; the files themselves arrive in the DM.
 */

import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import {
  EXPORT_MAX_FILE_BYTES,
  EXPORT_SENTENCES,
  HOME_EXPORT_SENTENCES,
  sendExport,
} from '../../core/features/export.ts';
import { exportTurnOf } from '../../core/features/export-format.ts';
import type { InvocationLocale } from '../../core/i18n/languages.ts';
import { english, type Sentence, type Words } from '../../core/i18n/words.ts';
import {
  buttonId,
  channelKey,
  conversationKey,
  parseConversationKey,
  quotaSubject,
  slackWorkspace,
} from '../../core/keys.ts';
import { RESTARTING_KEY, type RunningCommands } from '../../core/running.ts';
import type { Logger } from '../../log.ts';
import { sendDirect } from './direct.ts';
import { explainSlackError } from './errors.ts';
import { escapeSlackText } from './text.ts';
import { membership } from './viewed-channel.ts';

/** The command part of the Home's export buttons' `action_id` (keys.ts `buttonId`). */
export const HOME_EXPORT_BUTTON = 'home-export';
/** Conversations offered on the Home tab, at most. */
export const MAX_HOME_EXPORTS = 10;
/** Conversations of the user's index looked at, at most (some are empty or not readable). */
export const MAX_EXAMINED = 20;
/** Characters of a conversation's first words shown. */
const START_CHARS = 80;

/** A Slack id as it may be written into mrkdwn and a button id. */
const SLACK_ID = /^[A-Z0-9]+$/;
/** A `thread_ts`. */
const THREAD_TS = /^\d{1,12}\.\d{1,9}$/;

/** Where a press or a listing happens: the workspace, the user, their DM with the bot when known. */
export interface HomeUser {
  team: string;
  user: string;
  /** The user's DM with the bot (`app_home_opened`'s `channel`), readable without asking Slack. */
  dm?: string | undefined;
}

/**
 * Slack's date formatting of a `thread_ts` (docs.slack.dev "Formatting text: dates": Slack fills
 * `{date_short_pretty}` and `{time}` in the reader's own settings), with an ISO fallback; the
 * words around the tokens in `words`.
 */
function dateOf(threadTs: string, words: Words): string {
  const seconds = Math.floor(Number(threadTs));
  return `<!date^${seconds}^${words.t('slack.home.export_date', { date: '{date_short_pretty}', time: '{time}' })}|${new Date(seconds * 1000).toISOString()}>`;
}

/** The conversation of a listed key, when it is this workspace's and its ids are Slack's. */
function slackRefOf(conversationId: string, team: string) {
  const ref = parseConversationKey(conversationId);
  if (ref?.platform !== 'slack' || ref.team !== team || !SLACK_ID.test(ref.channel)) return undefined;
  if (ref.thread !== undefined && !THREAD_TS.test(ref.thread)) return undefined;
  return ref;
}

/** The place of a conversation in words (HOME_EXPORT_SENTENCES). */
function placeText(channel: string, thread: string | undefined, words: Words): string {
  if (channel.startsWith('D')) return words.say(HOME_EXPORT_SENTENCES.direct(thread && dateOf(thread, words)));
  return words.say(
    thread
      ? HOME_EXPORT_SENTENCES.thread(`<#${channel}>`, dateOf(thread, words))
      : HOME_EXPORT_SENTENCES.channel(`<#${channel}>`),
  );
}

/** One conversation of the user's index, read back. */
interface Listed {
  conversationId: string;
  channel: string;
  thread: string | undefined;
}

/** One conversation offered: its button and what its section says. */
interface Offer extends Listed {
  actionId: string;
  turns: number;
  /** Its first question's first words (at most {@link START_CHARS}), or ''. */
  start: string;
}

/**
 * Whether `at.user` may read a channel now, each channel asked of Slack once per listing; the
 * user's DM with the bot without asking. A check Slack refuses or that fails is a no (logged).
 */
function readChecker(client: WebClient, at: HomeUser, log: Logger): (channel: string) => Promise<boolean> {
  const checked = new Map<string, Promise<boolean>>();
  return (channel) => {
    if (channel === at.dm) return Promise.resolve(true);
    let check = checked.get(channel);
    if (!check) {
      check = membership(client, channel, at.user).then(
        (found) => found === 'member',
        (error: unknown) => {
          const err = error instanceof Error ? error.message : String(error);
          log.warn({ err, channel }, 'home tab: membership not checked');
          return false;
        },
      );
      checked.set(channel, check);
    }
    return check;
  };
}

/** The offer of one listed conversation: undefined when it is empty, not readable, or its ids too long for a button id. */
async function offerOf(
  core: Core,
  user: string,
  c: Listed,
  mayRead: (channel: string) => Promise<boolean>,
): Promise<Offer | undefined> {
  const [readable, turns] = await Promise.all([mayRead(c.channel), core.history.get(c.conversationId).catch(() => [])]);
  if (!readable || !turns.length) return undefined;
  let actionId: string;
  try {
    actionId = buttonId(HOME_EXPORT_BUTTON, user, c.channel, ...(c.thread ? [c.thread] : []));
  } catch {
    return undefined; // Not offered: /export there, or "Export this thread", gives it.
  }
  const text = turns
    .map(exportTurnOf)
    .find((t) => t.role === 'user' && t.text.trim())
    ?.text.trim();
  const start = (text?.split('\n')[0] ?? '').slice(0, START_CHARS);
  return { ...c, actionId, turns: turns.length, start: start && `${start}${text!.length > start.length ? '…' : ''}` };
}

/** An offer's section: the place in bold, its turns and first words, the Export button. */
function offerBlock(o: Offer, words: Words): KnownBlock {
  const detail = escapeSlackText(words.say(HOME_EXPORT_SENTENCES.detail(o.turns, o.start)));
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: `*${placeText(o.channel, o.thread, words)}*\n${detail}` },
    accessory: {
      type: 'button',
      text: { type: 'plain_text', text: words.say(HOME_EXPORT_SENTENCES.button) },
      action_id: o.actionId,
    },
  };
}

/**
 * The Home's export section for `at.user`: a header, a line saying what it does, then one section
 * per offered conversation with its Export button (see the file's comment), in `words` (the
 * Home's owner's). Never throws: an index that cannot be read is said in a line; a conversation
 * that cannot be checked is left out (logged).
 */
export async function homeExportBlocks(
  client: WebClient,
  core: Core,
  at: HomeUser,
  log: Logger,
  words: Words = english,
): Promise<KnownBlock[]> {
  const line = (said: Sentence): KnownBlock => ({
    type: 'section',
    text: { type: 'mrkdwn', text: escapeSlackText(words.say(said)) },
  });
  const head: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: words.say(HOME_EXPORT_SENTENCES.title) } },
    line(HOME_EXPORT_SENTENCES.intro),
  ];
  let recent: Array<{ conversationId: string }>;
  try {
    recent = await core.userIndex.recent(slackWorkspace(at.team), at.user);
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'home tab: conversations not listed');
    return [...head, line(HOME_EXPORT_SENTENCES.notListed)];
  }
  const listed = recent.flatMap(({ conversationId }): Listed[] => {
    const ref = slackRefOf(conversationId, at.team);
    return ref ? [{ conversationId, channel: ref.channel, thread: ref.thread }] : [];
  });
  const examined = listed.slice(0, MAX_EXAMINED);
  const mayRead = readChecker(client, at, log);
  const offered = (await Promise.all(examined.map((c) => offerOf(core, at.user, c, mayRead)))).filter(
    (o): o is Offer => o !== undefined,
  );
  const shown = offered.slice(0, MAX_HOME_EXPORTS);
  if (!shown.length) return [...head, line(HOME_EXPORT_SENTENCES.none)];
  // Not shown: those never looked at, and those past the bound.
  const more = listed.length - examined.length + offered.length - shown.length;
  return [
    ...head,
    ...shown.map((o) => offerBlock(o, words)),
    ...(more > 0 ? [line(HOME_EXPORT_SENTENCES.more(more))] : []),
  ];
}

/**
 * Checks a press against the current state (see the file's comment) and sends the export.
 * @returns the line to show at the top of the presser's Home.
 * @throws InputError with the refusal's sentence; what `sendExport` throws.
 */
async function exportPressed(
  client: WebClient,
  core: Core,
  press: { team: string; user: string; args: readonly string[]; log: Logger; locale?: InvocationLocale | undefined },
): Promise<string> {
  const [owner, channel = '', thread, ...rest] = press.args;
  if (owner !== press.user) throw new InputError(HOME_EXPORT_SENTENCES.notYours);
  const conversationId = conversationKey({ platform: 'slack', team: press.team, channel, thread });
  if (rest.length || !slackRefOf(conversationId, press.team)) throw new InputError(HOME_EXPORT_SENTENCES.notOffered);
  const recent = await core.userIndex.recent(slackWorkspace(press.team), press.user);
  if (!recent.some((c) => c.conversationId === conversationId)) throw new InputError(HOME_EXPORT_SENTENCES.notOffered);
  const found = await membership(client, channel, press.user).catch((error: unknown) => {
    press.log.warn({ err: error instanceof Error ? error.message : String(error), channel }, 'membership not checked');
    return 'not checked' as const;
  });
  if (found === 'not a member') throw new InputError(HOME_EXPORT_SENTENCES.notReadable);
  if (found !== 'member') throw new InputError(HOME_EXPORT_SENTENCES.notChecked);
  // The export (its files' words) and the line shown are the presser's alone: in their language.
  const words = await core.languages.forUser({ locale: press.locale });
  const sent = await sendExport(core, {
    subject: quotaSubject('slack', press.user, channelKey({ platform: 'slack', team: press.team, channel })),
    conversationId,
    maxBytes: EXPORT_MAX_FILE_BYTES,
    words,
    log: press.log,
    send: (message) => sendDirect(client, press.user, message),
  });
  return words.say(sent ? HOME_EXPORT_SENTENCES.sent : EXPORT_SENTENCES.empty);
}

/**
 * Handles a press of a Home export button (acked already): runs it as the invocation `export`
 * (runInvocation: refusals told as they are, faults with a reference, `command.done` emitted),
 * then `republish` shows the presser their Home with the result at its top.
 * @param args the button id's arguments (keys.ts `parseButtonId`).
 * @param republish publishes the presser's Home with a line at its top (home.ts `publishHome`); never throws.
 * Never throws.
 */
export async function pressHomeExport(
  client: WebClient,
  deps: { core: Core; running: RunningCommands },
  press: {
    team: string;
    user: string;
    args: readonly string[];
    ref: string;
    log: Logger;
    /** The presser's language (users.ts `SlackDirectory.locale`): the result is theirs alone to read. */
    locale?: InvocationLocale | undefined;
  },
  republish: (notice: string) => Promise<void>,
): Promise<void> {
  if (deps.running.draining) {
    await republish((await deps.core.languages.forUser(press)).t(RESTARTING_KEY));
    return;
  }
  const [, channel = 'unknown', thread] = press.args;
  let notice: string | undefined;
  await deps.running.run(
    async () => {
      await runInvocation(
        'export',
        {
          platform: 'slack',
          conversationId: conversationKey({ platform: 'slack', team: press.team, channel, thread }),
          log: press.log,
          ref: press.ref,
          locale: press.locale,
          reply: {
            sendEphemeral: async (message) => {
              notice = typeof message === 'string' ? message : message.content;
            },
            explain: explainSlackError,
          },
        },
        deps.core,
        async () => {
          notice = await exportPressed(client, deps.core, press);
        },
      );
      if (notice) await republish(notice);
    },
    (error) => press.log.error({ err: error }, 'home export failed'),
  );
}
