/**
 * Message actions on Slack (core/message-action.ts): message shortcuts (More actions → <name>,
 * `message_action` payloads, declared in the manifest from the same definitions as Discord's
 * message commands) and the modal of an action that asks a question first.
 *
 * - An action without a question runs on the shortcut's message at once (acked already).
 * - An action with a question opens a modal (`views.open` with the shortcut's `trigger_id`, which
 *   Slack honours for 3 s and once: so it is the first call after the ack) whose
 *   `private_metadata` carries where the message is (`{ c: channel, ts, th?: thread_ts }`); its
 *   `view_submission` (app.view) is acked at once, closing the modal, and the action runs with the
 *   question on the message read again (`conversations.replies`: one message, with the history
 *   scope of its conversation), so that any instance can take the submission.
 *
 * The answer goes where a mention's would: in the message's thread (its `thread_ts`, or its own
 * ts for a top-level message), streamed natively there, the exchange joining that thread's
 * conversation. What only the user may read goes to them alone: the shortcut's `response_url`,
 * or chat.postEphemeral in the thread for a submission.
 */

import type { App, MessageShortcut, RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { english, type Sentence, sentence, type Words } from '../../core/i18n/words.ts';
import { channelKey, conversationKey } from '../../core/keys.ts';
import { type ChosenMessage, type MessageAction, questionFormIn, runMessageAction } from '../../core/message-action.ts';
import type { CommandContext, OutgoingMessage } from '../../core/platform.ts';
import { newReference } from '../../log.ts';
import { blocksOf, fallbackTextOf, isConversationId, oneFieldModal, readMetadata } from './blocks.ts';
import { type SlackFile, slackFileAttachment } from './files.ts';
import { patiently } from './rate-limits.ts';
import { SlackReply } from './reply.ts';
import {
  EXPORT_THREAD_SHORTCUT,
  FORGET_THREAD_SHORTCUT,
  type SlackMessageShortcut,
  type SlackShortcutDeps,
} from './shortcuts.ts';
import { refusalWhileStopping } from './stopping.ts';
import { plainTextOf } from './text.ts';
import { userWords } from './user-words.ts';
import { postEphemeral } from './writes.ts';

/** The `block_id` and `action_id` of the question's input in an action's modal. */
export const QUESTION_INPUT_ID = 'question';

/** Said when a submitted form's message can no longer be found. */
export const MESSAGE_GONE: Sentence = sentence('slack.actions.message_gone');

/** A message as Slack sends it in a shortcut and returns it from conversations.replies (the fields read here). */
interface SlackMessage {
  ts?: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  text?: string;
  files?: SlackFile[];
}

/** Where the chosen message is: what a modal's `private_metadata` carries. */
export interface MessageWhere {
  channel: string;
  ts: string;
  /** The thread the message is in, when it is a reply. */
  threadTs?: string | undefined;
}

/** Slack's timestamps (`1700000000.000100`), as metadata may hold them. */
const TS = /^\d{1,12}\.\d{1,8}$/;

/** The modal's `private_metadata` for a message (at most 3,000 characters: well under). */
export function metadataOf(where: MessageWhere): string {
  return JSON.stringify({ c: where.channel, ts: where.ts, ...(where.threadTs ? { th: where.threadTs } : {}) });
}

/**
 * Reads a modal's `private_metadata` back, checking its shape (it comes back from Slack, signed,
 * but is read as any input is). @returns undefined for anything else than {@link metadataOf}'s.
 */
export function parseMetadata(text: unknown): MessageWhere | undefined {
  const { c, ts, th } = readMetadata(text);
  if (!isConversationId(c) || typeof ts !== 'string' || !TS.test(ts)) return undefined;
  if (th !== undefined && (typeof th !== 'string' || !TS.test(th))) return undefined;
  return { channel: c, ts, ...(th ? { threadTs: th } : {}) };
}

/** The modal asking an action's question in `words` (Slack's view object: title and submit at most 24 characters). */
export function questionView(action: MessageAction, where: MessageWhere, words: Words = english) {
  return oneFieldModal(
    questionFormIn(action.question!, words),
    { callback: action.id, input: QUESTION_INPUT_ID, metadata: metadataOf(where) },
    words,
  );
}

/** Every message shortcut of the app: "Forget this thread", "Export this thread", then one per message action (the manifest's `features.shortcuts`). */
export function slackShortcutsOf(actions: readonly MessageAction[]): SlackMessageShortcut[] {
  return [FORGET_THREAD_SHORTCUT, EXPORT_THREAD_SHORTCUT, ...actions.map(actionShortcut)];
}

/** A message action as a message shortcut: it opens its form, or runs. */
function actionShortcut(action: MessageAction): SlackMessageShortcut {
  return {
    name: action.name,
    callbackId: action.id,
    description: action.description,
    run: async (shortcut, client, respond, deps, signal, botUserId) => {
      const message = shortcut.message as SlackMessage;
      const where = { channel: shortcut.channel.id, ts: shortcut.message_ts, threadTs: message.thread_ts };
      if (action.question) return openForm(action, shortcut, client, respond, deps);
      const team = shortcut.team?.id ?? shortcut.user.team_id ?? '';
      const tell = async (m: OutgoingMessage) => {
        const blocks = blocksOf(m);
        await respond({ response_type: 'ephemeral', text: fallbackTextOf(m), ...(blocks ? { blocks } : {}) });
      };
      const use = { team, where, user: { id: shortcut.user.id, name: shortcut.user.name }, botUserId };
      await answer(action, use, { client, deps, signal, tell }, async () => message);
    },
  };
}

/** Opens an action's form with the shortcut's trigger (the first call after the ack: Slack gives it 3 s). */
async function openForm(
  action: MessageAction,
  shortcut: MessageShortcut,
  client: WebClient,
  respond: RespondFn,
  deps: Pick<SlackShortcutDeps, 'core' | 'directory' | 'log'>,
): Promise<void> {
  const { log } = deps;
  const message = shortcut.message as SlackMessage;
  const where = { channel: shortcut.channel.id, ts: shortcut.message_ts, threadTs: message.thread_ts };
  try {
    // The form is the user's alone: in their language (users.info's locale; Slack gives the trigger 3 s).
    const team = shortcut.team?.id ?? shortcut.user.team_id ?? '';
    const words = await userWords(client, deps, team, shortcut.user.id);
    await client.views.open({ trigger_id: shortcut.trigger_id, view: questionView(action, where, words) });
  } catch (error) {
    log.warn({ err: error, command: action.id }, 'could not open the question form');
    const team = shortcut.team?.id ?? shortcut.user.team_id ?? '';
    const words = await userWords(client, deps, team, shortcut.user.id);
    await respond({ response_type: 'ephemeral', text: words.t('slack.actions.form_not_opened') }).catch(
      (failure: unknown) => log.warn({ err: failure }, 'could not say so'),
    );
  }
}

/**
 * Registers the `view_submission` listener of each action with a form: checks the metadata and
 * the question (a form that cannot be answered says why in the modal: `response_action: errors`),
 * acks (closing the modal), and runs the action on the message read again.
 */
export function registerActionForms(app: App, deps: SlackShortcutDeps, actions: readonly MessageAction[]): void {
  for (const action of actions.filter((a) => a.question)) {
    app.view({ callback_id: action.id, type: 'view_submission' }, async ({ ack, view, body, client, context }) => {
      const where = parseMetadata(view.private_metadata);
      const question = view.state.values[QUESTION_INPUT_ID]?.[QUESTION_INPUT_ID]?.value ?? '';
      const team = body.team?.id ?? body.user.team_id ?? '';
      const refusal: MessageKey | undefined = !where
        ? 'slack.actions.form_gone'
        : question.trim() === ''
          ? 'slack.actions.question_empty'
          : undefined;
      if (refusal || !where) {
        deps.log.warn({ command: action.id, valid: Boolean(where) }, 'a question form could not be taken');
        // Said under the input of a modal only its user sees: in their words (users.info, kept by the directory).
        const words = await userWords(client, deps, team, body.user.id);
        await ack({ response_action: 'errors', errors: { [QUESTION_INPUT_ID]: refusal ? words.t(refusal) : '' } });
        return;
      }
      await ack();
      const user = { id: body.user.id, name: body.user.name };
      const tell = async (m: OutgoingMessage) => {
        const blocks = blocksOf(m);
        await postEphemeral(deps.core.scheduler, client, {
          channel: where.channel,
          user: user.id,
          text: fallbackTextOf(m),
          thread_ts: where.threadTs ?? where.ts,
          ...(blocks ? { blocks } : {}),
        });
      };
      if (deps.running.draining) {
        const content = await refusalWhileStopping(client, deps, team, user.id);
        return void (await tell({ content }).catch(() => undefined));
      }
      const use = { team, where, user, botUserId: context.botUserId, question };
      void deps.running.run(
        (signal) => answer(action, use, { client, deps, signal, tell }, () => readMessage(client, where)),
        (error) => deps.log.error({ err: error }, 'message action failed'),
      );
    });
  }
}

/** The chosen message read again (conversations.replies). @throws InputError when it is gone; the platform's error when refused. */
async function readMessage(client: WebClient, where: MessageWhere): Promise<SlackMessage> {
  const answer = await patiently(() =>
    client.conversations.replies({
      channel: where.channel,
      ts: where.threadTs ?? where.ts,
      oldest: where.ts,
      latest: where.ts,
      inclusive: true,
      limit: 2,
    }),
  );
  const message = (answer.messages as SlackMessage[] | undefined)?.find((m) => m.ts === where.ts);
  if (!message) throw new InputError(MESSAGE_GONE);
  return message;
}

/** Who used an action, where, on which message. */
interface ActionUse {
  team: string;
  where: MessageWhere;
  user: { id: string; name: string };
  botUserId: string | undefined;
  question?: string;
}

/** What answering needs. */
interface Answering {
  client: WebClient;
  deps: SlackShortcutDeps;
  signal: AbortSignal;
  /** Tells the user alone. */
  tell: (message: OutgoingMessage) => Promise<void>;
}

/** Runs the action on the message `read` gives, answering in the message's thread (see the file's comment). */
async function answer(
  action: MessageAction,
  use: ActionUse,
  answering: Answering,
  read: () => Promise<SlackMessage>,
): Promise<void> {
  const { client, deps, signal, tell } = answering;
  const { team, where, user } = use;
  const ref = newReference();
  const log = deps.log.child({ platform: 'slack', ref, command: action.id, channel: where.channel, message: where.ts });
  const threadTs = where.threadTs ?? where.ts;
  const inDm = where.channel.startsWith('D');
  const native = { streaming: deps.streaming, recipient: inDm ? undefined : { teamId: team, userId: user.id } };
  const reply = new SlackReply(
    client,
    { team, channel: where.channel, threadTs, continueInThread: false, native },
    tell,
    log,
  );
  const place = { platform: 'slack' as const, team, channel: where.channel };
  const ctx: CommandContext = {
    platform: 'slack',
    conversationId: conversationKey({ ...place, thread: threadTs }),
    channelKey: channelKey(place),
    isDirectMessage: inDm,
    locale: { user: deps.directory.locale(client, team, user.id) },
    user: deps.directory.user(client, { team, id: user.id, name: user.name }),
    options: {},
    files: {},
    signal,
    log,
    ref,
    startedAt: performance.now(),
    reply,
  };
  const readChosen = async () => chosenOf(await read(), client, deps, { team, botUserId: use.botUserId });
  await runMessageAction(action, ctx, deps.core, { read: readChosen, question: use.question });
}

/** A Slack message as the core's chosen message: its author's display name, its text (mentions as names), its files. */
async function chosenOf(
  message: SlackMessage,
  client: WebClient,
  deps: { core: Core; directory: SlackShortcutDeps['directory']; apiOrigin: string | undefined },
  at: { team: string; botUserId: string | undefined },
): Promise<ChosenMessage> {
  const { botUserId } = at;
  const author = message.user
    ? await deps.directory.displayName(client, at.team, message.user)
    : (message.username ?? 'an app');
  return {
    author,
    fromBot: message.user !== undefined && message.user === botUserId,
    text: plainTextOf(message.text ?? '', botUserId),
    attachments: (message.files ?? []).map((file) =>
      slackFileAttachment(file, {
        client,
        downloader: deps.core.downloader,
        apiOrigin: deps.apiOrigin,
      }),
    ),
  };
}
