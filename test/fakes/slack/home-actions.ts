/**
 * Button presses on the App Home's Home tab: the `block_actions` payload Slack sends when a user
 * presses a button of the Home view published for them (home.ts; docs.slack.dev/reference/
 * interaction-payloads/block_actions-payload, "Handling user interaction"), POSTed and signed as
 * a message's press is (interactivity.ts).
 *
 * What differs from a message's press (as in Slack's published examples of Home tab payloads):
 * `container: { type: 'view', view_id }`; the `view` as views.publish returned it (home.ts
 * `viewOutput`: its blocks, `id`, `hash`, `private_metadata`…); no `channel`, no `message` and no
 * `response_url` (Bolt then gives the listener no `respond`: nothing ephemeral answers a Home
 * press; the app publishes the Home again). `user` carries `name` as well (Bolt's BlockAction
 * notes it is there for Home tab presses).
 *
 * A press Slack could not produce throws: an unknown user, a user without a published Home, no
 * button with that `action_id` (and `value` / `blockId` when given) in their Home. `forgedFrom`
 * makes one anyway, for tests of the app's own checks: the button is taken from that other user's
 * Home and the press sent as the presser's, from the presser's own Home view (a payload Slack never
 * sends: a test that the app does not trust a Home's buttons to be the presser's).
 */
import { homeViewOf, type PublishedHome, viewOutput } from './home.ts';
import { ackFailure, isFaulty, sendSigned } from './inbound.ts';
import type { SignOptions } from './inbound-types.ts';
import { buttonsOf } from './pressables.ts';
import { issueTrigger } from './triggers.ts';
import type { PlatformFailure } from './types.ts';
import { formatTs, type Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A user presses a button of their Home tab. */
export interface HomeActionInput {
  /** Who presses (a known user with a published Home). */
  user: string;
  /** The button's `action_id`. */
  actionId: string;
  /** Picks, among buttons with that `action_id`, the one with this `value`. */
  value?: string;
  /** Picks the button in the block with this `block_id`. */
  blockId?: string;
  /** A forged press: the button is taken from this user's Home (see the file's comment). */
  forgedFrom?: string;
}

/** What came back from the app for a Home press. */
export interface HomeActionResult {
  /** HTTP status of the ack; undefined when none came within the deadline. */
  status: number | undefined;
  ackedInTime: boolean;
  /** The `block_actions` payload as sent. */
  payload: Json;
  failure: PlatformFailure | undefined;
}

/** The Home `user` sees now. @throws Error when none was published for them. */
function homeOf(ws: Workspace, user: string, caller: string): PublishedHome {
  if (!ws.users.has(user)) throw new Error(`${caller}: unknown user ${user}`);
  const home = homeViewOf(ws, user);
  if (!home) throw new Error(`${caller}: no Home tab was published for ${user}, so they have no button to press`);
  return home;
}

/** The button pressed. @throws Error when the Home holds none that matches. */
function findHomeButton(home: PublishedHome, input: HomeActionInput, caller: string) {
  const holder = { channel: home.id, ts: home.id, threadTs: undefined, blocks: home.view.blocks as unknown[] };
  const buttons = buttonsOf(holder);
  const match = buttons.find(
    ({ blockId, button }) =>
      button.action_id === input.actionId &&
      (input.value === undefined || button.value === input.value) &&
      (input.blockId === undefined || blockId === input.blockId),
  );
  if (!match) {
    const present = buttons.map(({ button }) => String(button.action_id)).join('; ') || 'none';
    throw new Error(
      `${caller}: the Home of ${home.user} has no button with action_id ${input.actionId}, so no user could press it (its buttons: ${present})`,
    );
  }
  return match;
}

/** See FakeSlack.sendHomeAction (agent-facade.ts). */
export async function sendHomeAction(
  ws: Workspace,
  botUrl: string,
  input: HomeActionInput,
  sign: SignOptions = {},
): Promise<HomeActionResult> {
  const caller = 'sendHomeAction';
  const own = homeOf(ws, input.user, caller);
  const { blockId, button } = findHomeButton(
    input.forgedFrom ? homeOf(ws, input.forgedFrom, caller) : own,
    input,
    caller,
  );
  const user = ws.users.get(input.user)!;
  const payload: Json = {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: user.team ?? ws.teamId },
    api_app_id: ws.appId,
    token: ws.verificationToken,
    container: { type: 'view', view_id: own.id },
    trigger_id: issueTrigger(ws, input.user),
    team: { id: user.team ?? ws.teamId, domain: ws.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    view: viewOutput(ws, own),
    actions: [
      {
        action_id: button.action_id,
        block_id: blockId,
        text: button.text,
        ...(button.value === undefined ? {} : { value: button.value }),
        type: 'button',
        action_ts: formatTs(Math.floor(ws.now() * 1000)),
      },
    ],
  };
  const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const result = await sendSigned(ws, botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
  const failed = isFaulty(sign) ? undefined : ackFailure(ws, 'block_actions', result);
  const failure = failed && { ...failed, detail: `${failed.detail} (Home button ${input.actionId})` };
  if (failure) ws.platformFailures.push(failure);
  return { status: result.status, ackedInTime: result.status === 200 && !result.timedOut, payload, failure };
}
