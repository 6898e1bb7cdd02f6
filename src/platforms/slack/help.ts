/**
 * `/<command> help` on Slack, where slash commands have no option pickers: every option with
 * its values and range, the model choices where Discord would autocomplete them, and examples.
 */
import { type Command, type CommandOption, rangeOf } from '../../core/command.ts';
import { type ModelLists, modelChoices } from '../../core/models/catalog.ts';
import type { OutgoingMessage } from '../../core/platform.ts';
import { flagForm, mainOptionOf } from './options.ts';

/** Models listed in help for one option, at most this many (the rest: "and N more"). */
const MAX_LISTED_MODELS = 25;

function optionLine(option: CommandOption, lists: ModelLists | undefined): string {
  const parts = [option.description];
  const range = rangeOf(option);
  if (range) parts.push(range);
  if (option.choices) parts.push(`one of ${option.choices.map((c) => c.value).join(', ')}`);
  if (option.autocomplete) {
    const kind = option.autocomplete === 'image_models' ? 'image' : 'text';
    const all = modelChoices(lists, kind, '', 1000).map((c) => c.value);
    const shown = all.slice(0, MAX_LISTED_MODELS).join(', ');
    parts.push(
      lists
        ? `models: ${shown || 'none listed'}${all.length > MAX_LISTED_MODELS ? `, and ${all.length - MAX_LISTED_MODELS} more` : ''}`
        : 'models: the service did not answer; try again later',
    );
  }
  return parts.join(' · ');
}

/**
 * The help of one command as a card: the form with the main text first, one field per
 * option, and the examples.
 * @param lists the model lists (autocomplete sources); undefined when the service is down.
 */
export function helpMessage(command: Command, lists: ModelLists | undefined): OutgoingMessage {
  const main = mainOptionOf(command);
  const fields = command.options
    .filter((o) => o !== main)
    .map((o) => ({ name: flagForm(o), value: optionLine(o, lists) }));
  const examples = (command.examples ?? []).map((e) => `\`/${command.name}${e ? ` ${e}` : ''}\``).join('\n');
  return {
    content: '',
    cards: [
      {
        title: `/${command.name}: ${command.description}`,
        description: `\`/${command.name}${main ? ` <${main.name}>` : ''}${fields.length ? ' [--option value …]' : ''}\`${command.adminOnly ? ' (admins only)' : ''}${examples ? `\nExamples:\n${examples}` : ''}`,
        fields,
        footer: 'Text in quotes is taken as written. Options may come before or after the text.',
      },
    ],
  };
}
