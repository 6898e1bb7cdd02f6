/**
 * A message in a user's direct message with the bot (`CommandContext.sendDirect` on Slack), for
 * what Slack's ephemeral messages cannot carry: files (/export). conversations.open names the DM
 * (scope `im:write`; the same DM every time), then the files are uploaded there with the text as
 * their comment (files.ts `uploadFiles`: files.getUploadURLExternal, the bytes,
 * files.completeUploadExternal), or the text alone is posted.
 * docs.slack.dev/reference/methods/conversations.open.
 */
import type { WebClient } from '@slack/web-api';
import { InputError } from '../../core/errors.ts';
import { sentence } from '../../core/i18n/words.ts';
import type { OutgoingMessage } from '../../core/platform.ts';
import { slackErrorCode } from './errors.ts';
import { uploadFiles } from './files.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { mrkdwnOf } from './mrkdwn.ts';

/** The bot scope a direct message needs (conversations.open of a DM). */
export const SLACK_DIRECT_SCOPES = ['im:write'] as const;

/** Said when the app lacks `im:write` (an app installed before /export). */
export const IM_WRITE_MISSING = sentence('slack.direct.im_write_missing');

/**
 * Sends `message` to `user` in their DM with the bot: its files uploaded with its text (escaped,
 * within Slack's message length) as their comment, or its text posted.
 * @throws InputError ({@link IM_WRITE_MISSING}) without `im:write`; the Web API's other errors.
 */
export async function sendDirect(client: WebClient, user: string, message: OutgoingMessage): Promise<void> {
  let channel: string | undefined;
  try {
    channel = (await client.conversations.open({ users: user })).channel?.id;
  } catch (error) {
    if (slackErrorCode(error) === 'missing_scope') throw new InputError(IM_WRITE_MISSING);
    throw error;
  }
  if (!channel) throw new Error('conversations.open named no channel');
  const text = mrkdwnOf(message.content, SLACK_MESSAGE_LIMITS.maxChars);
  if (message.files?.length) await uploadFiles(client, { channel }, text, message.files);
  else await client.chat.postMessage({ channel, text });
}
