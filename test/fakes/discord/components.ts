/**
 * Button presses: INTERACTION_CREATE of type 3 (message component, `component_type` 2) as
 * Discord sends it when a user presses a button of one of the bot's messages: the envelope
 * of interaction-payload.ts, `data: { custom_id, component_type }` and `message`, the message
 * object that carries the button. The bot answers with callback 6 (DEFERRED_UPDATE_MESSAGE), 7
 * (UPDATE_MESSAGE: replaces that message's content, embeds, components) or 4/5 (a new reply);
 * routes/interactions.ts handles those and the interaction token's webhook routes.
 */
import type { Ctx } from './context.ts';
import { envelope, launch } from './interaction-payload.ts';
import { FakeInteraction, type FakeMessage } from './model.ts';
import type { Json, PressButtonOptions } from './types.ts';
import { installerOf } from './user-install.ts';
import { messageJson } from './wire.ts';

/** The button with `customId` among a message's components (in a Components V2 tree too), if any. */
export function findButton(message: FakeMessage, customId: string): Json | undefined {
  return message.buttons.find((b) => b.custom_id === customId);
}

/**
 * Presses a button (see {@link FakeDiscord.pressButton}).
 * @throws Error for what Discord's client would never send: an unknown, deleted or still
 *   loading message, a message without that button or with it disabled, an ephemeral message
 *   pressed by anyone but the user it was shown to, a message not of the bot or in a DM.
 */
export function pressButton(ctx: Ctx, options: PressButtonOptions): FakeInteraction {
  const { state } = ctx;
  const message = state.messages.get(options.messageId);
  if (!message || message.deleted) throw new Error(`FakeDiscord: no message ${options.messageId}`);
  if (message.author.id !== state.botUser.id)
    throw new Error(`FakeDiscord: message ${message.id} is not the bot's (only its messages carry its buttons)`);
  if (message.loading) throw new Error(`FakeDiscord: message ${message.id} is still loading (no buttons yet)`);
  const button = findButton(message, options.customId);
  if (!button) throw new Error(`FakeDiscord: message ${message.id} has no button ${options.customId}`);
  if (button.disabled === true)
    throw new Error(`FakeDiscord: button ${options.customId} of message ${message.id} is disabled`);
  // On a user install's message, the press runs through that install (Discord names its user).
  const env = envelope(ctx, { ...options, channelId: message.channelId, installer: installerOf(message.interaction) });
  const shownTo = message.interaction?.user.id;
  if (message.ephemeral && shownTo !== undefined && shownTo !== env.user.id) {
    throw new Error(`FakeDiscord: message ${message.id} is ephemeral: only its user sees (and can press) its buttons`);
  }
  const payload: Json = {
    ...env.payload,
    type: 3,
    data: { custom_id: options.customId, component_type: 2 },
    message: messageJson(state, message),
  };
  const commandName = message.interaction?.commandName ?? '';
  const interaction = new FakeInteraction(
    env.id,
    env.token,
    commandName,
    env.guildId,
    env.channel.id,
    env.user,
    payload,
    env.now,
    env.now + state.options.tokenTtlMs,
  );
  interaction.type = 3;
  interaction.customId = options.customId;
  interaction.componentMessage = message;
  return launch(ctx, interaction);
}
