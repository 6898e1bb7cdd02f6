/**
 * The `.env` file as `npm run setup` reads and writes it: read with Node's own parser (what
 * `process.loadEnvFile` at `npm start` uses), changed line by line so that every other
 * variable, comment and blank line stays as it was, and written atomically (a temporary file in
 * the same folder, renamed over the old one) with mode 0600 (owner only: it holds secrets).
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { SetupProblem } from './setup-answers.ts';

/** A `.env` file: its text and its variables (both empty when the file does not exist). */
export interface EnvFile {
  text: string;
  values: Record<string, string>;
}

/** Reads `path` (nothing when it does not exist). */
export function readEnvFile(path: string): EnvFile {
  if (!existsSync(path)) return { text: '', values: {} };
  const text = readFileSync(path, 'utf8');
  return { text, values: { ...parseEnv(text) } as Record<string, string> };
}

/**
 * A value as a `.env` line writes it: bare when plain (words of URL and token characters between
 * single spaces: what Docker's `--env-file`, which keeps quotes, reads the same), else
 * single-quoted (read literally; `#` would begin a comment).
 */
function quoted(name: string, value: string): string {
  if (/^(?:[A-Za-z0-9_.:/@+=,%-]+(?: [A-Za-z0-9_.:/@+=,%-]+)*)?$/.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  if (!/["\\]/.test(value)) return `"${value}"`;
  throw new SetupProblem(`${name} holds both kinds of quotes: it cannot be written to a .env file.`);
}

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;

/**
 * The file's text with `changes` applied: a variable set to a string is written in place of its
 * first line (its later duplicates dropped) or appended; one set to undefined loses its lines.
 * Every other line is kept.
 * @throws SetupProblem when the result would not read back as intended (a multi-line value
 *   around a changed line), so that a file is never written wrong.
 */
export function changedEnvText(file: EnvFile, changes: Record<string, string | undefined>): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const line of file.text.split('\n')) {
    const name = LINE.exec(line)?.[1];
    if (name === undefined || !Object.hasOwn(changes, name)) {
      lines.push(line);
      continue;
    }
    const value = changes[name];
    if (value !== undefined && !seen.has(name)) lines.push(`${name}=${quoted(name, value)}`);
    seen.add(name);
  }
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  const added = Object.entries(changes).filter(([name, value]) => value !== undefined && !seen.has(name));
  if (added.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push('# Written by npm run setup.');
    for (const [name, value] of added) lines.push(`${name}=${quoted(name, value as string)}`);
  }
  const text = `${lines.join('\n')}\n`;
  const expected: Record<string, string> = { ...file.values };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete expected[name];
    else expected[name] = value;
  }
  const read = parseEnv(text) as Record<string, string>;
  const differs = [...new Set([...Object.keys(expected), ...Object.keys(read)])].filter((n) => read[n] !== expected[n]);
  if (differs.length > 0)
    throw new SetupProblem(
      `The .env file could not be updated safely (around ${differs.join(', ')}): edit it by hand.`,
    );
  return text;
}

/** Writes `text` to `path` atomically (temporary file in the same folder, then rename), mode 0600. */
export function writeEnvFile(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
