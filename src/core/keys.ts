/**
 * Every key the bot builds from platform ids, built (and read back) here and nowhere else:
 * conversation and channel keys, the state store's keys, the claim keys of Slack's
 * deliveries, the names of the write scheduler's rate-limit buckets, and the references of
 * the images the bot posted. The formats are stored (history, settings, counters, button
 * state outlive a restart), so they do not change: `discord:<guild id | dm>:<channel id>`,
 * `discord:user:<user id>:<channel id>` (Discord's user install, where the bot is not a member),
 * `slack:<team id>:<channel id>[:<thread_ts>]`.
 */

/** Where a conversation lives: a Discord channel, thread or DM, or a Slack channel or thread. */
export type ConversationRef =
  | {
      platform: 'discord';
      /** undefined in a DM, and for a user install's conversation (`user`) */
      guild: string | undefined;
      channel: string;
      /**
       * Discord's user install (platforms/discord/user-install.ts): the user whose own install of
       * the app answers there, where the bot is not a member (a server without the bot, a group
       * DM, a DM between users). Each such user has a conversation of their own in the channel,
       * apart from the guild install's and from each other's.
       */
      user?: string | undefined;
    }
  | {
      platform: 'slack';
      team: string;
      channel: string;
      /** the thread's `thread_ts` */
      thread?: string | undefined;
    };

/**
 * A key of parts joined with `:`, as one flat string. Keys live as long as what they name (an
 * answer, a bucket in the scheduler's table, a store entry); a template literal would make a
 * rope of its parts (V8's cons strings: one object per part for every collection to mark).
 */
function joinKey(...parts: string[]): string {
  return parts.join(':');
}

/**
 * A conversation's key: `discord:<guild|dm>:<channel>`, `discord:user:<user id>:<channel>` (a
 * user install's, {@link ConversationRef} `user`), or `slack:<team>:<channel>[:<thread_ts>]`.
 */
export function conversationKey(ref: ConversationRef): string {
  if (ref.platform === 'discord')
    return ref.user
      ? joinKey('discord', 'user', ref.user, ref.channel)
      : joinKey('discord', ref.guild ?? 'dm', ref.channel);
  return ref.thread ? joinKey('slack', ref.team, ref.channel, ref.thread) : joinKey('slack', ref.team, ref.channel);
}

/**
 * The key of the channel whose settings and fair-queue line apply: the conversation key
 * without a Slack thread. (A Discord thread's channel is its parent: pass the parent.)
 */
export function channelKey(ref: ConversationRef): string {
  return ref.platform === 'discord' ? conversationKey(ref) : conversationKey({ ...ref, thread: undefined });
}

/** Reads a conversation key back. @returns undefined for a string that is not one. */
export function parseConversationKey(key: string): ConversationRef | undefined {
  const [platform, scope, channel, thread, ...rest] = key.split(':');
  if (!scope || !channel || rest.length > 0) return undefined;
  if (platform === 'discord' && scope === 'user')
    return thread ? { platform, guild: undefined, user: channel, channel: thread } : undefined;
  if (platform === 'discord' && thread === undefined)
    return { platform, guild: scope === 'dm' ? undefined : scope, channel };
  if (platform === 'slack') return { platform, team: scope, channel, ...(thread ? { thread } : {}) };
  return undefined;
}

/** A Slack workspace's key, `slack:<team id>`: what {@link workspaceOf} gives for its channels. */
export function slackWorkspace(team: string): string {
  return joinKey('slack', team);
}

/**
 * The workspace of a channel key: `slack:<team>`, `discord:<guild|dm>`, or `discord:user:<user
 * id>` for a user install's (per-workspace lists such as {@link storeKeys.settingsChannels}).
 * @returns undefined for a string that is not one.
 */
export function workspaceOf(channelKey: string): string | undefined {
  const ref = parseConversationKey(channelKey);
  if (!ref) return undefined;
  if (ref.platform === 'slack') return joinKey('slack', ref.team);
  return ref.user ? joinKey('discord', 'user', ref.user) : joinKey('discord', ref.guild ?? 'dm');
}

/**
 * The place a channel key belongs to: its Discord server or Slack workspace ({@link workspaceOf}),
 * e.g. where /usage sums feedback for admins. @returns the key itself for a string that is not a channel key.
 */
export function placeOf(channel: string): string {
  return workspaceOf(channel) ?? channel;
}

/**
 * The kinds of Discord's rate-limit buckets (docs/platform-limits.md, Discord, "Rate budgets"):
 * the bot token's `global` limit, a channel's bot-token writes (`channel`), every write of a
 * channel (`writes`), an interaction's webhook token (`webhook`).
 */
export type DiscordBucketKind = 'global' | 'channel' | 'writes' | 'webhook';

/**
 * The kinds of Slack's rate-limit buckets (docs/platform-limits.md, Slack, "Rate budgets"), one a
 * Web API method: `chat.postMessage` (`post`), `chat.update` (`update`), `chat.appendStream`
 * (`appendStream`), `chat.startStream` (`startStream`, counted in the store).
 */
export type SlackBucketKind = 'post' | 'update' | 'appendStream' | 'startStream';

/** Every rate-limit bucket of one platform and kind (e.g. every Discord channel's): what a budget is declared for. */
export type BucketFamily =
  | { platform: 'discord'; kind: DiscordBucketKind }
  | { platform: 'slack'; kind: SlackBucketKind };

/**
 * One rate-limit bucket of the write scheduler (core/delivery/scheduler.ts): its family and the
 * scope it is counted in (a channel id, a webhook token's hash, a workspace), none for a
 * platform-wide one (Discord's `global`).
 */
export type BucketId = BucketFamily & { scope?: string | undefined };

/**
 * A bucket's name, `<platform>:<kind>[:<scope>]` (`discord:channel:<id>`, `discord:global`,
 * `slack:update:<team>`): the scheduler's key of the bucket (and, without a scope, of its
 * family), what logs show, and the store's key of Slack's startStream count. Never read back.
 */
export function bucketKey(id: BucketId): string {
  return id.scope === undefined ? joinKey(id.platform, id.kind) : joinKey(id.platform, id.kind, id.scope);
}

/** The state store's keys (the values' shapes are their owners'). */
export const storeKeys = {
  /** A conversation's history (state/history.ts). */
  history: (conversationId: string) => joinKey('history', conversationId),
  /** A channel's /settings (state/settings.ts). */
  settings: (channel: string) => joinKey('settings', channel),
  /** A first-claim-wins marker (state/claims.ts). */
  claim: (key: string) => joinKey('claim', key),
  /** A user's quota counter: requests a minute, images or tokens a day, /export's in 10 minutes (`subject`: {@link quotaSubject}). */
  quota: (kind: 'chat' | 'image' | 'tokens' | 'export', subject: string) => joinKey('quota', kind, subject),
  /** A channel's use a day, for /usage. */
  usage: (kind: 'chat' | 'image' | 'tokens', channel: string) => joinKey('usage', kind, channel),
  /**
   * What a user (`<platform>:<user id>`), a channel (its channel key) or a server (keys.ts
   * {@link workspaceOf}) spent in one UTC day or month (`period`: `2026-11-29` or `2026-11`), in
   * micro-units of the price table's currency (state/spend.ts). Not a workspace's data: an
   * uninstall or /forget leaves it, or a cap could be lifted.
   */
  spend: (scope: 'user' | 'channel' | 'server', period: string, id: string) => joinKey('spend', scope, period, id),
  /** The part of a user's spend in a period that was estimated (the service sent no `usage`). */
  spendEstimated: (period: string, subject: string) => joinKey('spend-estimated', period, subject),
  /** What a server spent on one model in a UTC month (`place`: {@link placeOf}); listed by {@link storeKeys.spendModels}. */
  spendModel: (place: string, month: string, model: string) => joinKey('spend-model', place, month, model),
  /** The prefix of a server's {@link storeKeys.spendModel} counters in a month. */
  spendModels: (place: string, month: string) => joinKey('spend-model', place, month, ''),
  /** Set once the 80 % notice of a cap was given in its period (a first-claim marker, kept to the period's end). */
  spendNotice: (scope: 'user' | 'channel' | 'server', period: string, id: string) =>
    joinKey('spend-notice', scope, period, id),
  /** An /imagine result's button state, under its button id. */
  imagineState: (id: string) => joinKey('imagine', id),
  /** A Stop press left for the instance running the answer. */
  stopRequest: (id: string) => joinKey('stop', id),
  /** A finished text answer's Regenerate state (features/answer-state.ts), under its button id. */
  answerState: (id: string) => joinKey('answer', id),
  /** Held while an answer is regenerated (one regeneration of an answer at a time). */
  regenerating: (id: string) => joinKey('regenerating', id),
  /** The answer state id of the answer to a mention, by the mention's {@link messageRef}. */
  mentionAnswer: (mention: string) => joinKey('mention-answer', mention),
  /**
   * The answer states one user's answers keep (features/answer-index.ts: ids, bytes, newest
   * last), by the quota subject `<platform>:<user id>`: the per-user bound drops the oldest.
   */
  userAnswerStates: (subject: string) => joinKey('answer-states', 'user', subject),
  /** The answer states kept for answers in a conversation (features/answer-index.ts): what /forget removes. */
  conversationAnswerStates: (conversationId: string) => joinKey('answer-states', 'conversation', conversationId),
  /** When a conversation was last forgotten (/forget), ms since the epoch: older answer states of it are refused. */
  forgotten: (conversationId: string) => joinKey('forgotten', conversationId),
  /**
   * A finished answer's feedback record (features/feedback.ts: its kind, command, model, channel),
   * under the answer's feedback id (the id its 👍 / 👎 buttons carry).
   */
  feedback: (id: string) => joinKey('feedback', id),
  /** One user's vote (👍 / 👎, and a 👎's reason) on an answer, by the answer's feedback id and the user's id. */
  feedbackVote: (id: string, user: string) => joinKey('feedback-vote', id, user),
  /**
   * The votes counted by kind, model and vote (state/feedback.ts): every place's together
   * without `place` (/metrics), else one place's ({@link placeOf}: /usage).
   */
  feedbackTally: (place?: string) => (place === undefined ? 'feedback-tally' : joinKey('feedback-tally', place)),
  /** A thread the bot opened for a conversation (Discord; state/threads.ts), by the thread's conversation key. */
  openedThread: (conversationId: string) => joinKey('thread', conversationId),
  /**
   * The conversations a platform's messages to the bot were seen in, with the newest message
   * id seen in each (state/seen.ts): where catch-up reads after a restart. `platform` is
   * `discord` or `slack`.
   */
  seenConversations: (platform: 'discord' | 'slack') => joinKey('seen', platform),
  /** The channel a Slack user views beside the bot's agent view (platforms/slack/viewed-channel.ts). */
  viewedChannel: (team: string, user: string) => joinKey('viewed', 'slack', team, user),
  /**
   * The channels of a workspace or guild whose /settings hold something (state/settings.ts), for
   * Slack's Home tab: `workspace` is a channel key's `<platform>:<team or guild>`.
   */
  settingsChannels: (workspace: string) => joinKey('settings-channels', workspace),
  /** A Slack workspace's chat.startStream count in its window. */
  startStreams: (team: string) => bucketKey({ platform: 'slack', kind: 'startStream', scope: team }),
  /** A rate-limit bucket's slots in its window, shared by every instance (a sorted set; `bucket` is a {@link bucketKey}). */
  budgetSlots: (bucket: string) => joinKey('budget', 'slots', bucket),
  /** A rate-limit bucket's hold, slow-down, spacing and learnt budget, shared by every instance (a hash). */
  budgetState: (bucket: string) => joinKey('budget', 'state', bucket),
  /** The writes under way in a concurrency-bound rate-limit bucket, across every instance (a sorted set). */
  budgetRunning: (bucket: string) => joinKey('budget', 'running', bucket),
  /** The bot instances sharing the store, each until its announcement expires (a sorted set). */
  instances: () => 'instances',
  /** One Slack installation (sealed: state/sealed.ts), by {@link slackInstallationId}. */
  slackInstallation: (id: string) => joinKey('slack-installation', id),
  /** The ids ({@link slackInstallationId}) of every Slack installation, for the doctor and listings. */
  slackInstallations: () => 'slack-installations',
  /**
   * The marker of a record kept under a random id (`answer:<id>`, `feedback:<id>`, `imagine:<id>`…)
   * that belongs to `workspace` ({@link workspaceOf}), written with it and with its expiry
   * (state/purge.ts `keepOwned`): how an uninstall finds the records whose keys do not name it.
   */
  owned: (workspace: string, key: string) => joinKey('owned', workspace, key),
  /**
   * What one user left in a workspace ({@link workspaceOf}): the conversations they spoke in and
   * the records kept for them (state/user-index.ts), what `/forget me` reads instead of listing the store.
   */
  userIndex: (workspace: string, user: string) => joinKey('user-index', workspace, user),
  /**
   * When a history's oldest turn passes the retention (state/retention.ts): the conversation (`id`),
   * then `dueMs` (ms since the epoch, ≥ 0) zero-padded to 15 digits. Under its workspace's prefix: a purge finds it.
   */
  historyDue: (id: string, dueMs: number) => joinKey('history-due', id, String(Math.floor(dueMs)).padStart(15, '0')),
} as const;

/** Reads a {@link storeKeys.historyDue} key back. @returns undefined for a key that is not one. */
export function parseHistoryDue(key: string): { dueMs: number; conversationId: string } | undefined {
  const match = /^history-due:(.+):(\d{15})$/.exec(key);
  return match ? { dueMs: Number(match[2]), conversationId: match[1]! } : undefined;
}

/**
 * Which Slack installation serves a request or holds a token, as Bolt's InstallationQuery names
 * it: an Enterprise Grid org-wide install (`isEnterpriseInstall`) is one installation for the
 * whole enterprise, `enterprise:<E…>`; any other is its workspace's, `team:<T…>`.
 * @returns undefined when the query names neither.
 */
export function slackInstallationId(query: {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}): string | undefined {
  if (query.isEnterpriseInstall && query.enterpriseId) return joinKey('enterprise', query.enterpriseId);
  return query.teamId ? joinKey('team', query.teamId) : undefined;
}

/**
 * A user's quota subject (quotas, /usage, the per-user Regenerate states): `discord:<user id>`,
 * and on Slack, whose user ids are a workspace's, `slack:<team id>:<user id>` so that each
 * workspace's use is counted apart. `channelKey` is the invocation's channel key (keys.ts
 * {@link channelKey}), whose team it reads.
 */
export function quotaSubject(platform: 'discord' | 'slack', user: string, channelKey: string): string {
  const ref = platform === 'slack' ? parseConversationKey(channelKey) : undefined;
  return ref?.platform === 'slack' ? joinKey('slack', ref.team, user) : joinKey(platform, user);
}

/**
 * What a workspace owns in the store, as prefixes and whole keys ({@link storeKeys}): its
 * conversations' histories, forgotten markers, opened threads, answer-state lists and
 * mention links; its channels' settings and their list; its feedback tally; its users' viewed
 * channels; its claims (messages, greetings, titles, edits); the markers of its records under
 * random ids ({@link storeKeys.owned}); its users' indexes ({@link storeKeys.userIndex}). Not its usage and quota counters, nor the claims of event
 * ids and signed requests (they name no workspace, hold nothing, and expire within hours).
 * `workspace` is `slack:<team>` or `discord:<guild | dm>`; a Discord mention link (by channel and
 * message id alone) is not among them. What an uninstall deletes (state/purge.ts).
 */
export function workspaceKeys(workspace: string): { prefixes: string[]; keys: string[] } {
  const within = joinKey(workspace, '');
  const [platform, team = ''] = workspace.split(':');
  const prefixes = [
    storeKeys.history(within),
    storeKeys.settings(within),
    storeKeys.forgotten(within),
    storeKeys.openedThread(within),
    storeKeys.conversationAnswerStates(within),
    storeKeys.owned(workspace, ''),
    storeKeys.userIndex(workspace, ''),
    joinKey('history-due', within),
  ];
  if (platform === 'slack') {
    // A Slack message's reference names its workspace (messageRef): its mention link and edit claims.
    prefixes.push(
      storeKeys.mentionAnswer(within),
      storeKeys.claim(joinKey('edit', within)),
      storeKeys.viewedChannel(team, ''),
      storeKeys.claim(joinKey('slack', 'message', team, '')),
      storeKeys.claim(joinKey('slack', 'greeting', team, '')),
      storeKeys.claim(joinKey('slack', 'title', team, '')),
    );
  }
  return { prefixes, keys: [storeKeys.settingsChannels(workspace), storeKeys.feedbackTally(workspace)] };
}

/** The claim keys of Slack's deliveries (with {@link storeKeys.claim}'s prefix added by Claims). */
export const slackClaims = {
  /** An event, by its `event_id` (Slack's retries carry the same). */
  event: (eventId: string) => joinKey('slack', 'event', eventId),
  /** A message, by workspace, channel and `ts` (one message may come as app_mention and message.im). */
  message: (team: string, channel: string, ts: string) => joinKey('slack', 'message', team, channel, ts),
  /** A verified HTTP request, by its signature's digest and timestamp (replays). */
  request: (digest: string, timestampSec: string) => joinKey('slack', 'request', digest, timestampSec),
  /** The agent view's greeting to a user, posted once. */
  greeting: (team: string, user: string) => joinKey('slack', 'greeting', team, user),
  /** An OAuth `state` of Slack's installer, used once (its SHA-256, hex). */
  oauthState: (digest: string) => joinKey('slack', 'oauth-state', digest),
  /** The title of an agent or assistant thread, set once (its first question). */
  threadTitle: (team: string, channel: string, threadTs: string) => joinKey('slack', 'title', team, channel, threadTs),
} as const;

/** The claim keys of Discord messages (with {@link storeKeys.claim}'s prefix added by Claims). */
export const discordClaims = {
  /** A message addressed to the bot, by channel and message id: answered once, live or by catch-up, by any instance. */
  message: (channel: string, message: string) => joinKey('discord', 'message', channel, message),
} as const;

/** The claim keys of edits of a message that mentioned the bot (with {@link storeKeys.claim}'s prefix added by Claims). */
export const editClaims = {
  /** One edit: the message's {@link messageRef} and the edit's time as the platform gives it (ms since epoch). */
  edit: (message: string, editedAt: number) => joinKey('edit', message, String(editedAt)),
} as const;

/** Where a message is: a Discord channel's message, or a Slack message by workspace, channel and `ts`. */
export type MessageLocation =
  | { platform: 'discord'; channel: string; message: string }
  | { platform: 'slack'; team: string; channel: string; ts: string };

/** A message's reference, as the store keeps it: `discord:<channel id>:<message id>` or `slack:<team>:<channel>:<ts>`. */
export function messageRef(at: MessageLocation): string {
  return at.platform === 'discord'
    ? joinKey('discord', at.channel, at.message)
    : joinKey('slack', at.team, at.channel, at.ts);
}

/** Reads a message's reference back. @returns undefined for a string that is not one. */
export function parseMessageRef(ref: string): MessageLocation | undefined {
  const [platform, first, second, third, ...rest] = ref.split(':');
  if (!first || !second || rest.length > 0) return undefined;
  if (platform === 'discord' && third === undefined) return { platform, channel: first, message: second };
  if (platform === 'slack' && third) return { platform, team: first, channel: second, ts: third };
  return undefined;
}

/**
 * Where an image is on a platform, to find it again when a button is pressed: one the bot
 * posted (/imagine's Upscale, Vary, and Reroll of an image made from another), or one a user
 * sent with a question (Regenerate, an edited mention: features/kept-request.ts). A Discord
 * message (its first image, or the attachment named by id), or a Slack file.
 */
export type PostedImageLocation =
  | { platform: 'discord'; channel: string; message: string; attachment?: string }
  | { platform: 'slack'; file: string };

/**
 * An image's reference, as the store keeps it: `discord:<channel id>:<message id>[:<attachment
 * id>]` or `slack:<file id>` (under 80 characters).
 */
export function postedImageRef(at: PostedImageLocation): string {
  if (at.platform === 'slack') return joinKey('slack', at.file);
  return at.attachment
    ? joinKey('discord', at.channel, at.message, at.attachment)
    : joinKey('discord', at.channel, at.message);
}

/** Reads an image's reference back. @returns undefined for a string that is not one. */
export function parsePostedImageRef(ref: string): PostedImageLocation | undefined {
  const [platform, first, second, third, ...rest] = ref.split(':');
  if (!first || rest.length > 0) return undefined;
  if (platform === 'discord' && second && third === undefined) return { platform, channel: first, message: second };
  if (platform === 'discord' && second && third)
    return { platform, channel: first, message: second, attachment: third };
  if (platform === 'slack' && second === undefined) return { platform, file: first };
  return undefined;
}

/**
 * The id of one of the bot's buttons (Discord's `custom_id`, Slack's `action_id`): the command
 * that handles the press, then its arguments, joined with `:` (`imagine:reroll:<id>`). Both
 * platforms cap it at 100 characters (docs/platform-limits.md); arguments are ids and numbers,
 * which hold no `:`.
 * @throws Error when the id would be longer than 100 characters or an argument holds `:`.
 */
export function buttonId(command: string, ...args: Array<string | number>): string {
  const parts = [command, ...args.map(String)];
  if (parts.some((p) => p.includes(':'))) throw new Error(`a button id part holds ':' (${command})`);
  const id = parts.join(':');
  if (id.length > 100) throw new Error(`a button id is over 100 characters (${command})`);
  return id;
}

/** Reads a button id back: the command that handles the press and its arguments (`''` and none for an empty id). */
export function parseButtonId(id: string): { command: string; args: string[] } {
  const [command = '', ...args] = id.split(':');
  return { command, args };
}
