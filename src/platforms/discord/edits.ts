/**
 * Edits of messages that mentioned the bot (gateway MESSAGE_UPDATE, discord.js `messageUpdate`):
 * within EDIT_REANSWER_MINUTES of the message, its author's edit of the text re-answers it in
 * place (core/features/regenerate.ts): one new request with the edited text, the new answer
 * written over the bot's answer messages (MessageReply.messageAt: the bot token's Edit
 * Message). MESSAGE_UPDATE also comes for the bot's own edits, for embeds Discord adds (a link's preview: no `edited_timestamp`) and for other people's
 * messages: those are left alone at once.
 */
import type { Message, PartialMessage } from 'discord.js';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { editToReanswer, reanswerEdit } from '../../core/features/regenerate.ts';
import { messageRef, parseMessageRef } from '../../core/keys.ts';
import { type Logger, newReference } from '../../log.ts';
import { postedDiscordImage } from './components.ts';
import { messageContext } from './mentions.ts';
import { isAddressedToBot, MessageReply, promptOf } from './messages.ts';

/**
 * Re-answers an edited mention when the edit calls for it (regenerate.ts `editToReanswer`: the
 * window, the asker, a changed text, once per edit); otherwise does nothing. Never throws.
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleEdit(
  message: Message | PartialMessage,
  deps: { core: Core; log: Logger; botId: string },
  signal: AbortSignal,
): Promise<void> {
  if (message.partial || message.editedTimestamp === null || !isAddressedToBot(message, deps.botId)) return;
  const { core } = deps;
  const text = promptOf(message, deps.botId);
  const edit = {
    mention: messageRef({ platform: 'discord', channel: message.channelId, message: message.id }),
    authorId: message.author.id,
    text,
    sentAt: message.createdTimestamp,
    editedAt: message.editedTimestamp,
  };
  const found = await editToReanswer(core, edit, deps.log);
  if (!found) return;
  const answer = parseMessageRef(found.link.answer);
  if (answer?.platform !== 'discord' || answer.channel !== message.channelId) return;
  const ref = newReference();
  const log = deps.log.child({
    platform: 'discord',
    ref,
    command: 'edit',
    message: message.id,
    channel: message.channelId,
  });
  const reply = new MessageReply(message, log, core.scheduler);
  const ctx = messageContext(message, core, { signal, log, ref, reply });
  try {
    // The question's images are found again by their references (the bot token reads the messages).
    const images = (ref: string) => postedDiscordImage(message.client, ref, core.downloader);
    await runInvocation('edit', ctx, core, () => reanswerEdit(ctx, core, found, text, images));
  } finally {
    reply.dispose();
  }
}
