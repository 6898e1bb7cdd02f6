/**
 * The JSON shapes Discord sends, built from the fake's state: users and members, channels
 * (text, DM, thread), the guild of GUILD_CREATE, attachments, messages (what discord.js builds
 * its structures from), MESSAGE_CREATE's extra fields, and what an app without the Message
 * Content intent sees of a message.
 */

import { referencedAttachments } from './components-v2.ts';
import { EVERYONE_PERMISSIONS, MEMBERS_ROLE_PERMISSIONS, P } from './constants.ts';
import { overwritesJson } from './member-permissions.ts';
import { type FakeAttachment, type FakeChannel, type FakeMessage, type FakeUser, isV2 } from './model.ts';
import type { FakeState } from './state.ts';
import type { Json } from './types.ts';
import { isObject, iso } from './util.ts';

export function userJson(user: FakeUser): Json {
  return {
    id: user.id,
    username: user.username,
    global_name: user.global_name,
    discriminator: user.discriminator,
    avatar: user.avatar,
    ...(user.bot ? { bot: true } : {}),
  };
}

/** A partial guild member (no `user`), as MESSAGE_CREATE carries it for the author and each mention. */
export function memberJson(state: FakeState, user: FakeUser): Json {
  return {
    roles: user.id === state.botUser.id ? [state.guild.botRoleId] : [state.guild.memberRoleId],
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
  };
}

/** The newest message of a channel that still exists, or null. */
function lastMessageId(state: FakeState, channelId: string): string | null {
  let last: string | null = null;
  for (const m of state.messages.values()) if (m.channelId === channelId && !m.deleted && !m.ephemeral) last = m.id;
  return last;
}

/** A channel object: guild text channel (0), DM (1, with `recipients`) or public thread (11, with `thread_metadata`). */
export function channelJson(state: FakeState, channel: FakeChannel): Json {
  if (channel.type === 1) {
    return {
      id: channel.id,
      type: 1,
      last_message_id: lastMessageId(state, channel.id),
      flags: 0,
      recipients: [userJson(channel.recipient!)],
    };
  }
  if (channel.type === 11) {
    const count = [...state.messages.values()].filter(
      (m) => m.channelId === channel.id && !m.deleted && !m.ephemeral,
    ).length;
    return {
      id: channel.id,
      type: 11,
      guild_id: channel.guildId,
      parent_id: channel.parentId,
      owner_id: channel.ownerId ?? state.guild.ownerId,
      name: channel.name,
      last_message_id: lastMessageId(state, channel.id),
      message_count: count,
      member_count: 1,
      rate_limit_per_user: 0,
      flags: 0,
      total_message_sent: count,
      thread_metadata: {
        archived: false,
        auto_archive_duration: 4320,
        archive_timestamp: iso(channel.createdAt),
        locked: false,
        create_timestamp: iso(channel.createdAt),
      },
    };
  }
  return {
    id: channel.id,
    type: 0,
    name: channel.name,
    // Its place among its guild's channels (another guild's holds one channel: 0).
    position: Math.max(0, state.channelList().indexOf(channel)),
    flags: 0,
    parent_id: null,
    topic: null,
    nsfw: false,
    last_message_id: lastMessageId(state, channel.id),
    rate_limit_per_user: 0,
    permission_overwrites: overwritesJson(state, channel.id),
  };
}

/** A role object as GUILD_CREATE and GUILD_ROLE_UPDATE carry it. */
function roleJson(id: string, name: string, permissions: bigint, position: number, extra: Json = {}): Json {
  return {
    id,
    name,
    permissions: String(permissions),
    position,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    managed: false,
    mentionable: false,
    icon: null,
    unicode_emoji: null,
    flags: 0,
    description: null,
    ...extra,
  };
}

/** The bot's managed role, holding {@link FakeState.botPermissions}. */
export function botRoleJson(state: FakeState): Json {
  return roleJson(state.guild.botRoleId, state.botUser.username, state.botPermissions, 1, {
    managed: true,
    tags: { bot_id: state.botUser.id },
  });
}

export function guildCreatePayload(state: FakeState): Json {
  const g = state.guild;
  return {
    id: g.id,
    name: g.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    banner: null,
    description: null,
    owner_id: g.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    nsfw_level: 0,
    premium_tier: 0,
    premium_subscription_count: 0,
    premium_progress_bar_enabled: false,
    preferred_locale: g.preferredLocale,
    features: [],
    system_channel_id: state.channelList()[0]?.id ?? null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    vanity_url_code: null,
    application_id: null,
    max_members: 500_000,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    joined_at: iso(g.joinedAt),
    large: false,
    lazy: true,
    unavailable: false,
    member_count: 3,
    roles: [
      roleJson(g.id, '@everyone', EVERYONE_PERMISSIONS, 0),
      roleJson(g.adminRoleId, 'Admin', P.Administrator | EVERYONE_PERMISSIONS, 2),
      roleJson(g.memberRoleId, 'Members', MEMBERS_ROLE_PERMISSIONS, 1),
      botRoleJson(state),
    ],
    emojis: [],
    stickers: [],
    soundboard_sounds: [],
    members: [
      {
        user: userJson(state.botUser),
        roles: [g.botRoleId],
        nick: null,
        avatar: null,
        banner: null,
        premium_since: null,
        joined_at: iso(g.joinedAt),
        pending: false,
        deaf: false,
        mute: false,
        flags: 0,
        communication_disabled_until: null,
      },
    ],
    channels: state.channelList().map((c) => channelJson(state, c)),
    threads: state.threadList().map((t) => channelJson(state, t)),
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    embedded_activities: [],
    activity_instances: [],
    incidents_data: null,
    hub_type: null,
    latest_onboarding_question_id: null,
    home_header: null,
  };
}

export function attachmentJson(a: FakeAttachment): Json {
  return {
    id: a.id,
    filename: a.filename,
    size: a.size,
    url: a.url,
    proxy_url: a.proxyUrl,
    ...(a.contentType ? { content_type: a.contentType } : {}),
    ...(a.width !== undefined
      ? { width: a.width, height: a.height, placeholder: 'fakeplaceholder', placeholder_version: 1 }
      : {}),
    ...(a.description !== undefined ? { description: a.description } : {}),
    flags: 0,
  };
}

/**
 * A message's `attachments` as Discord lists them: those its components do not show (a
 * Components V2 message's gallery items name theirs by `attachment_id` instead: message.mdx,
 * Message Object, `attachments`).
 */
function shownAttachments(message: FakeMessage): FakeAttachment[] {
  if (!isV2(message)) return message.attachments;
  const referenced = referencedAttachments(message.components);
  return message.attachments.filter((a) => !referenced.has(a.id));
}

/**
 * The message object Discord answers (what discord.js builds a Message from). A reply carries
 * `message_reference` and, unless `nested` (Discord resolves one level), `referenced_message`
 * (null once that message is deleted).
 */
export function messageJson(state: FakeState, message: FakeMessage, nested = false): Json {
  const ix = message.interaction;
  const pinged = message.pinged;
  const interactionUser = ix ? userJson(ix.user) : undefined;
  const ref = message.reference;
  const referenced = ref && !nested ? state.messages.get(ref.messageId) : undefined;
  return {
    type: message.type,
    id: message.id,
    channel_id: message.channelId,
    author: userJson(message.author),
    content: message.content,
    timestamp: iso(message.createdAt),
    edited_timestamp: message.editedAt === undefined ? null : iso(message.editedAt),
    tts: false,
    mention_everyone: pinged.everyone,
    mentions: pinged.users.map((id) => userJson(state.userOf(id))),
    mention_roles: pinged.roles,
    attachments: shownAttachments(message).map((a) => attachmentJson(a)),
    embeds: message.embeds,
    pinned: false,
    flags: message.flags,
    components: message.components,
    ...(message.webhookId ? { webhook_id: message.webhookId } : {}),
    ...(ix
      ? {
          webhook_id: state.applicationId,
          application_id: state.applicationId,
          interaction_metadata: {
            id: ix.id,
            type: ix.type,
            ...(ix.type === 3
              ? { interacted_message_id: ix.componentMessage?.id }
              : ix.type === 5
                ? {
                    triggering_interaction_metadata: {
                      id: ix.modalOf?.id,
                      type: ix.modalOf?.type,
                      user: interactionUser,
                    },
                  }
                : ix.targetMessage
                  ? { name: ix.commandName, command_type: 3, target_message_id: ix.targetMessage.id }
                  : { name: ix.commandName, command_type: 1 }),
            user: interactionUser,
            authorizing_integration_owners: { '0': ix.guildId },
            ...(message.kind === 'followup' && ix.original ? { original_response_message_id: ix.original.id } : {}),
          },
          ...(message.kind === 'original'
            ? { interaction: { id: ix.id, type: ix.type, name: ix.commandName, user: interactionUser } }
            : {}),
        }
      : {}),
    ...(ref
      ? {
          message_reference: {
            type: 0,
            channel_id: ref.channelId,
            message_id: ref.messageId,
            ...(ref.guildId ? { guild_id: ref.guildId } : {}),
          },
        }
      : {}),
    ...(ref && !nested
      ? { referenced_message: referenced && !referenced.deleted ? messageJson(state, referenced, true) : null }
      : {}),
  };
}

/** A message as REST answers this app: other users' content only if approved for Message Content (`privilegedIntents`). */
export function restMessageJson(state: FakeState, message: FakeMessage): Json {
  const json = messageJson(state, message);
  if (state.approvedForContent) return json;
  return withoutContent(json, state.botUser.id, state.channels.get(message.channelId)?.type === 1);
}

/**
 * MESSAGE_CREATE's payload: the message with `channel_type`, and in a guild `guild_id`, the
 * author's partial `member` (not for webhooks) and a partial `member` on each mention.
 */
export function gatewayMessageJson(state: FakeState, message: FakeMessage): Json {
  const channel = state.channels.get(message.channelId);
  const json: Json = { ...messageJson(state, message), channel_type: channel?.type ?? 0 };
  if (message.guildId === undefined) return json;
  return {
    ...json,
    guild_id: message.guildId,
    ...(message.webhookId || message.interaction ? {} : { member: memberJson(state, message.author) }),
    mentions: message.pinged.users.map((id) => ({
      ...userJson(state.userOf(id)),
      member: memberJson(state, state.userOf(id)),
    })),
  };
}

/**
 * A message as an app without the Message Content intent sees it (events/gateway.mdx,
 * "Message Content Intent"): `content`, `embeds`, `attachments` and `components` empty and
 * `poll` omitted, unless the message is in a DM, is the app's own, or mentions the app
 * (the app in `mentions`, as a reply that pings it is). The nested `referenced_message`
 * follows the same rule by its own author and mentions.
 */
export function withoutContent(json: Json, botId: string, inDm: boolean): Json {
  const visible = (m: Json) =>
    inDm ||
    (isObject(m.author) && m.author.id === botId) ||
    (Array.isArray(m.mentions) && m.mentions.some((u) => isObject(u) && u.id === botId));
  const strip = (m: Json): Json => {
    if (visible(m)) return m;
    const { poll: _poll, ...rest } = m;
    return { ...rest, content: '', embeds: [], attachments: [], components: [] };
  };
  const out = strip(json);
  return isObject(json.referenced_message) ? { ...out, referenced_message: strip(json.referenced_message) } : out;
}
