/**
 * Slack slash commands carry one `text` field; options are written `--name value`
 * (e.g. `/imagine a red fox --aspect_ratio landscape --style natural`), and the rest of the
 * text is the command's main option (its first required string option, e.g. `prompt`).
 */
import type { Command } from '../../core/command.ts';

/** Undoes the escaping Slack applies to `&`, `<` and `>` in slash-command text. */
export function unescapeSlackText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Parses slash-command `text` into raw option values, by the command's definition.
 * Only the command's own option names are taken as flags (`--aspect-ratio` and
 * `--aspect_ratio` both work; a value may be "quoted"); any other `--word` stays in the
 * main text. Values are checked later by `checkOptions`.
 * @returns option name → raw string value (a flag with no value maps to `''`).
 */
export function parseSlashText(command: Command, text: string): Record<string, string> {
  const main = command.options.find((o) => o.required && o.type === 'string');
  const flags = new Set(command.options.filter((o) => o !== main).map((o) => o.name));
  const out: Record<string, string> = {};
  const rest = unescapeSlackText(text).replace(
    /(^|\s)--([A-Za-z][\w-]*)(?:(?:\s+|=)("[^"]*"|(?!--)\S+))?(?=\s|$)/g,
    (whole, lead: string, rawName: string, rawValue: string | undefined) => {
      const name = rawName.toLowerCase().replace(/-/g, '_');
      if (!flags.has(name)) return whole;
      out[name] = rawValue === undefined ? '' : rawValue.replace(/^"(.*)"$/s, '$1');
      return lead;
    },
  );
  if (main) out[main.name] = rest.trim();
  return out;
}
