/**
 * The App Home's Home tab: `views.publish` (docs.slack.dev/reference/methods/views.publish: no
 * scope; tier 4) stores a `home` view for one user, which Slack then shows them and sends back
 * in the `view` of their next `app_home_opened` (agent.ts).
 *
 * Checked as Slack does: `user_id` a user of the workspace (`invalid_arguments`, "invalid
 * `user_id`"), `view` JSON (`invalid_arguments`), `type: 'home'`, 1 to 100 `blocks` (Block Kit
 * reference, "Home tab": up to 100 blocks) each within Block Kit's limits (blocks.ts: a
 * section's text 3,000 characters, a header's 150, a context's 10 elements…), `callback_id`
 * and `external_id` at most 255 characters, `private_metadata` at most 3,000, the whole view at
 * most 250 kB (`view_too_large`); `not_enabled` when the app's Home tab is off (agent.ts
 * `homeTab`). A refusal is `invalid_arguments` / `invalid_blocks` with
 * `response_metadata.messages` naming the JSON pointer.
 */
import { randomBytes } from 'node:crypto';
import { agentState } from './agent.ts';
import { parseBlocks } from './blocks.ts';
import { checkViewCommons } from './views.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, jsonParam, required, SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** One accepted views.publish. */
export interface PublishedHome {
  user: string;
  /** The view as the app sent it (blocks parsed). */
  view: Json;
  /** The view's id (kept across publishes to one user, as Slack does). */
  id: string;
  /** Fake-clock ms. */
  at: number;
}

/** Home tab views published, by workspace, oldest first. */
const published = new WeakMap<Workspace, PublishedHome[]>();

/** Every accepted views.publish of a workspace, oldest first. */
export function homePublishes(ws: Workspace): PublishedHome[] {
  const list = published.get(ws) ?? [];
  published.set(ws, list);
  return list;
}

/** The Home tab a user sees now (the last one published for them), or undefined. */
export function homeViewOf(ws: Workspace, user: string): PublishedHome | undefined {
  return homePublishes(ws).findLast((p) => p.user === user);
}

const invalid = (pointer: string, message: string) =>
  new SlackApiError('invalid_arguments', {
    response_metadata: { messages: [`[ERROR] ${message} [json-pointer:/view${pointer}]`] },
  });

/** Checks a home view as Slack does (see the file's comment). @throws SlackApiError. */
export function checkHomeView(view: unknown): asserts view is Json {
  checkViewCommons(view, 'home');
  if (!Array.isArray(view.blocks) || view.blocks.length < 1) throw invalid('/blocks', 'must be 1 to 100 blocks');
  // Block Kit's own checks, with a home view's 100 blocks (a message takes 50).
  parseBlocks(view.blocks, 100);
}

function viewsPublish(ws: Workspace, p: Json): Json {
  const user = required(p, 'user_id');
  if (!ws.users.has(user))
    throw new SlackApiError('invalid_arguments', { response_metadata: { messages: ['invalid `user_id`'] } });
  const view = jsonParam(p, 'view');
  checkHomeView(view);
  if (!agentState(ws).homeTab) throw new SlackApiError('not_enabled');
  const id = homeViewOf(ws, user)?.id ?? `V${randomBytes(5).toString('hex').toUpperCase()}`;
  const published = { user, view, id, at: ws.now() };
  homePublishes(ws).push(published);
  return { view: viewOutput(ws, published) };
}

/** A published Home view as Slack returns it (views.publish's `view`, a Home press's `view`). */
export function viewOutput(ws: Workspace, published: PublishedHome): Json {
  const { view, id } = published;
  return {
    ...view,
    id,
    team_id: ws.teamId,
    close: null,
    submit: null,
    private_metadata: view.private_metadata ?? '',
    callback_id: view.callback_id ?? '',
    external_id: view.external_id ?? '',
    state: { values: {} },
    hash: `${Math.floor(published.at / 1000)}.${id}`,
    clear_on_close: false,
    notify_on_close: false,
    root_view_id: id,
    previous_view_id: null,
    app_id: ws.appId,
    app_installed_team_id: ws.teamId,
    bot_id: ws.botId,
  };
}

/** The Web API methods of this file. */
export function homeMethods(ws: Workspace): MethodTable {
  return { 'views.publish': (p) => viewsPublish(ws, p) };
}
