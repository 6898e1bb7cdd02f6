/**
 * How users write a command and its options on each platform, for help texts and usage hints:
 * on Slack in the command's text (`/imagine a fox --style natural`, parsed by
 * platforms/slack/options.ts), on Discord in the client's option pickers (`style:`).
 */
import type { Command, CommandOption } from './command.ts';

/** The main (free text) option of a command: its first required string option (Slack's text without a flag). */
export function mainOptionOf(command: Command): CommandOption | undefined {
  return command.options.find((o) => o.required && o.type === 'string');
}

/** The values an option takes, as shown: `vivid|natural|…`, `<integer>`, `<https URL or Slack file link>`. */
function valueForm(option: CommandOption, platform: 'discord' | 'slack'): string {
  if (option.choices) return option.choices.map((c) => c.value).join('|');
  if (option.type === 'attachment') return platform === 'slack' ? '<https URL or Slack file link>' : '<file>';
  return `<${option.type === 'string' ? 'text' : option.type}>`;
}

/** How an option is written on Slack: `--style vivid|natural|…`, `--seed <integer>`, `--json`. */
export function flagForm(option: CommandOption): string {
  if (option.type === 'boolean') return `--${option.name}`;
  return `--${option.name} ${valueForm(option, 'slack')}`;
}

/**
 * How an option is written on a platform: Slack's {@link flagForm}; on Discord the option's name
 * as its picker shows it, with its values: `style: vivid|natural|…`, `enhance: true|false`.
 */
export function optionForm(option: CommandOption, platform: 'discord' | 'slack'): string {
  if (platform === 'slack') return flagForm(option);
  return `${option.name}: ${option.type === 'boolean' ? 'true|false' : valueForm(option, platform)}`;
}

/**
 * A command's form in one line: Slack `/chat <prompt> [--option value …]`, Discord
 * `/chat prompt: <text> [options]`.
 */
export function invocationForm(command: Command, platform: 'discord' | 'slack'): string {
  const main = mainOptionOf(command);
  const others = command.options.filter((o) => o !== main).length > 0;
  if (platform === 'slack')
    return `/${command.name}${main ? ` <${main.name}>` : ''}${others ? ' [--option value …]' : ''}`;
  const required = command.options.filter((o) => o.required).map((o) => ` ${optionForm(o, platform)}`);
  return `/${command.name}${required.join('')}${command.options.some((o) => !o.required) ? ' [options]' : ''}`;
}
