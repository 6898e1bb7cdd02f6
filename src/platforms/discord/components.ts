/**
 * Interactions other than slash commands on Discord: autocomplete of `model` options (from the
 * cached model lists: at most 25 choices, within the 3 s, an empty list when the service is
 * down) and presses of the bot's buttons (handed to the command named by the button's
 * `custom_id`, `<command>:<args…>`).
 */

import type {
  AutocompleteInteraction,
  ButtonInteraction,
  Client,
  Attachment as DiscordAttachment,
  Message,
} from 'discord.js';
import { type Command, runComponent, runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { STOP_BUTTON } from '../../core/delivery/stops.ts';
import { REGENERATE_BUTTON } from '../../core/features/answer-state.ts';
import { FEEDBACK_BUTTON, pressFeedback } from '../../core/features/feedback.ts';
import { pressRegenerate } from '../../core/features/regenerate.ts';
import { conversationKey, parseButtonId, parsePostedImageRef, postedImageRef } from '../../core/keys.ts';
import type { Downloader } from '../../core/media/download.ts';
import { modelChoices } from '../../core/models/catalog.ts';
import type { ComponentContext, PostedImage } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { interactionBudget } from './budget.ts';
import { galleryImages } from './components-v2.ts';
import { isGone } from './errors.ts';
import { formModal } from './feedback.ts';
import { InteractionReply } from './interactions.ts';
import { interactionLocale } from './locale.ts';
import { interactionUser, userInstallUser } from './members.ts';
import { attachmentOf, channelKeyOf } from './messages.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { InteractionResponder } from './responder.ts';
import { DISCORD_MESSAGE_LIMITS } from './rest.ts';
import { userInstallKeys } from './user-install.ts';

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
 * stops, Regenerate to features/regenerate.ts, 👍 / 👎 to features/feedback.ts), as a ComponentContext over the press's {@link InteractionResponder}, made first:
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
  const responder = new InteractionResponder(interaction, log, 'update', interactionBudget(interaction, deps));
  const ctx = componentContext(interaction, responder, deps, { args, signal, log, ref });
  const sendEphemeral = ctx.sendEphemeral;
  try {
    await runInvocation(
      `${name}:button`,
      {
        platform: 'discord',
        conversationId: ctx.conversationId,
        locale: ctx.locale,
        log,
        ref,
        reply: { sendEphemeral },
      },
      deps.core,
      async () => {
        if (name === STOP_BUTTON) await deps.core.stops.press(ctx);
        else if (name === REGENERATE_BUTTON) await pressRegenerate(ctx, deps.core);
        else if (name === FEEDBACK_BUTTON) await pressFeedback(ctx, deps.core);
        else await runComponent(command, ctx, deps.core);
      },
    );
  } finally {
    responder.dispose();
  }
}

/** What the bot reads of an image file of a message: an attachment's fields (messages.ts `attachmentOf`). */
type ImageFile = Pick<DiscordAttachment, 'id' | 'name' | 'url' | 'contentType' | 'size'>;

/**
 * The image files of a message, in order: its image attachments, then the images its
 * components show from its uploads (a Components V2 gallery: Discord leaves those out of
 * `attachments`; components-v2.ts `galleryImages`). Their size is the attachment's, 0 (not
 * reported) for a gallery's.
 */
function imageFilesOf(message: Message): ImageFile[] {
  const attached = message.attachments.filter((a) => a.contentType?.startsWith('image/') === true);
  const shown = galleryImages(message.components.map((c) => c.toJSON()));
  return [...attached.values(), ...shown.map((g) => ({ ...g, contentType: g.contentType ?? null, size: 0 }))];
}

/** The first image of a message ({@link imageFilesOf}), with its reference (`discord:<channel>:<message>`); undefined when it has none. */
function imageOf(message: Message, downloader: Downloader): PostedImage | undefined {
  const [file] = imageFilesOf(message);
  if (!file) return undefined;
  return {
    ref: postedImageRef({ platform: 'discord', channel: message.channelId, message: message.id }),
    file: attachmentOf(file, 'message', downloader),
  };
}

/**
 * An image of a message by its reference (ComponentContext.postedImage; an edited mention's
 * images): the message fetched again with the bot token (GET /channels/:id/messages/:id), its
 * attachment URLs fresh; the attachment the reference names (a user's, by id; in a gallery, by
 * its item's `attachment_id`), else the message's first image (one the bot posted).
 * @returns undefined for another platform's reference, a channel, message or attachment that is
 *   gone, or a message without an image.
 * @throws DiscordAPIError for any other refusal (a missing permission); network errors.
 */
export async function postedDiscordImage(
  client: Client,
  ref: string,
  downloader: Downloader,
): Promise<PostedImage | undefined> {
  const at = parsePostedImageRef(ref);
  if (at?.platform !== 'discord') return undefined;
  try {
    const channel = await client.channels.fetch(at.channel);
    if (!channel?.isTextBased()) return undefined;
    const message = await channel.messages.fetch(at.message);
    if (!at.attachment) return imageOf(message, downloader);
    const file = message.attachments.get(at.attachment) ?? imageFilesOf(message).find((f) => f.id === at.attachment);
    return file && { ref, file: attachmentOf(file, 'message', downloader, message) };
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

/**
 * The platform-neutral ComponentContext of a button press: `update` replaces the pressed
 * message, `acknowledge` defers without changing it, `sendEphemeral` tells the presser alone,
 * `reply` (made on first use) posts new messages, its deferral a new "thinking…" reply,
 * `replyInPlace` writes over the pressed message (deferUpdate, then `@original`), `openForm`
 * answers with a modal (the press's first answer: feedback.ts), and
 * `pressedImage` / `postedImage` find an image the bot posted (the pressed message's, as the
 * press carries it; another message's, fetched again). Where the bot is not a member (a press on
 * a user install's message: user-install.ts), the press's conversation is that install's, and no
 * message is fetched (the bot's token would be refused): only the pressed message's own images are
 * found, others by the bytes kept with them.
 */
function componentContext(
  interaction: ButtonInteraction,
  responder: InteractionResponder,
  deps: { core: Core; rateLimits?: DiscordRateLimits },
  press: Pick<ComponentContext, 'args' | 'signal' | 'log' | 'ref'>,
): ComponentContext {
  let reply: InteractionReply | undefined;
  const userInstall = userInstallKeys(interaction);
  return {
    platform: 'discord',
    locale: interactionLocale(interaction),
    get reply() {
      if (!reply) {
        responder.repliesWithMessages();
        reply = new InteractionReply(responder, deps.rateLimits);
      }
      return reply;
    },
    ...(userInstall ?? {
      conversationId: conversationKey({
        platform: 'discord',
        guild: interaction.guildId ?? undefined,
        channel: interaction.channelId,
      }),
      channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
    }),
    user: userInstall
      ? userInstallUser(interaction.user, deps.core.admins)
      : interactionUser(interaction, deps.core.admins),
    limits: DISCORD_MESSAGE_LIMITS,
    update: (message) => responder.update(message),
    replyInPlace: () => new InteractionReply(responder, deps.rateLimits, 'update'),
    acknowledge: () => responder.acknowledge(),
    sendEphemeral: (message) => responder.sendEphemeral(message),
    openForm: (form) => responder.showModal(formModal(form)),
    pressedImage: async () => imageOf(interaction.message, deps.core.downloader),
    postedImage: async (ref) =>
      userInstall ? undefined : postedDiscordImage(interaction.client, ref, deps.core.downloader),
    ...press,
  };
}
