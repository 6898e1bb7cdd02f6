/**
 * What goes from Slack to the app, and what came back: slash commands, Events API events
 * (over HTTP or Socket Mode), request signing options, Socket Mode connections and envelopes,
 * and the inputs of the user-message builders. Re-exported by test/fakes/slack.ts.
 */
import type { FakeSlackFile, PlatformFailure } from './types.ts';

/** A slash command as Slack sends it; omitted fields get workspace defaults. */
export interface SlashCommandInput {
  /** With the slash, e.g. `/chat`. */
  command: string;
  /** What the user typed after the command (unescaped: the fake applies Slack's `&`, `<`, `>` escaping). */
  text: string;
  /** Default: the first configured channel. */
  channel_id?: string;
  /** Default: the first configured user. */
  user_id?: string;
  team_id?: string;
}

/** How to (mis)sign a request; the default is a correct signature made now. */
export interface SignOptions {
  /** Sign with this secret instead of the right one. */
  signingSecret?: string;
  /** `x-slack-request-timestamp` in seconds (e.g. 10 minutes ago: stale). */
  timestampSec?: number;
  /** Send this `x-slack-signature` verbatim. */
  signature?: string;
  /** Path on the app; default `/slack/events`. */
  path?: string;
}

/** What came back from the app for a slash command. */
export interface SlashCommandResult {
  /** HTTP status of the ack; undefined when there was none within the deadline or the app was unreachable. */
  status: number | undefined;
  body: string;
  /** ms from sending to the complete answer (real time). */
  ackMs: number;
  /** HTTP 200 within Slack's deadline (3 s): anything else Slack shows the user as an error. */
  ackedInTime: boolean;
  responseUrl: string;
  triggerId: string;
  /** The exact body that was signed and sent. */
  rawBody: string;
  /** Set when Slack would have shown the user an error. */
  failure: PlatformFailure | undefined;
}

/** How a Socket Mode connection ended. */
export interface SocketModeClose {
  /** WebSocket close code: 1000 normal closure; 1005 a close frame without a code; 1006 no close frame at all (the TCP connection just ended). */
  code: number;
  reason: string;
  /** `app`: the app sent the first close frame; `fake`: the fake closed it ({@link FakeSlack.close}); `network`: it ended without a close frame. */
  initiatedBy: 'app' | 'fake' | 'network';
  /** Fake-clock ms. */
  at: number;
}

/** One Socket Mode WebSocket connection of the app, opened with a URL from `apps.connections.open`. */
export interface SocketModeConnection {
  /** 1, 2, … in the order connections opened. */
  id: number;
  /** The single-use ticket of the URL it connected with. */
  ticket: string;
  /** Fake-clock ms when the upgrade was accepted (and `hello` sent). */
  openedAt: number;
  /** WebSocket pings the fake sent, and the pongs the app answered them with. */
  pingsSent: number;
  pongsReceived: number;
  /** WebSocket pings the app sent (each answered with a pong). */
  pingsReceived: number;
  /** Every text message the app sent, oldest first: parsed JSON, or the raw string when it is not JSON. */
  received: unknown[];
  /** Reasons of the `disconnect` messages the fake sent on this connection. */
  disconnectsSent: string[];
  /** Undefined while the connection is open. */
  closed: SocketModeClose | undefined;
}

/** An envelope the fake sent over a Socket Mode connection, and the app's ack of it. */
export interface SocketModeEnvelope {
  envelopeId: string;
  type: 'slash_commands' | 'events_api' | 'interactive';
  connectionId: number;
  /** The envelope's `payload` as sent. */
  payload: Record<string, unknown>;
  /** Fake-clock ms. */
  sentAt: number;
  /** The first message of the app with this `envelope_id`; undefined until one arrives. */
  ack:
    | {
        /** The ack's `payload` (@slack/socket-mode always sends one, `{}` for a bare ack); undefined when absent. */
        payload: Record<string, unknown> | undefined;
        /** Real-time ms from sending the envelope to the ack. */
        ms: number;
        /** Arrived after Slack's deadline (`ackTimeoutMs`). */
        late: boolean;
        /** Fake-clock ms. */
        at: number;
      }
    | undefined;
}

/** What came back from the app for a slash command sent over Socket Mode. */
export interface SocketSlashCommandResult {
  envelopeId: string;
  /** The connection it went over; undefined when the app had none open (then `failure.kind` is `dispatch_failed`). */
  connectionId: number | undefined;
  /** An ack carrying this `envelope_id` arrived within Slack's deadline (3 s). */
  ackedInTime: boolean;
  /** Real-time ms from sending to the ack, when it came within the deadline. */
  ackMs: number | undefined;
  /** The ack's `payload` (`{}` for a bare `ack()`), when it came within the deadline. */
  ackPayload: Record<string, unknown> | undefined;
  responseUrl: string;
  triggerId: string;
  /** The envelope's payload as sent: the same fields as the HTTP form body. */
  payload: Record<string, string>;
  /** Set when Slack would have shown the user an error (`operation_timeout`, `dispatch_failed`). */
  failure: PlatformFailure | undefined;
}

/** An event as Slack puts it in an `event_callback`'s `event` field (see the builders of FakeSlack). */
export type SlackEvent = { type: string; channel?: string; [field: string]: unknown };

/** A message a user writes: input of {@link FakeSlack.mentionEvent}, {@link FakeSlack.imMessageEvent}, {@link FakeSlack.channelMessageEvent}. */
export interface UserMessageInput {
  channel: string;
  user: string;
  /**
   * What the user typed. `&`, `<`, `>` are escaped as Slack does, except in markup Slack itself
   * produces: `<@U…>`, `<#C…|name>`, `<!here>`, `<https://…|label>`.
   */
  text: string;
  /** Files the user attached ({@link FakeSlack.addUserFile}). */
  files?: FakeSlackFile[];
  /** Written as a reply in this thread (a ts of the thread's parent or of a reply). */
  threadTs?: string;
}

/** A file a user shares: input of {@link FakeSlack.addUserFile}. Exactly one of `data` and `stream`. */
export interface UserFileInput {
  /** File name, e.g. `cat.png`. */
  name: string;
  /** e.g. `image/png`: the `mimetype` Slack reports and the download's content type. */
  mimetype: string;
  /** The bytes. */
  data?: Buffer;
  /** A generated file of this many bytes (deterministic content, 64 KiB chunks, never held in memory). */
  stream?: { bytes: number };
  /** The `size` Slack reports; default the real byte length (set it to make Slack lie). */
  size?: number;
  /** Slack's `filetype`; default from the name / mimetype (`png`, `jpg`, `gif`, `webp`, `pdf`, `text`, `binary`). */
  filetype?: string;
  /** Who shares it; default the first configured user. */
  user?: string;
  /** Default the name. */
  title?: string;
}

/** How to send an event over HTTP ({@link FakeSlack.sendEvent}). */
export interface SendEventOptions {
  /** `event_id`; default a fresh `Ev…`. A retry of an event sends the same id. */
  eventId?: string;
  /** Sends `X-Slack-Retry-Num` (1, 2, 3 for Slack's retries) and `X-Slack-Retry-Reason`. */
  retryNum?: number;
  /** `X-Slack-Retry-Reason` with `retryNum`: `http_timeout` (default), `http_error`, `connection_failed`, `too_many_redirects`, `ssl_error`, `unknown_error`. */
  retryReason?: string;
  /** Deliberate signing faults. */
  sign?: SignOptions;
  /** `event_time`, seconds since the epoch; default from the event's `event_ts`. */
  eventTime?: number;
  /**
   * The envelope's workspace (`team_id`) for an event with no channel (`app_uninstalled`,
   * `tokens_revoked`); default the fake's first workspace. An event with a channel names the channel's.
   */
  teamId?: string;
}

/** What came back from the app for an event sent over HTTP. */
export interface SendEventResult {
  /** HTTP status of the ack; undefined when there was none within the deadline or the app was unreachable. */
  status: number | undefined;
  /** Real-time ms from sending to the complete answer. */
  ackMs: number;
  body: string;
  eventId: string;
  /** HTTP 200 within Slack's deadline (3 s). Otherwise Slack would retry the event. */
  ackedInTime: boolean;
  /** The exact JSON body that was signed and sent. */
  rawBody: string;
  failure: PlatformFailure | undefined;
}

/** How to send an event over Socket Mode ({@link FakeSlack.sendSocketEvent}). */
export interface SocketEventOptions {
  eventId?: string;
  /** The envelope's `retry_attempt` (default 0). */
  retryNum?: number;
  /** The envelope's `retry_reason` (default `''`, or `timeout` with a `retryNum`). */
  retryReason?: string;
  /** Default the newest open connection. */
  connectionId?: number;
  eventTime?: number;
}

/** What came back from the app for an event sent over Socket Mode. */
export interface SocketEventResult {
  envelopeId: string;
  eventId: string;
  /** Undefined when the app had no open connection (then `failure.kind` is `dispatch_failed`). */
  connectionId: number | undefined;
  ackedInTime: boolean;
  ackMs: number | undefined;
  ackPayload: Record<string, unknown> | undefined;
  /** The envelope's payload: the `event_callback` body. */
  payload: Record<string, unknown>;
  failure: PlatformFailure | undefined;
}

/** One delivery of an event to the app (a retry is a delivery of its own). */
export interface EventDelivery {
  eventId: string;
  /** The event's `type` (`app_mention`, `message`). */
  type: string;
  /** The subscription it was delivered under, e.g. `message.im`. */
  subscription: string;
  via: 'http' | 'socket';
  /** Undefined for the first delivery. */
  retryNum: number | undefined;
  /** Acked (HTTP 200, or an ack by envelope_id) within Slack's deadline. */
  ackedInTime: boolean;
  /** Fake-clock ms. */
  at: number;
}

/** What came back from the app for a `url_verification` request. */
export interface UrlVerificationResult {
  status: number | undefined;
  body: string;
  challenge: string;
  /** HTTP 200 with the challenge as the body, as `{ "challenge": … }` JSON, or as `challenge=…`: Slack accepts the URL. */
  verified: boolean;
}
