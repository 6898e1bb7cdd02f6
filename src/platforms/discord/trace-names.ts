/**
 * What the root span of a Discord interaction says of it (ops/tracing.ts `traceInvocation`):
 * its type (`discord.interaction.type`: Discord's InteractionType number: 2 application command,
 * 3 component, 4 autocomplete, 5 modal submit) and, for a command, its name; never its options.
 */
import type { Attributes } from '@opentelemetry/api';
import type { Interaction } from 'discord.js';

/** The root span's attributes of `interaction`. */
export function interactionAttributes(interaction: Interaction): Attributes {
  const attributes: Attributes = { 'genbot.platform': 'discord', 'discord.interaction.type': interaction.type };
  if (interaction.isCommand() || interaction.isAutocomplete()) attributes['genbot.command'] = interaction.commandName;
  return attributes;
}
