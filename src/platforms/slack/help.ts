/**
 * `/<command> help` on Slack, where slash commands have no option pickers: every option with
 * its values and range, the model choices where Discord would autocomplete them, and examples
 * (the card is the core's, core/features/help.ts, which /help shows for every command).
 */
import type { Command } from '../../core/command.ts';
import { commandCard } from '../../core/features/help.ts';
import type { ModelLists } from '../../core/models/catalog.ts';
import type { OutgoingMessage } from '../../core/platform.ts';

/**
 * The help of one command as a card: the form with the main text first, one field per
 * option (models named), and the examples.
 * @param lists the model lists (autocomplete sources); undefined when the service is down.
 */
export function helpMessage(command: Command, lists: ModelLists | undefined): OutgoingMessage {
  return { content: '', cards: [commandCard(command, lists, 'slack', true)] };
}
