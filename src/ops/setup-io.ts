/**
 * What `npm run setup` asks with and what it prints through: a {@link Prompter} (the questions;
 * @clack/prompts in a terminal, a script of answers in a unit test) and a {@link Reporter} (its
 * findings and notes; clack's log in a terminal, plain lines unattended). Every line a Reporter
 * prints passes through {@link scrubbing} first, so no secret the setup knows is ever printed.
 */
import * as clack from '@clack/prompts';
import { scrubSecrets } from '../log.ts';

/** Thrown when the person at the terminal cancels a question (Ctrl-C, Escape). */
export class SetupCancelled extends Error {
  constructor() {
    super('Setup cancelled: nothing was written.');
    this.name = 'SetupCancelled';
  }
}

/** One text question. `validate` returns the problem in a sentence, or undefined when the answer is good. */
export interface TextQuestion {
  message: string;
  /** Shown and returned for an empty answer (never for a secret). */
  defaultValue?: string | undefined;
  placeholder?: string | undefined;
  validate?: ((value: string) => string | undefined) | undefined;
}

/** A choice among options (`hint`: shown beside the highlighted one). */
export interface SelectQuestion<T extends string> {
  message: string;
  options: ReadonlyArray<{ value: T; label: string; hint?: string }>;
  initialValue?: T | undefined;
}

/** Asks the questions; each method throws {@link SetupCancelled} when the person cancels. */
export interface Prompter {
  /** A line of text, shown as typed. */
  text(question: TextQuestion): Promise<string>;
  /** A secret: masked as typed, never shown again; `''` when nothing was typed. */
  secret(question: Omit<TextQuestion, 'defaultValue' | 'placeholder'>): Promise<string>;
  /** One choice among `options`; resolves with the chosen option's value. */
  select<T extends string>(question: SelectQuestion<T>): Promise<T>;
  /** Yes or no. */
  confirm(question: { message: string; initialValue: boolean }): Promise<boolean>;
}

/** Prints what the setup finds and says. */
export interface Reporter {
  /** The title of a part of the setup ("The generation service"). */
  step(title: string): void;
  ok(text: string): void;
  fail(text: string): void;
  /** Passed, but the operator should act (the doctor's warnings: an unsupported Node.js). */
  warn(text: string): void;
  info(text: string): void;
  /** A block printed as it is (a manifest, links), under a title. */
  block(title: string, body: string): void;
  /** The last line. */
  end(text: string): void;
}

const answered = <T>(value: T): Exclude<T, symbol> => {
  if (clack.isCancel(value)) throw new SetupCancelled();
  return value as Exclude<T, symbol>;
};

/** The prompts of @clack/prompts on the process's terminal. */
export const clackPrompter: Prompter = {
  async text(q) {
    return answered(
      await clack.text({
        message: q.message,
        // The current value, shown and editable; an emptied line answers it too.
        ...(q.defaultValue
          ? { initialValue: q.defaultValue, defaultValue: q.defaultValue }
          : q.placeholder
            ? { placeholder: q.placeholder }
            : {}),
        validate: (value) => q.validate?.(value || q.defaultValue || ''),
      }),
    );
  },
  async secret(q) {
    return answered(await clack.password({ message: q.message, validate: (value) => q.validate?.(value ?? '') }));
  },
  async select<T extends string>(q: SelectQuestion<T>) {
    const options = q.options.map((o) => ({ value: o.value, label: o.label, ...(o.hint ? { hint: o.hint } : {}) }));
    return answered(
      await clack.select<T>({
        message: q.message,
        options: options as Parameters<typeof clack.select<T>>[0]['options'],
        ...(q.initialValue ? { initialValue: q.initialValue as T } : {}),
      }),
    );
  },
  async confirm(q) {
    return answered(await clack.confirm(q));
  },
};

/** clack's log lines, for a terminal. */
export const clackReporter: Reporter = {
  step: (title) => clack.log.step(title),
  ok: (text) => clack.log.success(text),
  fail: (text) => clack.log.error(text),
  warn: (text) => clack.log.warn(text),
  info: (text) => clack.log.info(text),
  block: (title, body) => clack.note(body, title),
  end: (text) => clack.outro(text),
};

/** Plain lines on `write` (stdout unattended): `✓`, `✗`, titles between blank lines. */
export function plainReporter(write: (text: string) => void): Reporter {
  return {
    step: (title) => write(`\n== ${title}\n`),
    ok: (text) => write(`✓ ${text}\n`),
    fail: (text) => write(`✗ ${text}\n`),
    warn: (text) => write(`! ${text}\n`),
    info: (text) => write(`  ${text}\n`),
    block: (title, body) => write(`${title}\n${body}\n`),
    end: (text) => write(`\n${text}\n`),
  };
}

/** `reporter` with every text scrubbed of the secrets `secrets()` returns when it prints. */
export function scrubbing(reporter: Reporter, secrets: () => readonly string[]): Reporter {
  const clean = (text: string) => scrubSecrets(text, secrets());
  return {
    step: (title) => reporter.step(clean(title)),
    ok: (text) => reporter.ok(clean(text)),
    fail: (text) => reporter.fail(clean(text)),
    warn: (text) => reporter.warn(clean(text)),
    info: (text) => reporter.info(clean(text)),
    block: (title, body) => reporter.block(clean(title), clean(body)),
    end: (text) => reporter.end(clean(text)),
  };
}
