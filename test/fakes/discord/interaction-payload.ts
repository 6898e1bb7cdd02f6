/**
 * INTERACTION_CREATE as Discord sends it in a guild channel or thread: the envelope every type
 * shares (the member with their permissions in the channel, overwrites applied, `app_permissions`, `attachment_size_limit`, a fresh
 * interaction token), and the `data` of a chat-input command (type 2, with the registered
 * command's id and option types, attachment options in `data.resolved.attachments`) and of
 * its autocomplete (type 4, the typed option marked `focused`). Button presses (type 3) are
 * in components.ts.
 */
import { randomBytes } from 'node:crypto';
import { userAttachment } from './attachments.ts';
import { checkCommandShown } from './command-permissions.ts';
import { ALL_PERMISSIONS, DEFAULT_USER, MEMBER_PERMISSIONS } from './constants.ts';
import type { Ctx } from './context.ts';
import { permissionsIn } from './member-permissions.ts';
import { type FakeAttachment, FakeAutocomplete, type FakeChannel, FakeInteraction, type FakeUser } from './model.ts';
import type {
  DispatchAutocompleteOptions,
  DispatchInteractionOptions,
  FakeCommand,
  InvokingUser,
  Json,
  OptionValue,
} from './types.ts';
import { checkUserInstallable, installationFields } from './user-install.ts';
import { snowflake } from './util.ts';
import { attachmentJson, channelJson, memberJson, userJson } from './wire.ts';

/** Who interacts, where, and with which rights. */
export interface Invoker {
  channelId?: string | undefined;
  user?: InvokingUser | undefined;
  admin?: boolean | undefined;
  permissions?: string | undefined;
  /** The user's client language (`locale`); default `en-US`. */
  locale?: string | undefined;
  /** The guild's preferred locale as the interaction carries it (`guild_locale`, `guild.locale`); default the guild's. */
  guildLocale?: string | undefined;
  /** Where the bot is not a member: whose install the interaction runs through (default: the user's own). */
  installer?: string | undefined;
}

/** The envelope of an interaction, before its type and `data` are added. */
export interface Envelope {
  id: string;
  token: string;
  now: number;
  channel: FakeChannel;
  guildId: string;
  user: FakeUser;
  /** Every field but `type` and `data`. */
  payload: Json;
}

/**
 * The shared part of INTERACTION_CREATE for `invoker`.
 * @throws Error when no bot is connected, the channel is unknown or a DM.
 */
export function envelope(ctx: Ctx, invoker: Invoker): Envelope {
  const { state } = ctx;
  if (ctx.gateway.readySessions === 0)
    throw new Error('FakeDiscord: no gateway session is ready to receive an interaction');
  const channel = state.channels.get(invoker.channelId ?? state.channelList()[0]!.id);
  if (!channel) throw new Error(`FakeDiscord: unknown channel ${invoker.channelId}`);
  if (channel.guildId === undefined) throw new Error('FakeDiscord: interactions in DMs are not supported');
  const guildId = channel.guildId;
  const user: FakeUser = invoker.user
    ? {
        id: invoker.user.id ?? snowflake(),
        username: invoker.user.username ?? 'user',
        global_name: invoker.user.globalName ?? null,
        discriminator: '0',
        avatar: null,
      }
    : DEFAULT_USER;
  state.users.set(user.id, user);
  // As Discord computes them for the channel (its overwrites applied), unless the test says what they are.
  const roles = invoker.admin ? [state.guild.adminRoleId, state.guild.memberRoleId] : [state.guild.memberRoleId];
  const permissions =
    invoker.permissions ??
    String(permissionsIn(state, channel, user.id, invoker.admin ? ALL_PERMISSIONS : MEMBER_PERMISSIONS, roles));
  const id = snowflake();
  const token = Buffer.from(`interaction:${id}:${randomBytes(48).toString('base64url')}`).toString('base64url');
  const userWire = {
    ...userJson(user),
    public_flags: 0,
    flags: 0,
    primary_guild: null,
    avatar_decoration_data: null,
    collectibles: null,
    clan: null,
  };
  const payload: Json = {
    id,
    application_id: state.applicationId,
    token,
    version: 1,
    guild_id: guildId,
    guild: { id: guildId, locale: invoker.guildLocale ?? state.guild.preferredLocale, features: [] },
    channel_id: channel.id,
    channel: { ...channelJson(state, channel), guild_id: guildId, permissions },
    // A member as the guild sends it, with what an interaction adds: the user, the permissions there.
    member: {
      ...memberJson(state, user),
      user: userWire,
      roles,
      permissions,
      unusual_dm_activity_until: null,
    },
    locale: invoker.locale ?? 'en-US',
    guild_locale: invoker.guildLocale ?? state.guild.preferredLocale,
    entitlements: [],
    entitlement_sku_ids: [],
    // The guild install's, or where the bot is not a member, the user install's (user-install.ts).
    ...installationFields(state, channel, invoker.installer ?? user.id),
    attachment_size_limit: state.options.maxFileBytes,
  };
  return { id, token, now: Date.now(), channel, guildId, user, payload };
}

/** Stores an interaction, makes its token work, and dispatches it to every identified session. */
export function launch<T extends FakeInteraction>(ctx: Ctx, interaction: T): T {
  ctx.state.interactions.set(interaction.id, interaction);
  ctx.state.byToken.set(interaction.token, interaction);
  ctx.gateway.dispatch('INTERACTION_CREATE', interaction.payload);
  return interaction;
}

/** The registered chat-input command of that name (guild commands first), if any. */
function registeredCommand(ctx: Ctx, guildId: string, name: string): FakeCommand | undefined {
  return [...ctx.state.guildCommands(guildId), ...ctx.state.commands].find((c) => c.name === name && c.type === 1);
}

/**
 * @throws Error when the invoker does not see the registered command: its default_member_permissions
 *   are not all theirs and no override lets them (command-permissions.ts).
 */
function checkShown(ctx: Ctx, registered: FakeCommand | undefined, env: Envelope): void {
  const member = env.payload.member as Json;
  checkCommandShown(
    registered,
    {
      userId: env.user.id,
      username: env.user.username,
      roles: member.roles as string[],
      permissions: member.permissions as string,
    },
    registered && ctx.state.commandPermissions.get(registered.name),
  );
}

/** `data` of a chat-input command (type 2) or its autocomplete (type 4). */
function commandData(
  ctx: Ctx,
  name: string,
  registered: FakeCommand | undefined,
  options: Json[],
  attachments: FakeAttachment[],
): Json {
  return {
    id: registered?.id ?? ctx.state.commandIdFor(name),
    name,
    type: 1,
    ...(options.length ? { options } : {}),
    ...(attachments.length
      ? {
          resolved: {
            attachments: Object.fromEntries(attachments.map((a) => [a.id, { ...attachmentJson(a), ephemeral: true }])),
          },
        }
      : {}),
    ...(registered?.guild_id ? { guild_id: registered.guild_id } : {}),
  };
}

/**
 * Dispatches INTERACTION_CREATE to every identified session (see {@link FakeDiscord.dispatchInteraction}).
 * @throws Error when no bot is connected, the channel is unknown, the invoker does not see the
 *   registered command (default_member_permissions), or the options do not fit it.
 */
export function dispatchInteraction(ctx: Ctx, options: DispatchInteractionOptions): FakeInteraction {
  const env = envelope(ctx, options);
  const registered = registeredCommand(ctx, env.guildId, options.command);
  checkShown(ctx, registered, env);
  checkUserInstallable(ctx.state, env.channel, options.command, registered);
  const given = options.options ?? {};
  checkNames(options.command, given, registered, true);
  const attachments: FakeAttachment[] = [];
  const wireOptions = Object.entries(given).map(([name, value]) => {
    if (typeof value === 'object') {
      const attachment = userAttachment(ctx.state, env.channel.id, snowflake(), value);
      attachments.push(attachment);
      return { name, type: 11, value: attachment.id };
    }
    return { name, type: optionType(registered, name, value), value };
  });
  const payload: Json = {
    ...env.payload,
    type: 2,
    data: commandData(ctx, options.command, registered, wireOptions, attachments),
  };
  // A guild interaction names its invoker in `member` (a DM's, in `user`): `withoutInvoker` drops it.
  if (options.withoutInvoker) delete payload.member;
  const interaction = new FakeInteraction(
    env.id,
    env.token,
    options.command,
    env.guildId,
    env.channel.id,
    env.user,
    payload,
    env.now,
    env.now + ctx.state.options.tokenTtlMs,
  );
  for (const attachment of attachments)
    ctx.state.optionAttachments.set(attachment.id, { channelId: env.channel.id, attachment, interaction });
  return launch(ctx, interaction);
}

/**
 * Dispatches an autocomplete interaction (type 4) for the option `focused` (see
 * {@link FakeDiscord.dispatchAutocomplete}).
 * @throws Error as {@link dispatchInteraction}, and when the registered command's option
 *   `focused` does not autocomplete (Discord's client would not ask).
 */
export function dispatchAutocomplete(ctx: Ctx, options: DispatchAutocompleteOptions): FakeAutocomplete {
  const env = envelope(ctx, options);
  const registered = registeredCommand(ctx, env.guildId, options.command);
  checkShown(ctx, registered, env);
  checkUserInstallable(ctx.state, env.channel, options.command, registered);
  const given: Record<string, string | number | boolean> = { ...(options.options ?? {}) };
  given[options.focused] ??= '';
  checkNames(options.command, given, registered, false);
  const def = definitions(registered)?.find((d) => d.name === options.focused);
  if (def && def.autocomplete !== true)
    throw new Error(`FakeDiscord: option ${options.focused} of /${options.command} has no autocomplete`);
  const wireOptions = Object.entries(given).map(([name, value]) => {
    // The focused option carries the text typed so far, whatever its type.
    if (name === options.focused)
      return { name, type: optionType(registered, name, String(value)), value: String(value), focused: true };
    return { name, type: optionType(registered, name, value), value };
  });
  const payload: Json = {
    ...env.payload,
    type: 4,
    data: commandData(ctx, options.command, registered, wireOptions, []),
  };
  const interaction = new FakeAutocomplete(
    options.focused,
    ctx.state.options.responseWindowMs,
    env.id,
    env.token,
    options.command,
    env.guildId,
    env.channel.id,
    env.user,
    payload,
    env.now,
    env.now + ctx.state.options.tokenTtlMs,
  );
  return launch(ctx, interaction);
}

/** The option definitions of a registered command. */
function definitions(registered: FakeCommand | undefined): Json[] | undefined {
  return registered && Array.isArray(registered.options) ? (registered.options as Json[]) : undefined;
}

/** The type of an option's value: the registered one, else guessed from the value. */
export function optionType(registered: FakeCommand | undefined, name: string, value: OptionValue): number {
  const def = definitions(registered)?.find((d) => d.name === name);
  if (typeof def?.type === 'number') return def.type;
  if (typeof value === 'object') return 11;
  return typeof value === 'string' ? 3 : typeof value === 'boolean' ? 5 : Number.isInteger(value) ? 4 : 10;
}

/**
 * @throws Error for an option the registered command does not have, an attachment given to
 *   an option of another type, or (when `requireAll`) a missing required one.
 */
function checkNames(
  command: string,
  given: Record<string, OptionValue>,
  registered: FakeCommand | undefined,
  requireAll: boolean,
): void {
  const defs = definitions(registered);
  if (!defs) return;
  for (const [name, value] of Object.entries(given)) {
    const def = defs.find((d) => d.name === name);
    if (!def) throw new Error(`FakeDiscord: /${command} has no option ${name}`);
    if ((typeof value === 'object') !== (def.type === 11))
      throw new Error(`FakeDiscord: option ${name} of /${command} is of type ${String(def.type)}`);
  }
  if (!requireAll) return;
  for (const d of defs) {
    if (d.required === true && given[d.name as string] === undefined)
      throw new Error(`FakeDiscord: /${command} needs option ${String(d.name)}`);
  }
}
