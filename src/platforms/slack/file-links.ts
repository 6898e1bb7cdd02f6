/**
 * What a user typed after an attachment option (`--image <link>`), as a file: a Slack file link
 * (a permalink `https://<team>.slack.com/files/U…/F…/name`, or a `url_private` link
 * `https://files.slack.com/files-pri/T…-F…/name`), or any public https address (downloaded
 * without credentials, and never from a private address).
 *
 * A Slack file is looked up with files.info (the bot token goes to the Web API, never to the
 * typed URL) when the options are read, before anything is shown or asked of the service, and is
 * read for the user only if they own it or it is shared in the conversation they ask from
 * (files.ts `fileVisibleTo`): anyone else is refused with {@link FILE_NOT_SHARED}, ephemerally,
 * and nothing of the file is read. The bot token can read far more files than a user can see.
 */

import type { WebClient } from '@slack/web-api';
import { InputError } from '../../core/errors.ts';
import { sentence } from '../../core/i18n/words.ts';
import { postedImageRef } from '../../core/keys.ts';
import { DownloadError } from '../../core/media/download.ts';
import { type Attachment, AttachmentAccessError } from '../../core/platform.ts';
import {
  downloadSlackFile,
  FILE_NOT_SHARED,
  FILES_READ_MISSING,
  fileVisibleTo,
  type SlackFileDeps,
  slackFileHost,
} from './files.ts';

/** `image/png` and so on from a file name, for a link that says nothing else. */
function mimeTypeOf(name: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (!extension) return undefined;
  return {
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    png: 'image/png',
    gif: 'image/gif',
    webp: 'image/webp',
    avif: 'image/avif',
    tif: 'image/tiff',
    tiff: 'image/tiff',
    heic: 'image/heic',
    svg: 'image/svg+xml',
  }[extension];
}

/**
 * The Slack file id a link names, or undefined for a link that names none: a permalink on a
 * Slack page (`/files/<U|W…>/<F…>/…`, on `*.slack.com` or SLACK_API_URL's origin) or a
 * `url_private` path on Slack's file hosts (`/files-pri/<team>-<F…>/…`, files.ts `slackFileHost`).
 */
export function slackFileIdOf(url: URL, apiOrigin: string | undefined): string | undefined {
  const slackPage =
    url.origin === apiOrigin || (url.protocol === 'https:' && url.port === '' && url.hostname.endsWith('.slack.com'));
  if (slackPage) {
    const permalink = /\/files\/[UW][A-Z0-9]+\/(F[A-Z0-9]+)(?:\/|$)/.exec(url.pathname)?.[1];
    if (permalink) return permalink;
  }
  if (slackFileHost(url, apiOrigin)) return /^\/files-pri\/[A-Z0-9]+-(F[A-Z0-9]+)(?:\/|$)/.exec(url.pathname)?.[1];
  return undefined;
}

/** An attachment whose reading fails with `error` (nothing is fetched). */
function failing(name: string, error: Error): Attachment {
  return {
    name,
    mimeType: mimeTypeOf(name),
    size: 0,
    origin: 'message',
    fetch: async () => {
      throw error;
    },
  };
}

/**
 * The file a user named by link after an attachment option. A Slack file is looked up now and
 * checked (see the file's comment); anything else is fetched only when the command reads it.
 * @param raw the option's text; Slack's `<https://…|label>` wrapping is accepted.
 * @param asker the user id and the conversation (channel, DM) the command runs in.
 * @returns an Attachment whose `fetch` throws DownloadError for what cannot be read (not a
 *   link, a file Slack does not know, not public) and AttachmentAccessError without `files:read`:
 *   said under the answer, as for any file.
 *   A files.info that fails is such a DownloadError too.
 * @throws InputError ({@link FILE_NOT_SHARED}) for a Slack file the user may not see.
 */
export async function linkAttachment(
  raw: string,
  deps: SlackFileDeps,
  asker: { user: string; channel: string },
): Promise<Attachment> {
  const text = raw.trim().replace(/^<([^|>]+)(?:\|[^>]*)?>$/, '$1');
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url) {
    const name = text.slice(0, 60);
    return failing(
      name,
      new DownloadError(
        'http_status',
        name,
        sentence(name ? 'slack.files.reason_not_a_link' : 'slack.files.reason_not_a_link_unnamed'),
      ),
    );
  }
  const name = decodeURIComponent(url.pathname.split('/').filter(Boolean).at(-1) ?? 'image');
  const fileId = slackFileIdOf(url, deps.apiOrigin);
  if (!fileId) {
    const href = url.href;
    return {
      name,
      mimeType: mimeTypeOf(name),
      size: 0,
      origin: 'message',
      fetch: async (options) => (await deps.downloader.download(href, { ...options, name, publicOnly: true })).data,
    };
  }
  let info: Awaited<ReturnType<WebClient['files']['info']>>;
  try {
    info = await deps.client.files.info({ file: fileId });
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    if (code === 'missing_scope') return failing(name, new AttachmentAccessError(FILES_READ_MISSING));
    return failing(
      name,
      new DownloadError('http_status', name, sentence('slack.files.reason_not_found', { code: code ?? 'files.info' })),
    );
  }
  const file = info.file;
  if (!file || !fileVisibleTo(file, asker)) throw new InputError(FILE_NOT_SHARED);
  const download = file.url_private_download ?? file.url_private;
  if (!download)
    return failing(name, new DownloadError('http_status', name, sentence('slack.files.reason_not_shared')));
  return {
    name,
    mimeType: mimeTypeOf(name),
    size: 0,
    origin: 'message',
    // Found again by files.info (files.ts `postedSlackImage`) when Regenerate sends it again.
    ref: postedImageRef({ platform: 'slack', file: fileId }),
    fetch: (options) => downloadSlackFile(download, { name, mimeType: file.mimetype }, options, deps),
  };
}
