/**
 * Interactions other than slash commands on Discord: autocomplete of `model` options (from the
 * cached model lists: at most 25 choices, within the 3 s, an empty list when the service is
 * down) and presses of the bot's buttons (handed to the command named by the button's
 * `custom_id`, `<command>:<args…>`).
 */
import { type AutocompleteInteraction, type ButtonInteraction, MessageFlags } from 'discord.js';
import { type Command, runComponent, runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { STOP_BUTTON } from '../../core/delivery/stops.ts';
import { conversationKey } from '../../core/keys.ts';
import { modelChoices } from '../../core/models/catalog.ts';
import type { ComponentContext, OutgoingMessage } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { AUTO_DEFER_MS, InteractionReply } from './interactions.ts';
import { invocationUser } from './members.ts';
import { channelKeyOf } from './messages.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { DISCORD_MESSAGE_LIMITS, editPayloadOf, payloadOf } from './rest.ts';

/** Longest wait for the model lists when none are cached, in ms (Discord allows 3 s for the whole answer). */
const AUTOCOMPLETE_WAIT_MS = 2_000;

/** Answers an autocomplete interaction from the option's source; never throws. */
export async function handleAutocomplete(
  interaction: AutocompleteInteraction,
  deps: { core: Core; commands: readonly Command[]; log: Logger },
): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const option = deps.commands
    .find((c) => c.name === interaction.commandName)
    ?.options.find((o) => o.name === focused.name);
  const kind =
    option?.autocomplete === 'image_models' ? 'image' : option?.autocomplete === 'text_models' ? 'text' : undefined;
  const lists = kind ? await deps.core.catalog.quick(AUTOCOMPLETE_WAIT_MS) : undefined;
  const choices = kind ? modelChoices(lists, kind, String(focused.value ?? '')) : [];
  await interaction
    .respond(choices)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, command: interaction.commandName }, 'autocomplete answer failed'),
    );
}

/**
 * Runs the handler of a pressed button (`<command>:<args…>`), as a ComponentContext whose
 * `update` replaces the message that carries the button.
 */
export async function handleButton(
  interaction: ButtonInteraction,
  deps: { core: Core; commands: readonly Command[]; log: Logger; rateLimits?: DiscordRateLimits },
  signal: AbortSignal,
): Promise<void> {
  const [name, ...args] = interaction.customId.split(':');
  const command = deps.commands.find((c) => c.name === name);
  const ref = newReference();
  const log = deps.log.child({ platform: 'discord', ref, interaction: interaction.id, button: interaction.customId });
  let deferring: Promise<unknown> | undefined;
  const timer = setTimeout(() => {
    deferring = interaction.deferUpdate().catch(() => undefined);
  }, AUTO_DEFER_MS);
  timer.unref();
  const sendEphemeral = async (message: string | OutgoingMessage) => {
    clearTimeout(timer);
    const m = typeof message === 'string' ? { content: message } : message;
    const payload = {
      ...payloadOf({ ...m, content: m.content.slice(0, DISCORD_MESSAGE_LIMITS.maxChars) }),
      flags: MessageFlags.Ephemeral as const,
    };
    try {
      await deferring;
      if (interaction.deferred || interaction.replied) await interaction.followUp(payload);
      else await interaction.reply(payload);
    } catch (error) {
      log.warn({ err: error }, 'could not answer a button press');
    }
  };
  let reply: InteractionReply | undefined;
  const ctx: ComponentContext = {
    platform: 'discord',
    ref,
    // Made on first use: its deferral (a new "thinking…" message) is for handlers that post.
    get reply() {
      clearTimeout(timer);
      reply ??= new InteractionReply(interaction, log, deps.rateLimits);
      return reply;
    },
    conversationId: conversationKey({
      platform: 'discord',
      guild: interaction.guildId ?? undefined,
      channel: interaction.channelId,
    }),
    channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
    user: invocationUser(interaction.user, interaction.member, interaction.memberPermissions, deps.core.admins),
    args,
    limits: DISCORD_MESSAGE_LIMITS,
    signal,
    log,
    update: async (message) => {
      clearTimeout(timer);
      await deferring;
      if (interaction.deferred || interaction.replied) await interaction.editReply(editPayloadOf(message));
      else await interaction.update(editPayloadOf(message));
    },
    acknowledge: async () => {
      clearTimeout(timer);
      await deferring;
      if (interaction.deferred || interaction.replied) return;
      await interaction
        .deferUpdate()
        .catch((error: unknown) => log.warn({ err: error }, 'could not acknowledge a button press'));
    },
    sendEphemeral,
  };
  try {
    await runInvocation(
      `${name}:button`,
      { platform: 'discord', conversationId: ctx.conversationId, log, ref, reply: { sendEphemeral } },
      deps.core,
      async () => {
        if (name === STOP_BUTTON) {
          await deps.core.stops.press(ctx);
          return;
        }
        await runComponent(command, ctx, deps.core);
      },
    );
  } finally {
    clearTimeout(timer);
  }
}
