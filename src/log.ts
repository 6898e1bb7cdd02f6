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
