/**
 * What a finished text answer (/chat, /complete, a mention) keeps for its **Regenerate** button
 * and for re-answering an edited mention, in the store under the button's id
 * (`answer:<id>`, keys.ts) for {@link ANSWER_STATE_TTL_MS}: who asked, where, the request body
 * exactly as it was sent to the service (model, messages, sampling, web_search,
 * response_format), the lines shown under the answer, and the ids of the history turns the
 * exchange wrote (state/history.ts `replaceExchange`), and where each of the answer's messages
 * is (keys.ts `messageRef`, in order: a new answer is written over them). A mention's answer is also found from the
 * mention (`mention-answer:<message ref>`) while its edits may re-answer it.
 *
 * The body holds the messages as sent, but images a platform keeps (kept-request.ts: their
 * references instead): a state over {@link ANSWER_STATE_MAX_BYTES} is not kept, and its answer
 * shows no Regenerate button. A user's states are bounded together, and /forget removes a
 * conversation's (answer-index.ts); a state read is checked against both
 * ({@link findAnswerState}).
 */

import type { Logger } from '../../log.ts';
import type { Core } from '../core.ts';
import type { Note } from '../delivery/answer-stream.ts';
import { english, type Words } from '../i18n/words.ts';
import { randomHex } from '../ids.ts';
import { buttonId, storeKeys, workspaceOf } from '../keys.ts';
import type { Button } from '../platform.ts';
import type { ChatCompletionRequest, CompletionRequest } from '../service/schemas.ts';
import { keepOwned } from '../state/owned.ts';
import {
  ANSWER_STATE_TTL_MS,
  forgottenSince,
  type GoneReason,
  type GoneState,
  listAnswerState,
  markGone,
} from './answer-index.ts';

export { ANSWER_STATE_TTL_MS };

/** The id prefix of Regenerate buttons: `regenerate:<id>:<requester>`. */
export const REGENERATE_BUTTON = 'regenerate';

/**
 * The largest state kept, in bytes of its JSON, by store: Redis keeps its data in memory, so 1
 * MiB there (an answer whose question carried large images gets no button); SQLite, on disk,
 * 8 MiB (four prepared images and the history budget fit).
 */
export const ANSWER_STATE_MAX_BYTES = { sqlite: 8 * 1024 * 1024, redis: 1024 * 1024 } as const;

/** A request to the service as it was sent (without `stream`, always true). */
export type KeptRequest =
  | { endpoint: 'chat'; body: Omit<ChatCompletionRequest, 'stream'> }
  | { endpoint: 'completions'; body: Omit<CompletionRequest, 'stream'> };

/** An image of a kept request, by where its platform keeps it (kept-request.ts). */
export interface KeptImageRef {
  /** keys.ts `postedImageRef` (the Attachment's `ref`). */
  ref: string;
  /** The file's name, as the user sent it. */
  name: string;
}

/** The history turns one exchange wrote: their ids (the same in each conversation that keeps them). */
export interface KeptTurns {
  question: string;
  answer: string;
  /** The conversations whose histories hold them (the answer's, and linked ones: a Slack /chat's thread). */
  conversations: string[];
  /** What the question's turn adds after the user's text (`[1 file: a.py]`…), kept when the text is edited. */
  askedTail: string;
}

/** What the store keeps under a Regenerate button's id. */
export interface AnswerState {
  version: 1;
  requesterId: string;
  /** Where the answer was given: its conversation and the channel whose settings and queue apply. */
  conversationId: string;
  channelKey: string;
  kind: 'chat' | 'complete' | 'mention';
  /** The message action answered (its id), when one was: the feedback record's command (else `kind`). */
  command?: string;
  request: KeptRequest;
  /**
   * Lines shown under the answer (files not used, history left out), shown again under a new one:
   * Sentences (plain data) rendered in the place's words then, or texts as they are.
   */
  notes: Note[];
  /** JSON mode: the answer is shown pretty-printed. */
  json?: boolean;
  /** The question carried images (a refusal of them names the vision model). */
  images?: boolean;
  /** The exchange's history turns (chat and mentions; /complete keeps none). */
  turns?: KeptTurns;
  /** The user's own text of a mention (an edit of it is compared against it), when it had one. */
  prompt?: string;
  /**
   * Where the answer's messages are (keys.ts `messageRef`), in order: a regenerated or
   * re-answered answer is written over them. Absent when a platform did not name one of them.
   */
  messages?: string[];
  /**
   * When the request was made (before its history was read), ms since the epoch: a state made
   * before its conversation was last forgotten is refused (answer-index.ts). Absent in states
   * kept before it was added (refused after any /forget).
   */
  at?: number;
  /**
   * The channel's model that answered (/settings, else the defaults): today's is sent again
   * (kept-request.ts). Absent: the model the user chose, sent again as it is.
   */
  channelModel?: 'chat' | 'vision';
  /** The images the request keeps by reference: its `kept-image:<n>` parts (kept-request.ts). */
  imageRefs?: KeptImageRef[];
  /** The mention answered (keys.ts `messageRef`), whose link to this state /forget removes. */
  mention?: string;
  /**
   * The model that answered, when it was a fallback (FALLBACK_CHAT_MODELS) and not the request's:
   * the request keeps the model asked, which Regenerate asks again first.
   */
  answeredBy?: string;
}

/** A state looked for by id: found, or why it is not there (`expired`: never kept, or past its day). */
export type FoundState = { state: AnswerState } | { gone: GoneReason | 'expired' };

/** A new answer id (18 hex characters): the Regenerate button's and the state's key. */
export function newAnswerId(): string {
  return randomHex(9);
}

/**
 * The Regenerate button of an answer (the requester's id in it lets a press be turned away early),
 * labelled in `words` (the place's: the button is public).
 */
export function regenerateButton(id: string, requesterId: string, words: Words = english): Button {
  return { id: buttonId(REGENERATE_BUTTON, id, requesterId), label: words.t('answers.regenerate.button') };
}

/**
 * Keeps (or replaces) an answer's state for {@link ANSWER_STATE_TTL_MS} and returns its
 * Regenerate button; none when the state is over {@link ANSWER_STATE_MAX_BYTES} for the store,
 * or the store fails (the answer is shown without it).
 */
export async function keepAnswerState(
  core: Core,
  log: Logger,
  id: string,
  state: AnswerState,
  words: Words = english,
): Promise<Button[]> {
  return (await storeState(core, log, id, state)) === undefined ? [] : [regenerateButton(id, state.requesterId, words)];
}

/**
 * Keeps a state ({@link keepAnswerState}). @returns its bytes, or undefined when it was not kept.
 */
async function storeState(core: Core, log: Logger, id: string, state: AnswerState): Promise<number | undefined> {
  const bytes = Buffer.byteLength(JSON.stringify(state));
  if (bytes > ANSWER_STATE_MAX_BYTES[core.store.kind]) {
    log.info({ bytes }, 'answer state over the cap: no Regenerate button');
    return undefined;
  }
  try {
    // Its workspace's marker beside it: an uninstall finds it (state/owned.ts).
    await keepOwned(core.store, workspaceOf(state.channelKey), storeKeys.answerState(id), state, ANSWER_STATE_TTL_MS);
    return bytes;
  } catch (error) {
    core.storeHealth.failed(error, log);
    return undefined;
  }
}

/** Keeps an answer's state (its Regenerate button's) with the refs of its messages: {@link answerKeeper}. */
export interface AnswerKeeper {
  /** Keeps the state with the messages posted so far, just before the final write: its Regenerate button, or none. */
  controls(): Promise<Button[]>;
  /**
   * After the final write, once the state was kept: keeps it again when that write posted more
   * messages, and lists it (answer-index.ts: the user's bound, /forget). Never throws.
   */
  complete(): Promise<void>;
}

/**
 * Keeps an answer's state under `id` ({@link keepAnswerState}) with `messages.messageRefs`, the
 * answer's messages (its StreamingReply's, whose `words`, the place's, label the button): before the final write for its button, and after it
 * again only when the final write posted messages not named yet (the button is on the last);
 * then lists it, off the final write's path.
 */
export function answerKeeper(
  core: Core,
  log: Logger,
  id: string,
  state: () => AnswerState,
  messages: { readonly messageRefs: string[] | undefined; readonly words?: Words },
): AnswerKeeper {
  return new StateKeeper(core, log, id, state, messages);
}

/** {@link answerKeeper}'s keeper: one object per answer (no closures kept while it streams). */
class StateKeeper implements AnswerKeeper {
  /** The refs the state was kept with (JSON), once kept with a button. */
  private kept: string | undefined;
  /** The bytes of the state last kept. */
  private bytes = 0;

  constructor(
    private readonly core: Core,
    private readonly log: Logger,
    private readonly id: string,
    private readonly state: () => AnswerState,
    private readonly messages: { readonly messageRefs: string[] | undefined; readonly words?: Words },
  ) {}

  async controls(): Promise<Button[]> {
    const messages = this.messages.messageRefs;
    if (!(await this.keep(messages))) return [];
    this.kept = JSON.stringify(messages ?? null);
    return [regenerateButton(this.id, this.state().requesterId, this.messages.words)];
  }

  async complete(): Promise<void> {
    if (this.kept === undefined) return;
    const messages = this.messages.messageRefs;
    if (this.kept !== JSON.stringify(messages ?? null)) {
      this.kept = JSON.stringify(messages ?? null);
      if (!(await this.keep(messages))) return;
    }
    const { requesterId, conversationId, mention } = this.state();
    await listAnswerState(this.core, this.log, {
      id: this.id,
      requesterId,
      conversationId,
      mention,
      bytes: this.bytes,
    });
  }

  /** Keeps the state with `messages`. @returns whether it was kept. */
  private async keep(messages: string[] | undefined): Promise<boolean> {
    const { messages: _old, ...rest } = this.state();
    const bytes = await storeState(this.core, this.log, this.id, messages ? { ...rest, messages } : rest);
    if (bytes !== undefined) this.bytes = bytes;
    return bytes !== undefined;
  }
}

/**
 * The state kept under an answer's id, or why there is none: dropped by its user's bound,
 * forgotten with its conversation (a state made before the conversation's last /forget is
 * replaced by a `forgotten` record now), or expired.
 * @throws the store's error.
 */
export async function findAnswerState(core: Core, id: string): Promise<FoundState> {
  const stored = (await core.store.keyv.get(storeKeys.answerState(id))) as AnswerState | GoneState | undefined;
  if (stored?.version !== 1) return { gone: 'expired' };
  if ('gone' in stored) return { gone: stored.gone };
  if (await forgottenSince(core, stored.conversationId, stored.at)) {
    await markGone(core, { id, at: stored.at ?? Date.now() }, 'forgotten');
    return { gone: 'forgotten' };
  }
  return { state: stored };
}

/**
 * The state kept under an answer's id ({@link findAnswerState}).
 * @returns undefined when there is none (expired, dropped, forgotten, or never kept).
 * @throws the store's error.
 */
export async function readAnswerState(core: Core, id: string): Promise<AnswerState | undefined> {
  const found = await findAnswerState(core, id);
  return 'state' in found ? found.state : undefined;
}

/** What the store keeps under a mention (keys.ts `mentionAnswer`): its answer's state id and first message. */
export interface MentionAnswer {
  id: string;
  /** Where the answer's last message is (keys.ts `messageRef`): an edit rewrites it alone when the state names no messages. */
  answer: string;
  /** When the answer was given, ms since the epoch. */
  at: number;
}

/**
 * Links a mention to its answer for `ttlMs` (the edit window): an edit of the mention finds it.
 * With the marker of `workspace` (the conversation's, keys.ts `workspaceOf`): a Discord mention's
 * reference names no guild, and a purge finds the link by it (state/owned.ts). A store that fails
 * loses the link (logged once per outage).
 */
export async function linkMention(
  core: Core,
  log: Logger,
  mention: string,
  link: MentionAnswer & { workspace?: string | undefined },
  ttlMs: number,
): Promise<void> {
  const { workspace, ...kept } = link;
  try {
    await keepOwned(core.store, workspace, storeKeys.mentionAnswer(mention), kept, ttlMs);
  } catch (error) {
    core.storeHealth.failed(error, log);
  }
}

/**
 * The answer linked to a mention, with its state.
 * @returns undefined when there is none (not answered, expired).
 * @throws the store's error.
 */
export async function answerOfMention(
  core: Core,
  mention: string,
): Promise<{ link: MentionAnswer; state: AnswerState } | undefined> {
  const link = (await core.store.keyv.get(storeKeys.mentionAnswer(mention))) as MentionAnswer | undefined;
  const state = link && (await readAnswerState(core, link.id));
  return link && state ? { link, state } : undefined;
}
