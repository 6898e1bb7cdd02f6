/**
 * Presses of the bot's Block Kit buttons (`block_actions` interaction payloads, Slack's
 * "Handling user interaction" docs): acked at once (Slack allows 3 s), then handed to the
 * handler named by the button's `action_id` (`<command>:<args…>`): Stop (delivery/stops.ts),
 * Regenerate (features/regenerate.ts), 👍 / 👎 (features/feedback.ts: a `feedback_buttons`
 * element's press, its `action_id` and the pressed button's `value`) or a command's
 * `onComponent` (e.g. /imagine's Reroll).
 * `update` replaces the message that carries the button with `chat.update`; the presser alone
 * is told things through the payload's `response_url` (ephemeral); `postedImage` finds a file
 * the bot uploaded again (files.info, then the file with the bot token: files.ts), only when it
 * is shared in the pressed message's conversation; `openForm`
 * opens a modal with the press's `trigger_id` (views.open: feedback.ts). A press of the Home
 * tab's Export buttons (home-export.ts) has no `response_url`: the Home, published again, tells it.
 */
import type { App, BlockAction, ButtonAction, FeedbackButtonsAction, RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { type Command, runComponent, runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { STOP_BUTTON } from '../../core/delivery/stops.ts';
import { REGENERATE_BUTTON } from '../../core/features/answer-state.ts';
import { FEEDBACK_BUTTON, pressFeedback } from '../../core/features/feedback.ts';
import { pressRegenerate } from '../../core/features/regenerate.ts';
import { channelKey, conversationKey, parseButtonId } from '../../core/keys.ts';
import type { MessageAction } from '../../core/message-action.ts';
import type { ComponentContext, OutgoingMessage } from '../../core/platform.ts';
import type { RunningCommands } from '../../core/running.ts';
import { type Logger, newReference } from '../../log.ts';
import { blocksOf, fallbackTextOf } from './blocks.ts';
import { explainSlackError } from './errors.ts';
import { formView, registerButtonForms } from './feedback.ts';
import { postedSlackImage } from './files.ts';
import { publishHome } from './home.ts';
import { HOME_EXPORT_BUTTON, pressHomeExport } from './home-export.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { SlackReply } from './reply.ts';
import { refusalWhileStopping } from './stopping.ts';
import type { SlackDirectory } from './users.ts';
import { updateMessage } from './writes.ts';

/** What the action handler needs. */
export interface SlackActionDeps {
  core: Core;
  commands: readonly Command[];
  log: Logger;
  running: RunningCommands;
  directory: SlackDirectory;
  /** The origin of SLACK_API_URL when the operator set one (files.ts `slackFileHost`). */
  apiOrigin: string | undefined;
  /** The message actions, listed on the Home tab published again after a press there (home.ts). */
  messageActions: readonly MessageAction[];
}

/**
 * An answer only the presser sees, through the press's `response_url` (`replace_original: false`:
 * the pressed message stays). Never throws (a failure is logged).
 */
function ephemeralAnswer(respond: RespondFn, log: Logger): (message: string | OutgoingMessage) => Promise<void> {
  return async (message) => {
    const m = typeof message === 'string' ? { content: message } : message;
    const blocks = blocksOf(m);
    await respond({
      response_type: 'ephemeral',
      replace_original: false,
      text: fallbackTextOf(m),
      ...(blocks ? { blocks } : {}),
    }).catch((error: unknown) => log.warn({ err: error }, 'could not answer a button press on Slack'));
  };
}

/** A press of a button, or of a `feedback_buttons` element's 👍 or 👎. */
type Press = BlockAction<ButtonAction | FeedbackButtonsAction>;

/**
 * Registers the handler of every button of the bot (any `action_id` of a `block_actions`
 * payload), and of the forms their presses open (feedback.ts).
 */
export function registerBlockActions(app: App, deps: SlackActionDeps): void {
  registerButtonForms(app, deps);
  app.action<Press>({ type: 'block_actions' }, async ({ ack, body, action, client, respond }) => {
    await ack();
    const { command: name, args: idArgs } = parseButtonId(action.action_id ?? '');
    // The Home tab's buttons: no response_url there, the Home itself tells the result.
    if (name === HOME_EXPORT_BUTTON) return pressHome(body, client, deps, idArgs);
    const sendEphemeral = ephemeralAnswer(respond, deps.log);
    if (deps.running.draining) {
      const team = body.team?.id ?? body.user.team_id ?? 'unknown';
      await sendEphemeral(await refusalWhileStopping(client, deps, team, body.user.id));
      return;
    }
    // A feedback_buttons element has one action_id; the button pressed is its value.
    const args = action.type === 'feedback_buttons' ? [...idArgs, action.value] : idArgs;
    const ref = newReference();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const log = deps.log.child({
      platform: 'slack',
      ref,
      command: `${name}:button`,
      user: body.user.id,
      channel,
      button: action.action_id,
    });
    const ctx = pressContext(body, client, deps, { args, ref, log, sendEphemeral });
    void deps.running.run(
      (signal) =>
        runInvocation(
          `${name}:button`,
          // Slack's refusals (a rights check it did not answer: users.ts) in words, as for a command.
          {
            platform: 'slack',
            conversationId: ctx.conversationId,
            locale: ctx.locale,
            log,
            ref,
            reply: { sendEphemeral, explain: explainSlackError },
          },
          deps.core,
          async () => {
            if (name === STOP_BUTTON) return deps.core.stops.press(ctx);
            if (name === REGENERATE_BUTTON) return pressRegenerate({ ...ctx, signal }, deps.core);
            if (name === FEEDBACK_BUTTON) return pressFeedback(ctx, deps.core);
            return runComponent(
              deps.commands.find((c) => c.name === name),
              { ...ctx, signal },
              deps.core,
            );
          },
        ),
      (error) => log.error({ err: error }, 'slack button handler failed'),
    );
  });
}

/** A press of a Home export button (home-export.ts), told by publishing the presser's Home again. */
async function pressHome(body: Press, client: WebClient, deps: SlackActionDeps, args: string[]): Promise<void> {
  const team = body.team?.id ?? body.user.team_id ?? 'unknown';
  const user = body.user.id;
  const ref = newReference();
  const log = deps.log.child({ platform: 'slack', ref, command: 'export', user, button: HOME_EXPORT_BUTTON });
  const republish = (notice: string) => publishHome(client, deps, { team, user, ref }, log, notice);
  const locale = { user: deps.directory.locale(client, team, user) };
  void pressHomeExport(client, deps, { team, user, args, ref, log, locale }, republish);
}

/**
 * The platform-neutral ComponentContext of a press: `reply` posts in the pressed message's
 * channel (its thread when it is in one), `update` replaces the pressed message (chat.update),
 * `postedImage` finds a file the bot uploaded (files.ts). Its signal is replaced by the running
 * invocation's.
 */
function pressContext(
  body: Press,
  client: WebClient,
  deps: SlackActionDeps,
  press: Pick<ComponentContext, 'args' | 'ref' | 'log' | 'sendEphemeral'>,
): ComponentContext {
  const team = body.team?.id ?? body.user.team_id ?? 'unknown';
  const channel = body.channel?.id ?? body.container?.channel_id;
  const messageTs = body.message?.ts ?? body.container?.message_ts;
  const threadTs = body.message?.thread_ts as string | undefined;
  const locale = { user: deps.directory.locale(client, team, body.user.id) };
  const keys = { platform: 'slack', team, channel: channel ?? 'unknown' } as const;
  // What a press writes in the channel (a reroll, a regenerated answer) is in the place's words.
  const words = deps.core.languages.forPlace({ channelKey: channelKey(keys), locale });
  const target = { team, channel: channel ?? '', threadTs, continueInThread: false, words };
  const files = { client, downloader: deps.core.downloader, apiOrigin: deps.apiOrigin };
  return {
    platform: 'slack',
    reply: new SlackReply(client, target, (m) => press.sendEphemeral(m), press.log),
    conversationId: conversationKey({ platform: 'slack', team, channel: channel ?? 'unknown', thread: threadTs }),
    channelKey: channelKey(keys),
    locale,
    user: deps.directory.user(client, {
      team,
      id: body.user.id,
      name: body.user.name ?? body.user.username ?? body.user.id,
    }),
    limits: SLACK_MESSAGE_LIMITS,
    signal: new AbortController().signal,
    update: async (message) => {
      if (!channel || !messageTs) throw new Error('the pressed message has no channel or ts');
      const shown = await words;
      const blocks = blocksOf(message, undefined, shown);
      const update = { channel, ts: messageTs, text: fallbackTextOf(message, undefined, shown), blocks: blocks ?? [] };
      await updateMessage(deps.core.scheduler, client, team, update);
    },
    acknowledge: async () => undefined,
    // Regenerate: the first text rewrites the pressed message (chat.update), more follow in its thread.
    replyInPlace: () =>
      new SlackReply(client, { ...target, rewrite: messageTs }, (m) => press.sendEphemeral(m), press.log),
    postedImage: (ref) => postedSlackImage(ref, { user: body.user.id, channel: channel ?? '' }, files),
    openForm: async (form) => {
      // The presser's language: its lookup started with the press (users.ts), as the form's words.
      const words = await deps.core.languages.forUser({ locale });
      await client.views.open({ trigger_id: body.trigger_id, view: formView(form, { channel }, words) });
    },
    ...press,
  };
}
