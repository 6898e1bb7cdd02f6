/**
 * Interaction callbacks and interaction webhooks (follow-ups, edits of the original response).
 * A response that is not ephemeral is echoed as MESSAGE_CREATE, the deferral's loading message
 * included. After a button press answered with 6 or 7, `@original` is the message that
 * carries the button. An interaction only a user install authorized gets at most 5 follow-ups
 * (user-install.ts).
 */
import type { Ctx } from '../context.ts';
import {
  discordError,
  type ErrorTree,
  formError,
  HttpError,
  hasErrors,
  invalidWebhookToken,
  unknownInteraction,
  unknownMessage,
  unknownWebhook,
} from '../errors.ts';
import { type Body, NO_BODY, type Reply } from '../http.ts';
import { checkModal } from '../modals.ts';
import {
  type CallbackRecord,
  FakeAutocomplete,
  type FakeInteraction,
  type FakeMessage,
  MessageFlag,
} from '../model.ts';
import type { FakeState } from '../state.ts';
import type { AutocompleteChoice, Json } from '../types.ts';
import { checkFollowUp } from '../user-install.ts';
import { isObject } from '../util.ts';
import { checkChoices } from '../validation.ts';
import { messageJson } from '../wire.ts';
import { announce, commit, existingMessage, prepareWrite } from '../writes.ts';
import type { AreaRoutes } from './index.ts';

/** Callback types Discord accepts for each interaction type. */
const RESPONSE_TYPES: Record<number, number[]> = {
  // Application command: a message (4), a deferral (5) or a modal (9).
  2: [4, 5, 9],
  // Message component: also a deferred update (6) or an update (7) of the message with the component.
  3: [4, 5, 6, 7, 9],
  // Autocomplete: only its result (8).
  4: [8],
  // Modal submit: a message or a deferral (6 and 7 too for a modal shown for a button press; never a modal).
  5: [4, 5, 6, 7],
};

const invalidType = () =>
  formError({
    type: {
      _errors: [
        {
          code: 'INTERACTION_RESPONSE_TYPE_INVALID',
          message: 'Interaction response type is invalid for this interaction',
        },
      ],
    },
  });

/**
 * `POST /interactions/:id/:token/callback`: the initial response, authenticated by the token
 * in the path, within `responseWindowMs` of the dispatch (else 10062), once (else 40060), of a
 * type that fits the interaction: 5 (deferred: a loading message) or 4 (a message) for a
 * command; also 6 (deferred update) and 7 (update of the message with the button) for a
 * button press; 8 (autocomplete result, choices checked) for an autocomplete; 9 (a modal,
 * checked: modals.ts) for a command or a button press; 4 or 5 for a modal submit (6 and 7 only
 * when its modal was shown for a button press).
 */
export async function callback(ctx: Ctx, id: string, token: string, url: URL, body: Body): Promise<Reply> {
  const { state } = ctx;
  const interaction = state.interactions.get(id);
  const json = isObject(body.json) ? body.json : {};
  const data = isObject(json.data) ? json.data : {};
  const record: CallbackRecord = {
    seq: state.nextSeq(),
    at: Date.now(),
    type: typeof json.type === 'number' ? json.type : undefined,
    flags: typeof data.flags === 'number' ? data.flags : 0,
    status: 0,
    code: undefined,
    ...(json.type === 8 ? { choices: data.choices } : {}),
  };
  const answer = (reply: Reply): Reply => {
    record.status = reply.status;
    if (interaction) {
      interaction.callbacks.push(record);
      state.events.emit('callback', interaction, record);
    }
    return reply;
  };
  const refuse = (error: HttpError): Reply => {
    record.code = error.body.code as number;
    return answer({ status: error.status, body: error.body });
  };
  if (!interaction || interaction.token !== token) return refuse(unknownInteraction());
  if (interaction.response) return refuse(discordError(400, 40060, 'Interaction has already been acknowledged.'));
  if (record.at - interaction.dispatchedAt > state.options.responseWindowMs) return refuse(unknownInteraction());
  if (record.type === undefined || !RESPONSE_TYPES[interaction.type]!.includes(record.type))
    return refuse(invalidType());
  if ((record.type === 6 || record.type === 7) && interaction.type === 5 && !interaction.componentMessage)
    return refuse(invalidType());

  let original: FakeMessage | undefined;
  try {
    original = await respond(ctx, interaction, record, data, body);
  } catch (error) {
    if (error instanceof HttpError) return refuse(error);
    throw error;
  }
  interaction.original = original;
  interaction.response = record;
  if (interaction instanceof FakeAutocomplete) interaction.answered(data.choices as AutocompleteChoice[], record.at);
  if (url.searchParams.get('with_response') === 'true') {
    return answer({
      status: 200,
      body: {
        interaction: {
          id: interaction.id,
          type: interaction.type,
          ...(original && (record.type === 4 || record.type === 5)
            ? {
                response_message_id: original.id,
                response_message_loading: original.loading,
                response_message_ephemeral: original.ephemeral,
              }
            : {}),
        },
        resource: { type: record.type, ...(original ? { message: messageJson(state, original) } : {}) },
      },
    });
  }
  return answer({ status: 204 });
}

/**
 * Applies an accepted callback type: the message it creates (4, 5) or updates (6, 7), none
 * for an autocomplete result (8).
 * @throws HttpError as Discord refuses the body (form errors, an empty message, choices out of
 *   bounds), 10008 when the message with the button was deleted.
 */
async function respond(
  ctx: Ctx,
  interaction: FakeInteraction,
  record: CallbackRecord,
  data: Json,
  body: Body,
): Promise<FakeMessage | undefined> {
  switch (record.type) {
    case 5: {
      if ((record.flags & ~MessageFlag.Ephemeral) !== 0)
        throw formError({
          data: { flags: { _errors: [{ code: 'MESSAGE_FLAGS_INVALID', message: 'Invalid flags for this message' }] } },
        });
      const original = newOriginal(ctx, interaction);
      original.flags = MessageFlag.Loading | (record.flags & MessageFlag.Ephemeral);
      original.revisions.push({
        seq: record.seq,
        at: record.at,
        via: 'defer',
        content: '',
        embeds: [],
        attachmentIds: [],
        flags: original.flags,
        allowedMentions: undefined,
        pinged: { everyone: false, users: [], roles: [] },
        reference: undefined,
        components: [],
      });
      announce(ctx, original);
      return original;
    }
    case 4: {
      const written = await prepareWrite(ctx, { json: data, files: body.files }, undefined, {
        allowEphemeral: true,
        channelId: interaction.channelId,
      });
      const original = newOriginal(ctx, interaction);
      commit(ctx, original, written, 'create', 'callback');
      return original;
    }
    case 6:
    case 7: {
      const message = interaction.componentMessage;
      if (!message || message.deleted) throw unknownMessage();
      if (record.type === 7) {
        const written = await prepareWrite(ctx, { json: data, files: body.files }, message, {
          allowEphemeral: true,
          channelId: interaction.channelId,
        });
        commit(ctx, message, written, 'edit', 'callback');
      }
      return message;
    }
    case 9: {
      checkModal(data);
      interaction.modal = data;
      return undefined;
    }
    case 8: {
      const type =
        (interaction.payload.data as { options?: Array<{ focused?: boolean; type: number }> }).options?.find(
          (o) => o.focused,
        )?.type ?? 3;
      const errors: ErrorTree = {};
      checkChoices(data.choices, type, errors);
      if (hasErrors(errors)) throw formError(errors);
      return undefined;
    }
  }
  throw invalidType();
}

/**
 * The new message of a type 4 or 5 response: a chat-input command's is type 20, a message
 * command's 23 (CONTEXT_MENU_COMMAND), a button press's or a modal submit's an ordinary message (0).
 */
function newOriginal(ctx: Ctx, interaction: FakeInteraction): FakeMessage {
  const message = ctx.state.newMessage(interaction.channelId, 'original', interaction);
  if (interaction.type === 3 || interaction.type === 5) message.type = 0;
  else if (interaction.targetMessage) message.type = 23;
  return message;
}

/** The interaction of a webhook route, checking app id and token. */
function interactionOf(state: FakeState, applicationId: string, token: string): FakeInteraction {
  if (applicationId !== state.applicationId) throw unknownWebhook();
  const interaction = state.byToken.get(token);
  if (!interaction || Date.now() > interaction.tokenExpiresAt) throw invalidWebhookToken();
  return interaction;
}

/**
 * `/webhooks/:app/:token[/messages/:message]`: follow-ups (POST) and the original response or
 * a follow-up (GET, PATCH, DELETE; `@original` arrives percent-encoded), authenticated by the
 * interaction token for `tokenTtlMs` (then 50027).
 */
export async function webhook(
  ctx: Ctx,
  method: string,
  applicationId: string,
  token: string,
  messageRef: string | undefined,
  url: URL,
  path: string,
  body: Body,
): Promise<Reply> {
  const { state, budgets } = ctx;
  const interaction = interactionOf(state, applicationId, token);
  if (messageRef === undefined) {
    // POST: a follow-up message.
    if (!interaction.response) throw unknownWebhook();
    checkFollowUp(interaction);
    budgets.check(interaction.channelId, method, path, token);
    const written = await prepareWrite(ctx, body, undefined, {
      allowEphemeral: true,
      channelId: interaction.channelId,
    });
    const headers = budgets.spend(interaction.channelId, token);
    const message = state.newMessage(interaction.channelId, 'followup', interaction);
    commit(ctx, message, written, 'create', 'webhook');
    interaction.followUps.push(message);
    if (url.searchParams.get('wait') === 'true') return { status: 200, body: messageJson(state, message), headers };
    return { status: 204, headers };
  }
  const message =
    messageRef === '@original' ? interaction.original : interaction.followUps.find((m) => m.id === messageRef);
  if (!message || message.deleted) throw unknownMessage();
  return existingMessage(ctx, method, message, interaction.channelId, path, body, 'webhook', token);
}

/** `POST /interactions/:id/:token/callback` and `/webhooks/:app/:token[/messages/:message]`. */
export const interactionRoutes: AreaRoutes = (ctx, rq) => {
  const { p, method } = rq;
  if (rq.is('interactions', '*', '*', 'callback')) {
    rq.allow('POST');
    return rq.body().then((body) => callback(ctx, p[1]!, p[2]!, rq.url, body));
  }
  if (p[0] === 'webhooks' && (p.length === 3 || (p.length === 5 && p[3] === 'messages'))) {
    if (p.length === 3) rq.allow('POST');
    else rq.allow('GET', 'PATCH', 'DELETE');
    const body = method === 'GET' || method === 'DELETE' ? Promise.resolve(NO_BODY) : rq.body();
    return body.then((b) => webhook(ctx, method, p[1]!, p[2]!, p[4], rq.url, rq.path, b));
  }
  return undefined;
};
