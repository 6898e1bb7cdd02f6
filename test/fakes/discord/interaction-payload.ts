/**
 * INTERACTION_CREATE as Discord sends it for a chat-input command (type 2) in a guild
 * channel or thread: the command's registered id and option types, the member with permissions,
 * `app_permissions`, `attachment_size_limit`, and a fresh interaction token.
 */
import { randomBytes } from 'node:crypto';
import { ALL_PERMISSIONS, BOT_PERMISSIONS, DEFAULT_USER, MEMBER_PERMISSIONS } from './constants.ts';
import type { Ctx } from './context.ts';
import { FakeInteraction, type FakeUser } from './model.ts';
import type { DispatchInteractionOptions, FakeCommand, Json } from './types.ts';
import { iso, snowflake } from './util.ts';
import { channelJson, userJson } from './wire.ts';

/**
 * Dispatches INTERACTION_CREATE to every identified session (see {@link FakeDiscord.dispatchInteraction}).
 * @throws Error when no bot is connected, the channel is unknown, or the options do not fit the registered command.
 */
export function dispatchInteraction(ctx: Ctx, options: DispatchInteractionOptions): FakeInteraction {
  const { state } = ctx;
  if (ctx.gateway.readySessions === 0) throw new Error('FakeDiscord: no gateway session is ready to receive an interaction');
  const channel = state.channels.get(options.channelId ?? state.channelList()[0]!.id);
  if (!channel) throw new Error(`FakeDiscord: unknown channel ${options.channelId}`);
  if (channel.guildId === undefined) throw new Error('FakeDiscord: interactions in DMs are not supported');
  const guildId = channel.guildId;
  const user: FakeUser = options.user
    ? { id: options.user.id ?? snowflake(), username: options.user.username ?? 'user', global_name: options.user.globalName ?? null, discriminator: '0', avatar: null }
    : DEFAULT_USER;
  state.users.set(user.id, user);
  const registered = [...state.guildCommands(guildId), ...state.commands].find((c) => c.name === options.command && c.type === 1);
  const commandId = registered?.id ?? state.commandIdFor(options.command);
  const wireOptions = optionsPayload(options, registered);
  const permissions = options.permissions ?? String(options.admin ? ALL_PERMISSIONS : MEMBER_PERMISSIONS);
  const id = snowflake();
  const token = Buffer.from(`interaction:${id}:${randomBytes(48).toString('base64url')}`).toString('base64url');
  const now = Date.now();
  const userWire = { ...userJson(user), public_flags: 0, flags: 0, primary_guild: null, avatar_decoration_data: null, collectibles: null, clan: null };
  const payload: Json = {
    id,
    application_id: state.applicationId,
    type: 2,
    token,
    version: 1,
    data: {
      id: commandId,
      name: options.command,
      type: 1,
      ...(wireOptions.length ? { options: wireOptions } : {}),
      ...(registered?.guild_id ? { guild_id: registered.guild_id } : {}),
    },
    guild_id: guildId,
    guild: { id: guildId, locale: 'en-US', features: [] },
    channel_id: channel.id,
    channel: { ...channelJson(state, channel), guild_id: guildId, permissions },
    member: {
      user: userWire,
      roles: options.admin ? [state.guild.adminRoleId] : [],
      permissions,
      nick: null,
      avatar: null,
      banner: null,
      premium_since: null,
      joined_at: iso(state.guild.joinedAt),
      pending: false,
      deaf: false,
      mute: false,
      flags: 0,
      communication_disabled_until: null,
      unusual_dm_activity_until: null,
    },
    app_permissions: String(BOT_PERMISSIONS),
    locale: options.locale ?? 'en-US',
    guild_locale: 'en-US',
    entitlements: [],
    entitlement_sku_ids: [],
    authorizing_integration_owners: { '0': guildId },
    context: 0,
    attachment_size_limit: state.options.maxFileBytes,
  };
  const interaction = new FakeInteraction(id, token, options.command, guildId, channel.id, user, payload, now, now + state.options.tokenTtlMs);
  state.interactions.set(id, interaction);
  state.byToken.set(token, interaction);
  ctx.gateway.dispatch('INTERACTION_CREATE', payload);
  return interaction;
}

/** Wire options of an interaction, typed from the registered command when there is one. */
function optionsPayload(options: DispatchInteractionOptions, registered: FakeCommand | undefined): Json[] {
  const given = options.options ?? {};
  const defs = registered && Array.isArray(registered.options) ? (registered.options as Json[]) : undefined;
  if (defs) {
    for (const name of Object.keys(given)) {
      if (!defs.some((d) => d.name === name)) throw new Error(`FakeDiscord: /${options.command} has no option ${name}`);
    }
    for (const d of defs) {
      if (d.required === true && given[d.name as string] === undefined) throw new Error(`FakeDiscord: /${options.command} needs option ${String(d.name)}`);
    }
  }
  return Object.entries(given).map(([name, value]) => {
    const def = defs?.find((d) => d.name === name);
    const type = typeof def?.type === 'number'
      ? def.type
      : typeof value === 'string' ? 3 : typeof value === 'boolean' ? 5 : Number.isInteger(value) ? 4 : 10;
    return { name, type, value };
  });
}
