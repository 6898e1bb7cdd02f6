/**
 * Slack slash commands carry one `text` field; options are written `--name value`
 * (e.g. `/imagine a red fox --aspect_ratio landscape --style natural`), and the rest of the
 * text is the command's main option (its first required string option, e.g. `prompt`).
 */
import type { Command } from '../../core/command.ts';
import { unescapeSlackText } from './text.ts';

/** Words a boolean flag may take as its value (`--json yes`); any other next word is text. */
const BOOLEAN_WORD = /^(true|false|yes|no)$/i;

/**
 * Parses slash-command `text` into raw option values, by the command's definition.
 * Only the command's own option names are taken as flags (`--aspect-ratio` and
 * `--aspect_ratio` both work; a value may be "quoted"); any other `--word` stays in the
 * main text. A boolean flag alone means true (`/chat list three colours --json`), and takes
 * the next word only when it is true/false/yes/no. Values are checked later by `checkOptions`.
 * @returns option name → raw string value (another flag with no value maps to `''`, which
 *   `checkOptions` reports).
 */
export function parseSlashText(command: Command, text: string): Record<string, string> {
  const main = command.options.find((o) => o.required && o.type === 'string');
  const types = new Map(command.options.filter((o) => o !== main).map((o) => [o.name, o.type]));
  const out: Record<string, string> = {};
  const rest = unescapeSlackText(text).replace(
    /(^|\s)--([A-Za-z][\w-]*)(?:(\s+|=)("[^"]*"|(?!--)\S+))?(?=\s|$)/g,
    (whole, lead: string, rawName: string, separator: string | undefined, rawValue: string | undefined) => {
      const name = rawName.toLowerCase().replace(/-/g, '_');
      const type = types.get(name);
      if (type === undefined) return whole;
      if (type === 'boolean' && rawValue !== undefined && separator !== '=' && !BOOLEAN_WORD.test(rawValue)) {
        // `--json give me a list`: the flag alone; the word after it belongs to the text.
        out[name] = 'true';
        return `${lead}${rawValue}`;
      }
      out[name] = rawValue === undefined ? (type === 'boolean' ? 'true' : '') : rawValue.replace(/^"(.*)"$/s, '$1');
      return lead;
    },
  );
  if (main) out[main.name] = rest.trim();
  return out;
}
