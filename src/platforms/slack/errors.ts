/**
 * Slack's refusals in sentences a user can act on (the `error` of Web API answers,
 * docs.slack.dev "Web API errors"), for the core's one place that turns errors into words.
 */

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
 * the bot may not read: viewed-channel.ts); `message` is the sentence, told with a reference.
 */
export class SlackRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SlackRefusal';
  }
}

/**
 * The sentence for a Slack refusal, or undefined for anything else.
 * @param error what a @slack/web-api call threw, or a {@link SlackRefusal}.
 */
export function explainSlackError(error: unknown): string | undefined {
  if (error instanceof SlackRefusal) return error.message;
  const code = slackErrorCode(error);
  const needed = (error as { data?: { needed?: unknown } } | undefined)?.data?.needed;
  switch (code) {
    case undefined:
      break;
    case 'channel_not_found':
      return 'I cannot see this channel: invite me to it (/invite followed by my name), or use me in a channel I am in.';
    case 'not_in_channel':
      return 'I am not in this channel: invite me (/invite followed by my name), then try again.';
    case 'is_archived':
      return 'This channel is archived, so I cannot post in it.';
    case 'invalid_auth':
    case 'not_authed':
    case 'token_revoked':
    case 'token_expired':
    case 'account_inactive':
      return "Slack refused the bot's token: an admin needs to check SLACK_BOT_TOKEN (or reinstall the app).";
    case 'missing_scope':
      return `The Slack app lacks the ${typeof needed === 'string' ? `\`${needed}\` ` : ''}scope: an admin can add it under OAuth & Permissions and reinstall the app.`;
    case 'restricted_action':
    case 'restricted_action_read_only_channel':
    case 'restricted_action_thread_only_channel':
    case 'restricted_action_non_threadable_channel':
      return 'This workspace does not let me post here.';
    case 'msg_too_long':
    case 'invalid_blocks':
      return 'Slack refused the message as too long or malformed.';
    case 'ratelimited':
      return 'Slack is rate-limiting the bot right now. Try again in a minute.';
    default:
      return `Slack refused the message (${code}).`;
  }
  if (slackDidNotAnswer(error)) return 'Slack did not answer in time. Try again in a moment.';
  return undefined;
}
