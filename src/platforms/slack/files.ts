/**
 * Users' files on Slack: downloading a file Slack hosts (`url_private_download`, with the bot
 * token; scope `files:read`), and turning what a user typed after an attachment option
 * (`--image <link>`) into a file: a Slack file link (`https://<team>.slack.com/files/U…/F…/name`,
 * looked up with files.info) or any public https address (downloaded without credentials, and
 * never from a private address).
 */
import type { WebClient } from '@slack/web-api';
import { AttachmentAccessError, type Attachment } from '../../core/platform.ts';
import { DownloadError, type Downloader } from '../../core/media/download.ts';

/** Said once when Slack serves a web page instead of a user's file: the token lacks `files:read`. */
export const FILES_READ_MISSING =
  'I cannot open files here: the Slack app is missing the `files:read` scope. An admin can add it under OAuth & Permissions and reinstall the app.';

/** What downloading from Slack needs. */
export interface SlackFileDeps {
  client: WebClient;
  botToken: string;
  downloader: Downloader;
  /** Origin of the Web API (`https://slack.com`, or SLACK_API_URL's): file links there are Slack's. */
  apiOrigin: string;
}

/**
 * Downloads a file Slack hosts with the bot token. Slack answers a web page (a login page, or
 * a redirect to one) instead of the file when the token lacks `files:read`
 * (PLATFORM-LIMITS.md): that, or text where an image was announced, is an AttachmentAccessError.
 * @throws AttachmentAccessError; DownloadError as Downloader.download.
 */
export async function downloadSlackFile(url: string, file: { name: string; mimeType?: string | undefined }, options: { maxBytes: number; signal: AbortSignal }, deps: Pick<SlackFileDeps, 'botToken' | 'downloader'>): Promise<Uint8Array> {
  try {
    const { data, contentType } = await deps.downloader.download(url, { ...options, name: file.name, headers: { authorization: `Bearer ${deps.botToken}` } });
    if (contentType && /^(text\/|application\/json)/.test(contentType) && file.mimeType?.startsWith('image/')) throw new AttachmentAccessError(FILES_READ_MISSING);
    return data;
  } catch (error) {
    if (error instanceof DownloadError && (error.code === 'html' || (error.code === 'http_status' && [302, 401, 403].includes(error.status ?? 0)))) {
      throw new AttachmentAccessError(FILES_READ_MISSING);
    }
    throw error;
  }
}

/** `image/png` and so on from a file name, for a link that says nothing else. */
function mimeTypeOf(name: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (!extension) return undefined;
  return { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', tif: 'image/tiff', tiff: 'image/tiff', heic: 'image/heic', svg: 'image/svg+xml' }[extension];
}

/**
 * The file a user named by link after an attachment option. Nothing is fetched until the
 * command reads it.
 * @param raw the option's text; Slack's `<https://…|label>` wrapping is accepted.
 */
export function linkAttachment(raw: string, deps: SlackFileDeps): Attachment {
  const text = raw.trim().replace(/^<([^|>]+)(?:\|[^>]*)?>$/, '$1');
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const name = url ? decodeURIComponent(url.pathname.split('/').filter(Boolean).at(-1) ?? 'image') : text.slice(0, 60);
  const fileId = url ? /\/files\/[UW][A-Z0-9]+\/(F[A-Z0-9]+)(?:\/|$)/.exec(url.pathname)?.[1] : undefined;
  const slackHost = url !== undefined && (url.origin === deps.apiOrigin || url.hostname === 'files.slack.com' || url.hostname.endsWith('.slack.com'));
  return {
    name,
    mimeType: mimeTypeOf(name),
    size: 0,
    origin: 'message',
    fetch: async (options) => {
      if (!url) throw new DownloadError('http_status', text.slice(0, 60) || 'the link', 'is not a link (give an https address or a Slack file link)');
      if (slackHost && fileId) {
        const info = await deps.client.files.info({ file: fileId }).catch((error: unknown) => {
          const code = (error as { data?: { error?: string } }).data?.error;
          if (code === 'missing_scope') throw new AttachmentAccessError(FILES_READ_MISSING);
          throw new DownloadError('http_status', name, `could not be found on Slack (${code ?? 'files.info failed'})`);
        });
        const download = info.file?.url_private_download ?? info.file?.url_private;
        if (!download) throw new DownloadError('http_status', name, 'is not shared with the bot');
        return downloadSlackFile(download, { name, mimeType: info.file?.mimetype }, options, deps);
      }
      if (slackHost && url.pathname.startsWith('/files-pri/')) return downloadSlackFile(url.href, { name, mimeType: mimeTypeOf(name) }, options, deps);
      return (await deps.downloader.download(url.href, { ...options, name, publicOnly: true })).data;
    },
  };
}
