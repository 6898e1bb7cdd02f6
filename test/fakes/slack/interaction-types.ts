/**
 * Public types of button presses (`block_actions` interaction payloads, interactivity.ts):
 * what a test asks for and what came back. Re-exported by test/fakes/slack.ts.
 */
import type { PlatformFailure } from './types.ts';

/** A user presses a button of a message. */
export interface BlockActionInput {
  /** Who presses (a known user who can see the message). */
  user: string;
  channel: string;
  /** The ts of the message that carries the button. */
  messageTs: string;
  /** The button's `action_id`. */
  actionId: string;
  /** Picks, among buttons with that `action_id`, the one with this `value`. */
  value?: string;
  /** Picks the button in the block with this `block_id`. */
  blockId?: string;
}

/** What came back from the app for a button press over HTTP. */
export interface BlockActionResult {
  /** HTTP status of the ack; undefined when there was none within the deadline or the app was unreachable. */
  status: number | undefined;
  body: string;
  /** Real-time ms from sending to the complete answer. */
  ackMs: number;
  /** HTTP 200 within Slack's deadline (3 s); otherwise Slack shows the user a warning. */
  ackedInTime: boolean;
  /** The `block_actions` payload as sent (the JSON of the form's `payload` field). */
  payload: Record<string, unknown>;
  /** The exact form body that was signed and sent: `payload=<URL-encoded JSON>`. */
  rawBody: string;
  responseUrl: string;
  triggerId: string;
  failure: PlatformFailure | undefined;
}

/** What came back from the app for a button press over Socket Mode (an `interactive` envelope). */
export interface SocketBlockActionResult {
  envelopeId: string;
  /** Undefined when the app had no open connection (then `failure.kind` is `dispatch_failed`). */
  connectionId: number | undefined;
  ackedInTime: boolean;
  ackMs: number | undefined;
  ackPayload: Record<string, unknown> | undefined;
  /** The envelope's payload: the `block_actions` payload. */
  payload: Record<string, unknown>;
  responseUrl: string;
  triggerId: string;
  failure: PlatformFailure | undefined;
}

/** One button press sent to the app ({@link FakeSlack.blockActions}). */
export interface BlockActionRecord {
  via: 'http' | 'socket';
  user: string;
  channel: string;
  messageTs: string;
  actionId: string;
  /** The block the button is in (its `block_id`, or the one Slack would have generated). */
  blockId: string;
  /** The button's value; undefined for a button without one. */
  value: string | undefined;
  /** HTTP status of the ack (HTTP only). */
  status: number | undefined;
  ackedInTime: boolean;
  /** Fake-clock ms. */
  at: number;
}
