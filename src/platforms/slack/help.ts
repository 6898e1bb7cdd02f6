/**
 * `/<command> help` on Slack, where slash commands have no option pickers: every option with
 * its values and range, the model choices where Discord would autocomplete them, and examples
 * (the card is the core's, core/features/help.ts, which /help shows for every command).
 */
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { commandCard } from '../../core/features/help.ts';
import type { Words } from '../../core/i18n/words.ts';
import type { ModelLists } from '../../core/models/catalog.ts';
import type { OutgoingMessage, ReplyChannel } from '../../core/platform.ts';

/**
 * The help of one command as a card in `words` (the user's: it is shown to them alone): the form
 * with the main text first, one field per option (models named), and the examples.
 * @param lists the model lists (autocomplete sources); undefined when the service is down.
 */
export function helpMessage(command: Command, lists: ModelLists | undefined, words: Words): OutgoingMessage {
  return { content: '', cards: [commandCard(command, lists, 'slack', true, words)] };
}

/**
 * `/<command> help`: the command's help to its user alone, in their language (`user`: users.info's
 * locale, looked up when the command arrived), with the model lists cached or quickly fetched.
 */
export async function showCommandHelp(
  command: Command,
  reply: Pick<ReplyChannel, 'sendEphemeral'>,
  core: Core,
  user: Promise<string | undefined>,
): Promise<void> {
  const [lists, words] = await Promise.all([core.catalog.quick(), core.languages.forUser({ locale: { user } })]);
  await reply.sendEphemeral(helpMessage(command, lists, words));
}
