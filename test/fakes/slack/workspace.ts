/**
 * The state of the fake workspace that every part of the fake reads and writes: its identity
 * (team, bot, app, tokens, secrets), channels, users, messages, files and what was recorded,
 * plus the rules every message-writing method shares (channel lookup, membership, text length,
 * threads, ts values, the message object Slack returns).
 */
import { randomBytes } from 'node:crypto';
import { mrkdwnTexts } from './blocks.ts';
import { fileSharesOf } from './file-shares.ts';
import type { EventDelivery } from './inbound-types.ts';
import type { BlockActionRecord } from './interaction-types.ts';
import { RateLimiter } from './limits.ts';
import { OAuthApp } from './oauth.ts';
import { CHAT_WRITE_PUBLIC, channelType, DEFAULT_BOT_EVENTS, DEFAULT_BOT_SCOPES } from './scopes.ts';
import type { AssistantStatus, StreamingSettings } from './stream-types.ts';
import { streamingSettings } from './streaming.ts';
import { richTextMentions } from './table-blocks.ts';
import type {
  FakeSlackChannel,
  FakeSlackEphemeral,
  FakeSlackFile,
  FakeSlackMessage,
  FakeSlackOptions,
  FakeSlackUser,
  FileDownload,
  PlatformFailure,
  ResponseUrl,
  SlackApiCall,
} from './types.ts';
import { formatTs, type Json, mentionsIn, required, SlackApiError, TS_PATTERN } from './wire.ts';

export const DEFAULT_CHANNELS: readonly FakeSlackChannel[] = [
  { id: 'C0GENERAL', name: 'general' },
  { id: 'C0RANDOM', name: 'random' },
  { id: 'C0DEV', name: 'dev' },
];

export const DEFAULT_USERS: readonly FakeSlackUser[] = [
  { id: 'U0ALICE', name: 'alice', isAdmin: true },
  { id: 'U0BOB', name: 'bob' },
];

/** One upload request to an upload URL (also refused ones). */
export interface UploadRecord {
  fileId: string;
  status: number;
  bytes: number;
  at: number;
  seq: number;
}

/** A new file: what differs between an upload and a user's file. */
export type NewFile = Pick<
  FakeSlackFile,
  | 'origin'
  | 'filename'
  | 'length'
  | 'size'
  | 'altText'
  | 'title'
  | 'data'
  | 'streamBytes'
  | 'contentType'
  | 'user'
  | 'completed'
> & { filetype?: string };

/** Slack's `filetype` and `pretty_type` by file name extension or mimetype. */
const FILE_TYPES: Array<{ filetype: string; pretty: string; extensions: string[]; mimetype: RegExp }> = [
  { filetype: 'png', pretty: 'PNG', extensions: ['png'], mimetype: /^image\/png$/ },
  { filetype: 'jpg', pretty: 'JPEG', extensions: ['jpg', 'jpeg'], mimetype: /^image\/jpe?g$/ },
  { filetype: 'gif', pretty: 'GIF', extensions: ['gif'], mimetype: /^image\/gif$/ },
  { filetype: 'webp', pretty: 'WebP', extensions: ['webp'], mimetype: /^image\/webp$/ },
  { filetype: 'heic', pretty: 'HEIC', extensions: ['heic'], mimetype: /^image\/heic$/ },
  { filetype: 'pdf', pretty: 'PDF', extensions: ['pdf'], mimetype: /^application\/pdf$/ },
  { filetype: 'text', pretty: 'Plain Text', extensions: ['txt'], mimetype: /^text\/plain$/ },
];

/** `filetype` / `pretty_type` of a file (Slack says `binary` for what it does not know). */
export function fileTypeOf(name: string, mimetype: string | undefined): { filetype: string; pretty: string } {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  const known = FILE_TYPES.find(
    (t) => (extension && t.extensions.includes(extension)) || (mimetype && t.mimetype.test(mimetype)),
  );
  return known ? { filetype: known.filetype, pretty: known.pretty } : { filetype: 'binary', pretty: 'Binary' };
}

/** A message to store: who wrote what, where. */
export type NewMessage = Pick<
  FakeSlackMessage,
  'channel' | 'user' | 'botId' | 'text' | 'blocks' | 'threadTs' | 'files' | 'via'
> & { method: string };

export class Workspace {
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly verificationToken: string;
  readonly teamId: string;
  readonly teamDomain: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  readonly baseUrl: string;
  readonly apiUrl: string;
  readonly maxTextChars: number;
  readonly ackTimeoutMs: number;
  readonly socketPingIntervalMs: number;
  readonly now: () => number;
  readonly limits: RateLimiter;

  readonly channels = new Map<string, FakeSlackChannel>();
  readonly users = new Map<string, FakeSlackUser>();
  readonly messageList: FakeSlackMessage[] = [];
  readonly messageIndex = new Map<string, FakeSlackMessage>();
  readonly calls: SlackApiCall[] = [];
  /** The bot's uploads, by id. */
  readonly files = new Map<string, FakeSlackFile>();
  /** Users' files, by id (apart, so that `files` stays what the bot uploaded). */
  readonly userFiles = new Map<string, FakeSlackFile>();
  readonly ephemerals: FakeSlackEphemeral[] = [];
  readonly responseUrls = new Map<string, ResponseUrl>();
  readonly platformFailures: PlatformFailure[] = [];
  readonly uploads: UploadRecord[] = [];
  readonly downloads: FileDownload[] = [];
  readonly eventDeliveries: EventDelivery[] = [];
  /** The `x-slack-request-timestamp` of each event's latest HTTP delivery, by event id. */
  readonly eventTimestamps = new Map<string, number>();
  /** Every accepted assistant.threads.setStatus (assistant.ts). */
  readonly assistantStatuses: AssistantStatus[] = [];
  /** Every button press sent to the app (interactivity.ts). */
  readonly blockActions: BlockActionRecord[] = [];
  /** Streaming and loading-status settings (streaming.ts, assistant.ts); changed in place by setStreaming. */
  readonly streaming: StreamingSettings;
  /** The OAuth app and its installations' tokens (oauth.ts). */
  readonly oauth: OAuthApp;
  /** The Enterprise Grid organization of each workspace that has one, by team id. */
  readonly enterprises = new Map<string, string>();
  /** The workspace the Web API call being answered acts in (web-api.ts sets it around each method). */
  callerTeam: string | undefined;
  /** The bot token's scopes (see scopes.ts). */
  scopes: string[];
  /** The app's bot event subscriptions (see scopes.ts). */
  botEvents: string[];
  /** The workspace removed the app (uninstall.ts): its bot token is refused `token_revoked`. */
  uninstalled = false;
  /** When it did, ms since the epoch ({@link now}'s clock). */
  uninstalledAt: number | undefined;

  private lastTsMicros = 0;
  private seq = 0;

  constructor(baseUrl: string, o: FakeSlackOptions) {
    this.baseUrl = baseUrl;
    this.apiUrl = `${baseUrl}/api/`;
    this.botToken = o.botToken ?? `xoxb-fake-${randomBytes(12).toString('hex')}`;
    this.appToken = o.appToken ?? `xapp-1-${o.appId ?? 'A0FAKEAPP'}-1-${randomBytes(16).toString('hex')}`;
    this.socketPingIntervalMs = o.socketPingIntervalMs ?? 10_000;
    this.signingSecret = o.signingSecret ?? randomBytes(16).toString('hex');
    this.verificationToken = o.verificationToken ?? 'fake-verification-token';
    this.teamId = o.teamId ?? 'T0FAKETEAM';
    this.teamDomain = o.teamDomain ?? 'fake-workspace';
    this.botUserId = o.botUserId ?? 'U0FAKEBOT';
    this.botId = o.botId ?? 'B0FAKEBOT';
    this.appId = o.appId ?? 'A0FAKEAPP';
    for (const c of o.channels ?? DEFAULT_CHANNELS) this.channels.set(c.id, { ...c });
    for (const u of o.users ?? DEFAULT_USERS) this.users.set(u.id, { ...u });
    this.maxTextChars = o.maxTextChars ?? 4000;
    this.ackTimeoutMs = o.ackTimeoutMs ?? 3000;
    this.now = o.now ?? Date.now;
    this.limits = new RateLimiter(o.rateLimits, this.now);
    this.scopes = [...(o.scopes ?? DEFAULT_BOT_SCOPES)];
    this.botEvents = [...(o.botEvents ?? DEFAULT_BOT_EVENTS)];
    this.streaming = streamingSettings(o);
    this.oauth = new OAuthApp(this, o.oauth);
  }

  /**
   * The DM channel between `userId` and the bot: `D` + 10 characters, created on first use (one
   * per user, as on Slack). @throws Error for an unknown user.
   */
  openIm(userId: string): FakeSlackChannel {
    if (!this.users.has(userId)) throw new Error(`openIm: unknown user ${userId}`);
    for (const c of this.channels.values()) if (c.isIm && c.imUser === userId) return c;
    const channel: FakeSlackChannel = {
      id: `D${randomBytes(5).toString('hex').toUpperCase()}`,
      name: 'directmessage',
      isIm: true,
      imUser: userId,
      members: [userId],
    };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** Stores a new file with a fresh id and its URLs on this fake. */
  addFile(f: NewFile): FakeSlackFile {
    const id = `F${randomBytes(5).toString('hex').toUpperCase()}`;
    const name = encodeURIComponent(f.filename);
    const file: FakeSlackFile = {
      id,
      origin: f.origin,
      filename: f.filename,
      length: f.length,
      size: f.size,
      altText: f.altText,
      title: f.title,
      data: f.data,
      streamBytes: f.streamBytes,
      contentType: f.contentType,
      filetype: f.filetype ?? fileTypeOf(f.filename, f.contentType).filetype,
      user: f.user,
      created: Math.floor(this.now() / 1000),
      urlPrivate: `${this.baseUrl}/files-pri/${this.teamId}-${id}/${name}`,
      urlPrivateDownload: `${this.baseUrl}/files-pri/${this.teamId}-${id}/download/${name}`,
      permalink: `${this.baseUrl}/files/${f.user}/${id}/${name}`,
      completed: f.completed,
      channel: undefined,
      threadTs: undefined,
      messageTs: undefined,
      shares: [],
    };
    (f.origin === 'user' ? this.userFiles : this.files).set(id, file);
    return file;
  }

  /** A file by id: an upload of the bot or a user's file. */
  file(id: string): FakeSlackFile | undefined {
    return this.files.get(id) ?? this.userFiles.get(id);
  }

  /** The next position among all calls and uploads. */
  nextSeq(): number {
    return ++this.seq;
  }

  /** A new ts, strictly increasing across the workspace: `<seconds>.<6 digits>`. */
  nextTs(): string {
    const micros = Math.max(Math.floor(this.now() * 1000), this.lastTsMicros + 1);
    this.lastTsMicros = micros;
    return formatTs(micros);
  }

  /** One message, deleted or not. */
  message(channel: string, ts: string): FakeSlackMessage | undefined {
    return this.messageIndex.get(`${channel}/${ts}`);
  }

  /** Stores a new message with a fresh ts and its first revision. */
  storeMessage(m: NewMessage): FakeSlackMessage {
    const ts = this.nextTs();
    const message: FakeSlackMessage = {
      channel: m.channel,
      ts,
      threadTs: m.threadTs,
      user: m.user,
      botId: m.botId,
      text: m.text,
      blocks: m.blocks,
      files: m.files,
      revisions: [{ text: m.text, blocks: m.blocks, at: this.now(), method: m.method }],
      deleted: false,
      via: m.via,
      mentions: [],
      stream: undefined,
    };
    message.mentions = this.mentionsOf(message);
    this.messageList.push(message);
    this.messageIndex.set(`${m.channel}/${ts}`, message);
    return message;
  }

  mentionsOf(m: { text: string; blocks: unknown[] | undefined }): string[] {
    // Whether Slack reads them from the text or the blocks, each notifies once.
    return [...new Set([...[m.text, ...mrkdwnTexts(m.blocks)].flatMap(mentionsIn), ...richTextMentions(m.blocks)])];
  }

  /** The message object Slack returns. */
  wire(m: FakeSlackMessage): Json {
    // The writes of a stream are not edits.
    const edit = m.revisions.slice(1).findLast((r) => !r.method.endsWith('Stream'));
    return {
      type: 'message',
      text: m.text,
      // Another app's bot_message has no user.
      ...(m.user ? { user: m.user } : {}),
      ...(m.botId ? { bot_id: m.botId, ...(m.botId === this.botId ? { app_id: this.appId } : {}) } : {}),
      team: this.teamId,
      ts: m.ts,
      ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
      ...(m.blocks ? { blocks: m.blocks } : {}),
      ...(m.files.length ? { files: m.files.map((id) => this.fileObject(this.file(id)!)), upload: true } : {}),
      ...(edit ? { edited: { user: m.user, ts: formatTs(Math.floor(edit.at * 1000)) } } : {}),
    };
  }

  /**
   * The file object Slack returns (in files.info, message events, shared messages): the fields of
   * a real `file_share` event's file (hackage slack-web tests/golden/SlackWebhookEvent/
   * message_file_share.json; @slack/types AppMentionEvent.files), with where it is shared and
   * by whom (file-shares.ts). Thumbnails are not served.
   */
  fileObject(f: FakeSlackFile): Json {
    const channel = f.channel ? this.channels.get(f.channel) : undefined;
    const mimetype = f.contentType ?? 'application/octet-stream';
    return {
      id: f.id,
      created: f.created,
      timestamp: f.created,
      name: f.filename,
      title: f.title ?? f.filename,
      mimetype,
      filetype: f.filetype,
      pretty_type: fileTypeOf(f.filename, mimetype).pretty,
      user: f.user,
      user_team: this.teamId,
      editable: false,
      size: f.size,
      mode: 'hosted',
      is_external: false,
      external_type: '',
      is_public: channel !== undefined && channelType(channel) === 'channel',
      public_url_shared: false,
      display_as_bot: false,
      username: '',
      url_private: f.urlPrivate,
      url_private_download: f.urlPrivateDownload,
      media_display_type: 'unknown',
      permalink: f.permalink,
      permalink_public: `https://slack-files.com/${this.teamId}-${f.id}-${f.id.slice(1, 11).toLowerCase()}`,
      is_starred: false,
      has_rich_preview: false,
      file_access: 'visible',
      ...fileSharesOf(this, f),
      ...(f.altText ? { alt_txt: f.altText } : {}),
    };
  }

  /**
   * The channel named by parameter `key` (an id, or a name with or without `#`), in the caller's
   * workspace. @throws SlackApiError `channel_not_found` (another workspace's channel too).
   */
  channelOf(p: Json, key: string): FakeSlackChannel {
    const channel = this.findChannel(required(p, key, 'channel_not_found'));
    if (!channel || !this.visible(channel.team)) throw new SlackApiError('channel_not_found');
    return channel;
  }

  /** Whether something of workspace `team` (default this fake's) is seen by the call being answered. */
  visible(team: string | undefined): boolean {
    return this.callerTeam === undefined || (team ?? this.teamId) === this.callerTeam;
  }

  /** Whether a user is in the workspace the call being answered acts in. */
  userVisible(user: FakeSlackUser): boolean {
    return this.visible(user.team) || (this.callerTeam !== undefined && (user.alsoIn ?? []).includes(this.callerTeam));
  }

  /** The enterprise a workspace belongs to (Enterprise Grid), if any. */
  enterpriseOf(team: string): string | undefined {
    return this.enterprises.get(team);
  }

  /** The workspace of a channel (default this fake's `teamId`). */
  teamOf(channelId: string): string {
    return this.channels.get(channelId)?.team ?? this.teamId;
  }

  /** A channel by id, or by name with or without `#` (never a DM by name). */
  findChannel(ref: string): FakeSlackChannel | undefined {
    const byId = this.channels.get(ref);
    if (byId) return byId;
    const name = ref.replace(/^#/, '');
    for (const c of this.channels.values()) if (c.name === name && !c.isIm) return c;
    return undefined;
  }

  /**
   * @param orPublicScope true for chat.postMessage: with `chat:write.public`, a public channel
   *   needs no membership (docs.slack.dev/reference/scopes/chat.write.public).
   * @throws SlackApiError `not_in_channel` where the bot is not a member.
   */
  requireMember(channel: FakeSlackChannel, orPublicScope = false): void {
    if (channel.botIsMember !== false) return;
    if (orPublicScope && channelType(channel) === 'channel' && this.scopes.includes(CHAT_WRITE_PUBLIC)) return;
    throw new SlackApiError('not_in_channel');
  }

  /** Checks text (length) and that there is something to show. @throws SlackApiError `msg_too_long`, `no_text`. */
  checkText(text: string | undefined, blocks: unknown[] | undefined, allowEmpty: boolean): void {
    if (text !== undefined && text.length > this.maxTextChars) throw new SlackApiError('msg_too_long');
    if (!allowEmpty && (text === undefined || text === '') && (blocks === undefined || blocks.length === 0))
      throw new SlackApiError('no_text');
  }

  /** A thread parent in `channel` for `thread_ts` (a reply's ts resolves to its parent). @throws SlackApiError. */
  threadParent(channel: string, threadTs: string | undefined): string | undefined {
    if (threadTs === undefined || threadTs === '') return undefined;
    if (!TS_PATTERN.test(threadTs))
      throw new SlackApiError('invalid_thread_ts', {
        response_metadata: { messages: [`[ERROR] ${threadTs} is not a valid thread_ts`] },
      });
    const parent = this.message(channel, threadTs);
    if (!parent || parent.deleted) throw new SlackApiError('thread_not_found');
    return parent.threadTs ?? parent.ts;
  }

  /** Forgets messages (streams too), files, calls, ephemerals, response URLs, failures, uploads, downloads, event deliveries, loading statuses, button presses and rate-limit state. */
  reset(): void {
    this.calls.length = 0;
    this.downloads.length = 0;
    this.eventDeliveries.length = 0;
    this.eventTimestamps.clear();
    this.files.clear();
    this.userFiles.clear();
    this.ephemerals.length = 0;
    this.responseUrls.clear();
    this.platformFailures.length = 0;
    this.uploads.length = 0;
    this.messageList.length = 0;
    this.messageIndex.clear();
    this.assistantStatuses.length = 0;
    this.blockActions.length = 0;
    this.limits.reset();
  }
}
