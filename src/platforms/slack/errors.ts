/**
 * Slack's refusals in sentences a user can act on (the `error` of Web API answers,
 * docs.slack.dev "Web API errors"), for the core's one place that turns errors into words.
 */
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { english, type Sentence, sentence } from '../../core/i18n/words.ts';

/**
 * The `error` of a @slack/web-api platform error, `ratelimited` for a 429 web-api rejected
 * (`slack_webapi_rate_limited_error`: the bot's clients never wait one out), or undefined.
 */
export function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  if (typeof data?.error === 'string') return data.error;
  return (error as { code?: unknown } | undefined)?.code === 'slack_webapi_rate_limited_error'
    ? 'ratelimited'
    : undefined;
}

/**
 * Whether a @slack/web-api call failed without an answer from Slack: no answer within the
 * client's deadline (`timeout`), after its retry, or no connection at all.
 */
export function slackDidNotAnswer(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'slack_webapi_request_error';
}

/**
 * A Slack refusal already put in words for the user (e.g. the channel the user views, which
 * the bot may not read: viewed-channel.ts): `sentence` is told with a reference, in the reader's
 * language (the runner renders it); `message` is its English, for the log.
 */
export class SlackRefusal extends Error {
  constructor(readonly sentence: Sentence) {
    super(english.say(sentence));
    this.name = 'SlackRefusal';
  }
}

/** The Web API codes whose refusal has a sentence of its own (slack.json `errors`). */
const SENTENCES: Readonly<Record<string, MessageKey>> = {
  channel_not_found: 'slack.errors.channel_not_found',
  not_in_channel: 'slack.errors.not_in_channel',
  is_archived: 'slack.errors.is_archived',
  invalid_auth: 'slack.errors.token',
  not_authed: 'slack.errors.token',
  token_revoked: 'slack.errors.token',
  token_expired: 'slack.errors.token',
  account_inactive: 'slack.errors.token',
  restricted_action: 'slack.errors.restricted',
  restricted_action_read_only_channel: 'slack.errors.restricted',
  restricted_action_thread_only_channel: 'slack.errors.restricted',
  restricted_action_non_threadable_channel: 'slack.errors.restricted',
  msg_too_long: 'slack.errors.refused_malformed',
  invalid_blocks: 'slack.errors.refused_malformed',
  ratelimited: 'slack.errors.ratelimited',
};

/**
 * The sentence for a Slack refusal (not yet in words: the caller renders it for its reader), or
 * undefined for anything else.
 * @param error what a @slack/web-api call threw, or a {@link SlackRefusal}.
 */
export function explainSlackError(error: unknown): Sentence | undefined {
  if (error instanceof SlackRefusal) return error.sentence;
  const code = slackErrorCode(error);
  if (code === undefined) return slackDidNotAnswer(error) ? sentence('slack.errors.no_answer') : undefined;
  const known = Object.hasOwn(SENTENCES, code) ? SENTENCES[code] : undefined;
  if (known) return sentence(known);
  if (code === 'missing_scope') {
    const needed = (error as { data?: { needed?: unknown } } | undefined)?.data?.needed;
    return typeof needed === 'string' && needed
      ? sentence('slack.errors.missing_scope_named', { scope: needed })
      : sentence('slack.errors.missing_scope');
  }
  return sentence('slack.errors.refused', { code });
}
