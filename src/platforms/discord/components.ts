/**
 * Interactions other than slash commands on Discord: autocomplete of `model` options (from the
 * cached model lists: at most 25 choices, within the 3 s, an empty list when the service is
 * down) and presses of the bot's buttons (handed to the command named by the button's
 * `custom_id`, `<command>:<args…>`).
 */
import type { AutocompleteInteraction, ButtonInteraction } from 'discord.js';
import { type Command, runComponent, runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { STOP_BUTTON } from '../../core/delivery/stops.ts';
import { conversationKey, parseButtonId } from '../../core/keys.ts';
import { modelChoices } from '../../core/models/catalog.ts';
import type { ComponentContext } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { InteractionReply } from './interactions.ts';
import { invocationUser } from './members.ts';
import { channelKeyOf } from './messages.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { InteractionResponder } from './responder.ts';
import { DISCORD_MESSAGE_LIMITS } from './rest.ts';

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
 * Runs the handler of a pressed button (`<command>:<args…>`; Stop buttons go to the core's
 * stops), as a ComponentContext over the press's {@link InteractionResponder}, made first:
 * the press is deferred with deferUpdate if nothing answered it within the responder's
 * `AUTO_DEFER_MS` (a deferReply once the handler has asked for `reply`, as Reroll does).
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleButton(
  interaction: ButtonInteraction,
  deps: { core: Core; commands: readonly Command[]; log: Logger; rateLimits?: DiscordRateLimits },
  signal: AbortSignal,
): Promise<void> {
  const { command: name, args } = parseButtonId(interaction.customId);
  const command = deps.commands.find((c) => c.name === name);
  const ref = newReference();
  const log = deps.log.child({
    platform: 'discord',
    ref,
    command: `${name}:button`,
    interaction: interaction.id,
    button: interaction.customId,
  });
  const responder = new InteractionResponder(interaction, log, 'update');
  const ctx = componentContext(interaction, responder, deps, { args, signal, log, ref });
  const sendEphemeral = ctx.sendEphemeral;
  try {
    await runInvocation(
      `${name}:button`,
      { platform: 'discord', conversationId: ctx.conversationId, log, ref, reply: { sendEphemeral } },
      deps.core,
      async () => {
        if (name === STOP_BUTTON) await deps.core.stops.press(ctx);
        else await runComponent(command, ctx, deps.core);
      },
    );
  } finally {
    responder.dispose();
  }
}

/**
 * The platform-neutral ComponentContext of a button press: `update` replaces the pressed
 * message, `acknowledge` defers without changing it, `sendEphemeral` tells the presser alone,
 * and `reply` (made on first use) posts new messages, its deferral a new "thinking…" reply.
 */
function componentContext(
  interaction: ButtonInteraction,
  responder: InteractionResponder,
  deps: { core: Core; rateLimits?: DiscordRateLimits },
  press: Pick<ComponentContext, 'args' | 'signal' | 'log' | 'ref'>,
): ComponentContext {
  let reply: InteractionReply | undefined;
  return {
    platform: 'discord',
    get reply() {
      if (!reply) {
        responder.repliesWithMessages();
        reply = new InteractionReply(responder, deps.rateLimits);
      }
      return reply;
    },
    conversationId: conversationKey({
      platform: 'discord',
      guild: interaction.guildId ?? undefined,
      channel: interaction.channelId,
    }),
    channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
    user: invocationUser(interaction.user, interaction.member, interaction.memberPermissions, deps.core.admins),
    limits: DISCORD_MESSAGE_LIMITS,
    update: (message) => responder.update(message),
    acknowledge: () => responder.acknowledge(),
    sendEphemeral: (message) => responder.sendEphemeral(message),
    ...press,
  };
}
