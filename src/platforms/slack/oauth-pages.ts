/**
 * The pages of Slack's OAuth mode (oauth.ts) in the visitor's language: the install page with its
 * "Add to Slack" link (`GET /slack/install`), and the pages the OAuth redirect ends on (installed,
 * or why not). The language is the browser's: its `Accept-Language` header (RFC 9110 §12.5.4),
 * tags tried best first by their `q`, the first with a catalog taken (i18n/locales.ts
 * `matchLocale`), else DEFAULT_LOCALE; `<html lang>` says which.
 *
 * @slack/oauth renders its install page from the authorize URL alone (`renderHtmlForInstallPath`
 * sees no request), so the install path is served by an InstallProvider per locale, each rendering
 * its language, sharing the App's state store, cookie and options: the installer's
 * `beforeRedirection` hands the request to the one of the visitor's language. The redirect's
 * pages are `callbackOptions.success` / `failure`, which see the request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type {
  CallbackOptions,
  Installation,
  InstallPathOptions,
  InstallProviderOptions,
  InstallURLOptions,
  OrgInstallation,
} from '@slack/oauth';
import { type Locale, matchLocale } from '../../core/i18n/locales.ts';
import { type Words, wordsOf } from '../../core/i18n/words.ts';

// As oauth.ts: @slack/oauth's getters are not all found by Node's ESM loader among a CommonJS module's exports.
const { InstallProvider, ErrorCode } = createRequire(import.meta.url)('@slack/oauth') as typeof import('@slack/oauth');

/** Longest Accept-Language header read, in characters (a browser's is far shorter; hostile input is cut). */
const MAX_HEADER_CHARS = 1_000;
/** Language ranges of one header looked at, at most. */
const MAX_RANGES = 20;

/**
 * The language ranges of an `Accept-Language` header, best first: by `q` (default 1; `q=0`, "not
 * acceptable", dropped; a malformed `q` read as 0), ties in the order given. `*` is dropped (it
 * names no language).
 */
export function acceptedLanguages(header: string | string[] | undefined): string[] {
  const text = (Array.isArray(header) ? header.join(',') : (header ?? '')).slice(0, MAX_HEADER_CHARS);
  const ranges = text
    .split(',')
    .slice(0, MAX_RANGES)
    .map((part, order) => {
      const [tag = '', ...params] = part.split(';').map((p) => p.trim());
      const q = params.find((p) => /^q=/i.test(p));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { tag, weight: Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0, order };
    })
    .filter((r) => r.tag !== '' && r.tag !== '*' && r.weight > 0);
  return ranges.sort((a, b) => b.weight - a.weight || a.order - b.order).map((r) => r.tag);
}

/** The locale of a visitor: the first of their accepted languages with a catalog, else `fallback` (DEFAULT_LOCALE). */
export function requestLocale(request: Pick<IncomingMessage, 'headers'>, fallback: Locale): Locale {
  for (const tag of acceptedLanguages(request.headers['accept-language'])) {
    const locale = matchLocale(tag);
    if (locale) return locale;
  }
  return fallback;
}

/** Text for an HTML document (element content or a quoted attribute). */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#x27;');
}

/** A whole page: `<html lang>`, a title, a heading and a paragraph (`body`: HTML the caller built from escaped text). */
function page(words: Words, heading: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="${words.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(heading)}</title>${head}
<style>body { padding: 10px 15px; font-family: verdana, sans-serif; text-align: center; }</style>
</head>
<body>
<h2>${escapeHtml(heading)}</h2>
${body}
</body>
</html>`;
}

/** The install page: what it is, and the "Add to Slack" link to `url` (Slack's authorize URL with the state). */
export function installPage(words: Words, url: string): string {
  const href = escapeHtml(url);
  const alt = escapeHtml(words.t('slack.oauth.add_to_slack'));
  const button = `<a href="${href}"><img alt="${alt}" height="40" width="139" src="https://platform.slack-edge.com/img/add_to_slack.png" srcset="https://platform.slack-edge.com/img/add_to_slack.png 1x, https://platform.slack-edge.com/img/add_to_slack@2x.png 2x"></a>`;
  return page(
    words,
    words.t('slack.oauth.install_title'),
    `<p>${escapeHtml(words.t('slack.oauth.install_intro'))}</p>\n<p>${button}</p>`,
  );
}

/**
 * The page after an installation: it sends the browser to the Slack app at once (as
 * @slack/oauth's default page does: the workspace's App Home, or an org install's admin page),
 * with links for a browser that does not follow.
 */
export function successPage(words: Words, installation: Installation | OrgInstallation): string {
  const org = installation.isEnterpriseInstall === true;
  const appUrl = org
    ? `${installation.enterpriseUrl ?? ''}manage/organization/apps/profile/${installation.appId ?? ''}/workspaces/add`
    : installation.appId !== undefined
      ? `slack://app?team=${installation.team?.id ?? ''}&id=${installation.appId}`
      : 'slack://open';
  const browserUrl = org ? appUrl : `https://app.slack.com/client/${installation.team?.id ?? ''}`;
  const text = words.t('slack.oauth.success_body', {
    open: `<a href="${escapeHtml(appUrl)}">`,
    browser: `<a href="${escapeHtml(browserUrl)}" target="_blank">`,
    end: '</a>',
  });
  return page(
    words,
    words.t('slack.oauth.success_title'),
    `<p>${text}</p>`,
    `\n<meta http-equiv="refresh" content="0; URL=${escapeHtml(appUrl)}">`,
  );
}

/** The page when an installation failed: why (@slack/oauth's error code) and what to do. */
export function failurePage(words: Words, code: string): string {
  return page(
    words,
    words.t('slack.oauth.failure_title'),
    `<p>${escapeHtml(words.t('slack.oauth.failure_body', { code }))}</p>`,
  );
}

/** The status of a failed redirect, as @slack/oauth's default: 400 for the visitor's state or code, 500 otherwise. */
function failureStatus(code: string): number {
  const theirs: string[] = [ErrorCode.MissingStateError, ErrorCode.InvalidStateError, ErrorCode.MissingCodeError];
  return theirs.includes(code) ? 400 : 500;
}

/** Writes an HTML page. */
function send(res: ServerResponse, status: number, words: Words, html: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Language': words.locale });
  res.end(html);
}

/**
 * The installer options that serve the OAuth pages in the visitor's language (see the file's
 * comment): `installPathOptions` and `callbackOptions` for Bolt's installer.
 * @param installer what each locale's InstallProvider is built with: the App's client id and
 *   secret and its state store (the same state, cookie and life as the App's own installer).
 * @param defaultLocale DEFAULT_LOCALE, for a browser that accepts no shipped language.
 */
export function localizedOAuthPages(
  installer: Pick<InstallProviderOptions, 'clientId' | 'clientSecret' | 'stateStore' | 'stateCookieExpirationSeconds'>,
  defaultLocale: Locale,
): { installPathOptions: InstallPathOptions; callbackOptions: CallbackOptions } {
  const providers = new Map<Locale, InstanceType<typeof InstallProvider>>();
  const providerOf = (locale: Locale) => {
    let provider = providers.get(locale);
    if (!provider) {
      const words = wordsOf(locale);
      provider = new InstallProvider({
        ...installer,
        stateVerification: true,
        renderHtmlForInstallPath: (url) => installPage(words, url),
      });
      providers.set(locale, provider);
    }
    return provider;
  };
  return {
    installPathOptions: {
      beforeRedirection: async (req: IncomingMessage, res: ServerResponse, options?: InstallURLOptions) => {
        if (!options) return true; // No options to build the link from: Bolt's own page.
        const locale = requestLocale(req, defaultLocale);
        res.setHeader('Content-Language', locale);
        await providerOf(locale).handleInstallPath(req, res, {}, options);
        return false;
      },
    },
    callbackOptions: {
      success: (installation, _options, req, res) => {
        const words = wordsOf(requestLocale(req, defaultLocale));
        send(res, 200, words, successPage(words, installation));
      },
      failure: (error, _options, req, res) => {
        const words = wordsOf(requestLocale(req, defaultLocale));
        send(res, failureStatus(error.code), words, failurePage(words, error.code));
      },
    },
  };
}
