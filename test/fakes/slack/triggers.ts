/**
 * `trigger_id`s: every one this fake sends the app (slash commands, button presses, message
 * shortcuts, view submissions) is issued here for the user who acted, so that `views.open`
 * (views.ts) can exchange it as Slack does: once (`exchanged_trigger_id` after), within 3 s of
 * its issue on the Slack-side clock (`expired_trigger_id`); an id this fake never issued is
 * `invalid_trigger_id` (docs.slack.dev/reference/methods/views.open, its errors).
 */
import { randomBytes } from 'node:crypto';
import { SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** How long a trigger_id may be exchanged, in ms (Slack: 3 s). */
export const TRIGGER_TTL_MS = 3_000;

/** The triggers issued in each workspace. */
const issued = new WeakMap<Workspace, Map<string, { user: string; issuedAt: number; exchanged: boolean }>>();

/** A fresh trigger_id (`<seconds>.<number>.<hex>`, Slack's form) for an action of `user`. */
export function issueTrigger(ws: Workspace, user: string): string {
  const id = `${Math.floor(ws.now() / 1000)}.${randomBytes(4).readUInt32BE()}.${randomBytes(16).toString('hex')}`;
  const triggers = issued.get(ws) ?? new Map();
  issued.set(ws, triggers);
  triggers.set(id, { user, issuedAt: ws.now(), exchanged: false });
  return id;
}

/**
 * Exchanges a trigger (once, within {@link TRIGGER_TTL_MS}).
 * @returns the user it was issued for.
 * @throws SlackApiError `invalid_trigger_id`, `exchanged_trigger_id`, `expired_trigger_id`.
 */
export function exchangeTrigger(ws: Workspace, id: string | undefined): string {
  const trigger = id ? issued.get(ws)?.get(id) : undefined;
  if (!trigger) throw new SlackApiError('invalid_trigger_id');
  if (trigger.exchanged) throw new SlackApiError('exchanged_trigger_id');
  if (ws.now() - trigger.issuedAt > TRIGGER_TTL_MS) throw new SlackApiError('expired_trigger_id');
  trigger.exchanged = true;
  return trigger.user;
}
