/**
 * The logger Bolt, web-api and Socket Mode are given: pino underneath, with their debug lines
 * stripped of request and response bodies (which may carry users' text and tokens).
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/logger';
import type { Logger } from '../../log.ts';

/**
 * A library's debug line without what may carry a request or response body, headers or a
 * payload (web-api logs `http request body: {…}` and `http request result: {…}`, Bolt its acks'
 * bodies, Socket Mode its envelopes): the words before the first `:`, `{`, `[` or the word
 * body/result/headers/payload, then "(details not logged)". Short plain lines stay whole.
 */
export function withoutBodies(text: string): string {
  const cut = text.search(/[:{[]|\b(?:body|result|headers|payload|envelope|message)\b/i);
  if (cut < 0 && text.length <= 200) return text;
  let head = text.slice(0, cut < 0 ? 200 : cut).trim();
  if (head.endsWith('(')) head = head.slice(0, -1).trimEnd();
  return `${head} (details not logged)`;
}

/** Bolt's logger interface on top of pino; debug lines lose their bodies ({@link withoutBodies}). */
export function boltLogger(log: Logger): SlackLogger {
  let level = LogLevel.INFO;
  return {
    debug: (...m: unknown[]) => {
      if (log.isLevelEnabled('debug')) log.debug(withoutBodies(m.map(String).join(' ')));
    },
    info: (...m: unknown[]) => log.info(m.map(String).join(' ')),
    // web-api warns of each failed attempt of a call; the bot logs each call's outcome itself.
    // Bolt warns of every request it could not authorize; the adapter logs those (oauth.ts
    // UninstalledTeams: once per workspace).
    warn: (...m: unknown[]) => {
      const text = m.map(String).join(' ');
      if (/^(http request failed|authorization of incoming event did not succeed)/i.test(text)) log.debug(text);
      else log.warn(text);
    },
    error: (...m: unknown[]) => log.error(m.map(String).join(' ')),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
