/**
 * Where a file is shared, as a file object says it (docs.slack.dev "File object"; @slack/web-api
 * FilesInfoResponse `File`): `channels` (public channels), `groups` (private channels), `ims`
 * (DMs), and `shares.public` / `shares.private` keyed by conversation id, each a list of the
 * messages sharing it there (`ts`, `thread_ts` for a reply, `channel_name`, `team_id`, reply
 * counts). Slack lists only the conversations the calling token can see: every public channel,
 * and the private channels and DMs the bot is in. `user` (the owner) is the file object's own.
 *
 * A user's file shared in no message (FakeSlack.addUserFile alone) is in none of them: only its
 * owner can see it, which is what a bot must check before reading it for someone else.
 */
import { channelType } from './scopes.ts';
import type { FakeSlackFile } from './types.ts';
import type { Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** The sharing fields of `f`'s file object, as the bot token sees them. */
export function fileSharesOf(ws: Workspace, f: FakeSlackFile): Json {
  const lists = { channels: new Set<string>(), groups: new Set<string>(), ims: new Set<string>() };
  const shares: { public: Record<string, Json[]>; private: Record<string, Json[]> } = { public: {}, private: {} };
  for (const share of f.shares) {
    const channel = ws.channels.get(share.channel);
    if (!channel) continue;
    const type = channelType(channel);
    if (type !== 'channel' && channel.botIsMember === false) continue;
    (type === 'channel' ? lists.channels : type === 'group' ? lists.groups : lists.ims).add(channel.id);
    const byChannel = type === 'channel' ? shares.public : shares.private;
    byChannel[channel.id] ??= [];
    byChannel[channel.id]!.push({
      reply_users: [],
      reply_users_count: 0,
      reply_count: 0,
      ts: share.ts,
      ...(share.threadTs ? { thread_ts: share.threadTs } : {}),
      channel_name: channel.name,
      team_id: ws.teamId,
      share_user_id: f.user,
    });
  }
  const anyShare = Object.keys(shares.public).length + Object.keys(shares.private).length > 0;
  return {
    channels: [...lists.channels],
    groups: [...lists.groups],
    ims: [...lists.ims],
    ...(anyShare
      ? {
          shares: {
            ...(Object.keys(shares.public).length ? { public: shares.public } : {}),
            ...(Object.keys(shares.private).length ? { private: shares.private } : {}),
          },
        }
      : {}),
  };
}
