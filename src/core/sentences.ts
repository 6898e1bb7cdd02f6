/**
 * Where a failure becomes the sentence a user reads, in the bot's words: the service's errors
 * say what went wrong (service/errors.ts); what to do about it with this bot (a command, a
 * setting) is added here, and nowhere else. Each returns a {@link Sentence} (catalog `errors.*`),
 * put into words by whoever knows the reader (i18n/languages.ts).
 */
import type { NamedWait } from './delivery/bucket.ts';
import { type Sentence, sentence } from './i18n/words.ts';
import { parseConversationKey } from './keys.ts';
import {
  type BadRequestError,
  ContextLengthError,
  InvalidResponseError,
  ServiceError,
  userMessageOf,
} from './service/errors.ts';

/**
 * The service refused image parts for the model (a 400 naming images or vision, §4.1: the
 * model "must support image input if image parts are sent"): the sentence names the setting
 * that chooses the model for requests with images.
 */
export class ImagesNotSupportedError extends ServiceError {
  constructor(
    readonly model: string,
    cause: BadRequestError,
  ) {
    super(
      'bad_request',
      `model ${model} refused image input: ${cause.message}`,
      sentence('errors.service.images_not_supported', { model }),
      { status: cause.status ?? 400, ...(cause.serviceCode ? { serviceCode: cause.serviceCode } : {}), cause },
    );
  }
}

/**
 * The service's `/v1/models` (§4.5) lists no chat model (§2.5: only `type: image` records, or
 * none the bot can read), fetched again once, and no DEFAULT_CHAT_MODEL is set: the sentence
 * says what is missing and the setting that names a model instead. Code `invalid_response`.
 */
export class NoChatModelError extends InvalidResponseError {
  constructor() {
    super('the service lists no chat model', sentence('errors.service.no_chat_model'));
  }
}

/** The name of Slack's message shortcut that forgets a thread, as the Slack manifest declares it (≤ 24 characters). */
export const FORGET_THREAD_SHORTCUT_NAME = 'Forget this thread';

/** The name of Slack's message shortcut that exports a thread's conversation (/export's, for a thread; ≤ 24 characters). */
export const EXPORT_THREAD_SHORTCUT_NAME = 'Export this thread';

/**
 * How a user clears the history of the conversation they are in, per place (catalog
 * `errors.forget.clause`, or `errors.forget.sentence` to stand as a sentence of its own):
 * - a DM (Discord, or Slack outside a thread): `/forget starts afresh`;
 * - a Discord channel or thread: /forget, by an admin or a member who may manage messages;
 * - a Slack channel: /forget, by an admin;
 * - a Slack thread, where no slash command runs (/forget would clear the channel's
 *   conversation, not the thread's): `@bot forget` in the thread (in a DM, `forget` alone) or
 *   the message shortcut {@link FORGET_THREAD_SHORTCUT_NAME}, by an admin in a channel.
 * @param where the conversation key (keys.ts; an unreadable one gets the Discord wording) and
 *   whether it is a DM.
 * @param form `clause` (default): the end of a sentence, after `; ` (lowercase where the language
 *   has case); `sentence`: a sentence of its own, without its final stop.
 */
export function howToForget(where: ForgetPlace, form: 'clause' | 'sentence' = 'clause'): Sentence {
  const ref = parseConversationKey(where.conversationId);
  const dm = where.isDirectMessage ?? (ref?.platform === 'discord' && ref.guild === undefined);
  const place =
    ref?.platform === 'slack' && ref.thread
      ? dm
        ? 'slack_thread_dm'
        : 'slack_thread'
      : dm
        ? 'dm'
        : ref?.platform === 'slack'
          ? 'slack'
          : 'discord';
  return sentence(form === 'clause' ? 'errors.forget.clause' : 'errors.forget.sentence', {
    place,
    shortcut: FORGET_THREAD_SHORTCUT_NAME,
  });
}

/**
 * The refusal of forgetting a channel's (or a channel thread's) history to a member without the
 * right, per platform (`errors.forget.refused`): on Discord admins and members who may manage
 * messages; on Slack, which has no such permission, admins. Anyone may in a DM with the bot.
 * @param how what the user did: a command (`/forget`), or `Forgetting a thread` (Slack's
 *   `forget` in a thread and its message shortcut), which the sentence words in the reader's language.
 */
export function forgetRefused(platform: 'discord' | 'slack', how: string): Sentence {
  return sentence('errors.forget.refused', {
    what: how.startsWith('/') ? 'command' : 'thread',
    command: how,
    platform,
  });
}

/**
 * Where a user is, for {@link howToForget}: the conversation key (keys.ts) and whether it is a DM
 * (unknown for a button press: then a Discord DM is told by its key, anything else as a channel).
 */
export interface ForgetPlace {
  conversationId: string;
  isDirectMessage?: boolean;
}

/**
 * The sentence for a failure (without its reference): a service error's own, with what the user
 * can do here added (a conversation too long for the model: how to clear it where the user is,
 * {@link howToForget}); anything else, the bot's own fault in general words (no detail of it).
 * @param where the conversation the failure happened in; without it, the /forget wording.
 */
export function sentenceOf(error: unknown, where?: ForgetPlace): Sentence {
  if (error instanceof ContextLengthError) {
    const how = howToForget(where ?? { conversationId: '', isDirectMessage: true }, 'sentence');
    return sentence('errors.context_too_long', { how });
  }
  return userMessageOf(error);
}

/**
 * What the user reads when the image results of web search mode "images" (§4.1) could not be
 * posted after the answer (the answer and its history stay): the platform's reason
 * (`ReplyChannel.explain`), or a general one. Without its reference (withReference adds it).
 * @param reason the platform's reason (`ReplyChannel.explain`).
 */
export function imageResultsNotPosted(reason: Sentence | undefined): Sentence {
  if (reason === undefined) return sentence('errors.image_results_refused');
  return sentence('errors.image_results_not_posted', { reason });
}

/**
 * What an answer ends with when a platform asked the bot to wait longer than it holds a write
 * (delivery/bucket.ts MAX_HOLD_MS: a 429 naming an hour, or a reset announced an hour away), and
 * the bot wrote it anyway after holding it back: the platform is refusing the bot's writes for
 * now, for how long it said (in minutes from two minutes up, else seconds), and that the answer
 * came late for it (`errors.refusing_writes`).
 */
export function refusingWrites(wait: NamedWait): Sentence {
  const seconds = Math.round(wait.namedMs / 1000);
  const asked =
    seconds >= 120
      ? sentence('errors.wait_for.minutes', { minutes: Math.round(seconds / 60) })
      : sentence('errors.wait_for.seconds', { seconds });
  return sentence('errors.refusing_writes', { platform: wait.platform, wait: asked });
}
