/**
 * Structured logging (pino, JSON lines) with every configured secret scrubbed from every line.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/**
 * Replaces each secret (and its JSON-escaped form) in `text` with {@link REDACTED}.
 * Secrets shorter than 6 characters are ignored: they cannot be told from ordinary words.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
  }
  return out;
}

/**
 * Builds the bot's logger.
 * @param options.level pino level name (`info`, `debug`, `silent`, …).
 * @param options.secrets values never to be written (API keys, tokens, signing secrets).
 * @param options.destination where lines go; stdout by default (tests pass a collecting stream).
 */
export function createLogger(options: {
  level: string;
  secrets: readonly string[];
  destination?: DestinationStream;
}): Logger {
  const secrets = [...options.secrets];
  return pino(
    {
      level: options.level,
      base: undefined,
      // `hooks.streamWrite` sees each finished line: the last place a secret could slip through.
      hooks: { streamWrite: (line: string) => scrubSecrets(line, secrets) },
      redact: { paths: ['*.headers.authorization', '*.authorization', '*.token', '*.apiKey'], censor: REDACTED },
    },
    options.destination ?? pino.destination(1),
  );
}

/**
 * Logs a promise rejection that nothing handled (a library's background work, such as a
 * Socket Mode reconnect that finally failed) as one error line, instead of letting Node 20
 * end the bot for it; the discord.js guide sets up the same. Secrets are scrubbed as on
 * every line.
 * @param target the process (tests pass an EventEmitter).
 * @returns a function that removes the handler.
 */
export function logUnhandledRejections(log: Logger, target: NodeJS.EventEmitter = process): () => void {
  const handler = (reason: unknown) => log.error({ err: reason }, 'unhandled promise rejection (outside any command); the bot goes on');
  target.on('unhandledRejection', handler);
  return () => target.off('unhandledRejection', handler);
}
