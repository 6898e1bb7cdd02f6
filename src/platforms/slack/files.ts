/**
 * Files on Slack: downloading a file Slack hosts (`url_private_download`, with the bot token;
 * scope `files:read`); who may have a file read for them ({@link fileVisibleTo}: its owner, or
 * anyone where it is shared); and the bot's own uploads (filesUploadV2), named by reference
 * (`slack:<file id>`) to be found again with files.info when a button is pressed. What a user
 * types after an attachment option (`--image <link>`) is file-links.ts's.
 *
 * The bot token (the workspace's: the token of the client Bolt handed the request) goes to one place only: {@link slackFileHost} decides, for every URL, whether
 * it may carry it; every other link is fetched without it, through the public-address guard.
 */

import type { WebClient } from '@slack/web-api';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { parsePostedImageRef, postedImageRef } from '../../core/keys.ts';
import { DownloadError, type Downloader } from '../../core/media/download.ts';
import {
  type Attachment,
  AttachmentAccessError,
  type AttachmentFetch,
  type OutgoingFile,
  type PostedImage,
} from '../../core/platform.ts';

/** Said once when Slack serves a web page instead of a user's file: the token lacks `files:read`. */
export const FILES_READ_MISSING: Sentence = sentence('slack.files.read_missing');

/** What downloading from Slack needs. */
export interface SlackFileDeps {
  /** The request's client: its token (the workspace's bot token) is the one sent with a download. */
  client: WebClient;
  downloader: Downloader;
  /**
   * The origin of SLACK_API_URL when the operator set one (a proxy, GovSlack, the tests' fake
   * Slack), else undefined: file links there are Slack's and get the token.
   */
  apiOrigin: string | undefined;
}

/**
 * The hosts Slack serves users' files from (`url_private`, `url_private_download`, typed
 * `/files-pri/` links): `https://files.slack.com/files-pri/<team>-<file>/…` in Slack's file
 * object reference (docs.slack.dev, "File object"). Another host (GovSlack's, for one) is
 * added only with evidence that Slack serves users' files there; until then SLACK_API_URL's
 * origin is the operator's way to name one.
 */
export const SLACK_FILE_HOSTS: ReadonlySet<string> = new Set(['files.slack.com']);

/**
 * Whether `url` may be sent the bot token: an `https:` URL on the default port 443 (no other
 * port written) whose host is exactly one of {@link SLACK_FILE_HOSTS}, or a URL of exactly the
 * origin (scheme, host and port) of the operator's SLACK_API_URL (`apiOrigin`; no such exception
 * when it is unset). Judged on the parsed URL (WHATWG), as the download will use it: user info,
 * look-alike hosts (`files.slack.com.evil.example`), other schemes and ports are all refused.
 * @param url a URL or its text; text that does not parse is refused (false).
 */
export function slackFileHost(url: string | URL, apiOrigin: string | undefined): boolean {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  if (apiOrigin !== undefined && parsed.origin === apiOrigin) return true;
  return parsed.protocol === 'https:' && parsed.port === '' && SLACK_FILE_HOSTS.has(parsed.hostname);
}

/**
 * Downloads a file of a Slack message or of files.info (`url_private_download`, `url_private`)
 * with the bot token, when {@link slackFileHost} allows it. A URL off Slack's file hosts is
 * fetched like a link a user typed, without the token and only from a public https address:
 * Slack gives such URLs for files that live elsewhere (`is_external`: Google Drive, Dropbox…),
 * and a user who shares one expects the bot to read it when it is public — never to hand the
 * workspace's token to that host.
 * Slack answers a web page (a login page, or a redirect to one) instead of the file when the
 * token lacks `files:read` (docs/platform-limits.md): that, or text where an image was announced, is
 * an AttachmentAccessError.
 * @throws AttachmentAccessError; DownloadError as Downloader.download (`not_public` for a URL
 *   off Slack that is not public https).
 */
export async function downloadSlackFile(
  url: string,
  file: { name: string; mimeType?: string | undefined },
  options: AttachmentFetch,
  deps: Pick<SlackFileDeps, 'client' | 'downloader' | 'apiOrigin'>,
): Promise<Uint8Array> {
  if (!slackFileHost(url, deps.apiOrigin))
    return (await deps.downloader.download(url, { ...options, name: file.name, publicOnly: true })).data;
  try {
    const { data, contentType } = await deps.downloader.download(url, {
      ...options,
      name: file.name,
      headers: { authorization: `Bearer ${deps.client.token ?? ''}` },
    });
    if (contentType && /^(text\/|application\/json)/.test(contentType) && file.mimeType?.startsWith('image/'))
      throw new AttachmentAccessError(FILES_READ_MISSING);
    return data;
  } catch (error) {
    if (
      error instanceof DownloadError &&
      (error.code === 'html' || (error.code === 'http_status' && [302, 401, 403].includes(error.status ?? 0)))
    ) {
      throw new AttachmentAccessError(FILES_READ_MISSING);
    }
    throw error;
  }
}

/**
 * Said when a user names a Slack file they may not see: neither theirs nor shared where they ask.
 * It names nothing Slack said of the file (its name, its owner, where it is).
 */
export const FILE_NOT_SHARED: Sentence = sentence('slack.files.not_shared');

/** A file as files.info describes it (the fields read to decide who may see it). */
export interface SlackFileInfo {
  /** The owner's user id. */
  user?: string;
  /** Public channels, private channels and DMs it is shared in (those the bot can see). */
  channels?: string[];
  groups?: string[];
  ims?: string[];
  /** Its shares, keyed by conversation id. */
  shares?: { public?: Record<string, unknown>; private?: Record<string, unknown> };
}

/**
 * Whether a file may be read for `asker`: they own it (`user`), or it is shared in the
 * conversation they ask from (`channels`, `groups`, `ims`, or a key of `shares.public` /
 * `shares.private`: docs.slack.dev "File object"). Slack lists only the conversations the bot can
 * see, so a file shared only where the bot is not counts as not shared (refused: the safe side).
 * @param asker the user id and the conversation id (channel, DM) of the request.
 */
export function fileVisibleTo(file: SlackFileInfo, asker: { user: string; channel: string }): boolean {
  if (file.user !== undefined && file.user === asker.user) return true;
  const where = [
    ...(file.channels ?? []),
    ...(file.groups ?? []),
    ...(file.ims ?? []),
    ...Object.keys(file.shares?.public ?? {}),
    ...Object.keys(file.shares?.private ?? {}),
  ];
  return where.includes(asker.channel);
}

/** A file as Slack describes it in a message (events, conversations.replies): the fields read here. */
export interface SlackFile {
  id?: string;
  name?: string | null;
  title?: string;
  mimetype?: string;
  size?: number;
  url_private?: string;
  url_private_download?: string;
}

/**
 * A Slack file of a message as a core Attachment (nothing is fetched until it is read):
 * downloaded with the bot token from Slack's file hosts only; a `url_private(_download)`
 * elsewhere (an external file) is fetched without it, from a public https address only
 * ({@link downloadSlackFile}, whose AttachmentAccessError names a missing `files:read`).
 */
export function slackFileAttachment(
  file: SlackFile,
  deps: Pick<SlackFileDeps, 'client' | 'downloader' | 'apiOrigin'>,
): Attachment {
  const name = file.name || file.title || file.id || 'file';
  const url = file.url_private_download ?? file.url_private;
  return {
    name,
    mimeType: file.mimetype,
    size: file.size ?? 0,
    origin: 'message',
    // Found again by files.info ({@link postedSlackImage}) when Regenerate sends it again.
    ...(file.id ? { ref: postedImageRef({ platform: 'slack', file: file.id }) } : {}),
    fetch: async (options) => {
      if (!url) throw new DownloadError('http_status', name, sentence('slack.files.reason_no_download_link'));
      return downloadSlackFile(url, { name, mimeType: file.mimetype }, options, deps);
    },
  };
}

/**
 * Uploads files into a channel or thread with a comment (filesUploadV2: getUploadURLExternal,
 * the bytes, completeUploadExternal).
 * @param comment the message text, already escaped for Slack.
 * @returns the uploaded files' references (`slack:<file id>`, keys.ts `postedImageRef`), in order.
 * @throws what the Web API throws.
 */
export async function uploadFiles(
  client: WebClient,
  target: { channel: string; threadTs?: string | undefined },
  comment: string,
  files: readonly OutgoingFile[],
): Promise<string[]> {
  const uploaded = await client.filesUploadV2({
    channel_id: target.channel,
    initial_comment: comment,
    ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
    file_uploads: files.map((f) => ({
      file: f.data,
      filename: f.name,
      ...(f.description ? { alt_text: f.description } : {}),
    })),
  });
  return (uploaded.files ?? [])
    .flatMap((completed) => completed.files ?? [])
    .flatMap((f) => (f.id ? [postedImageRef({ platform: 'slack', file: f.id })] : []));
}

/**
 * An image the bot uploaded or a user shared, by its reference (`slack:<file id>`;
 * ComponentContext.postedImage, an edited mention's images):
 * described by files.info, downloaded with the bot token from Slack's file hosts only
 * ({@link downloadSlackFile}). Whether the bytes are an image is the image workers' to judge
 * (Slack may describe an upload as `application/octet-stream`). A press finds only a file shared
 * in the conversation of the pressed message ({@link fileVisibleTo}): a reference is never a way
 * to a file the presser cannot see.
 * @param press who pressed, and the conversation of the pressed message.
 * @returns undefined for another platform's reference, or a file Slack no longer has
 *   (`file_not_found`, `file_deleted`) or does not let the bot download.
 * @throws AttachmentAccessError without `files:read`, or ({@link FILE_NOT_SHARED}) for a file not
 *   shared where the press was made; the Web API's other errors.
 */
export async function postedSlackImage(
  ref: string,
  press: { user: string; channel: string },
  deps: SlackFileDeps,
): Promise<PostedImage | undefined> {
  const at = parsePostedImageRef(ref);
  if (at?.platform !== 'slack') return undefined;
  let info: Awaited<ReturnType<WebClient['files']['info']>>;
  try {
    info = await deps.client.files.info({ file: at.file });
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    if (code === 'missing_scope') throw new AttachmentAccessError(FILES_READ_MISSING);
    if (code === 'file_not_found' || code === 'file_deleted') return undefined;
    throw error;
  }
  const file = info.file;
  const url = file?.url_private_download ?? file?.url_private;
  if (!file || !url) return undefined;
  if (!fileVisibleTo(file, press)) throw new AttachmentAccessError(FILE_NOT_SHARED);
  const name = file.name ?? 'image';
  return {
    ref,
    file: {
      name,
      mimeType: file.mimetype,
      size: file.size ?? 0,
      origin: 'message',
      fetch: (options) => downloadSlackFile(url, { name, mimeType: file.mimetype }, options, deps),
    },
  };
}
