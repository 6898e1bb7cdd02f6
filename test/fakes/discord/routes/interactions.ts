/**
 * Interaction callbacks and interaction webhooks (follow-ups, edits of the original response).
 * A response that is not ephemeral is echoed as MESSAGE_CREATE, the deferral's loading message
 * included.
 */
import type { Ctx } from '../context.ts';
import { HttpError, discordError, formError, invalidWebhookToken, unknownInteraction, unknownMessage, unknownWebhook } from '../errors.ts';
import { NO_BODY, type Body, type Reply } from '../http.ts';
import { MessageFlag, type CallbackRecord, type FakeInteraction, type FakeMessage } from '../model.ts';
import type { FakeState } from '../state.ts';
import { isObject } from '../util.ts';
import { messageJson } from '../wire.ts';
import { announce, commit, existingMessage, prepareWrite } from '../writes.ts';
import type { AreaRoutes } from './index.ts';

/**
 * `POST /interactions/:id/:token/callback`: the initial response, authenticated by the token
 * in the path. Type 5 (deferred: a loading message) or 4 (a message); within
 * `responseWindowMs` of the dispatch (else 10062), once (else 40060).
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

  let original: FakeMessage;
  if (record.type === 5) {
    if ((record.flags & ~MessageFlag.Ephemeral) !== 0) return refuse(formError({ data: { flags: { _errors: [{ code: 'MESSAGE_FLAGS_INVALID', message: 'Invalid flags for this message' }] } } }));
    original = state.newMessage(interaction.channelId, 'original', interaction);
    original.flags = MessageFlag.Loading | (record.flags & MessageFlag.Ephemeral);
    original.revisions.push({ seq: record.seq, at: record.at, via: 'defer', content: '', embeds: [], attachmentIds: [], flags: original.flags, allowedMentions: undefined, pinged: { everyone: false, users: [], roles: [] }, reference: undefined });
    announce(ctx, original);
  } else if (record.type === 4) {
    let written;
    try {
      written = await prepareWrite(ctx, { json: data, files: body.files }, undefined, { allowEphemeral: true, channelId: interaction.channelId });
    } catch (error) {
      if (error instanceof HttpError) return refuse(error);
      throw error;
    }
    original = state.newMessage(interaction.channelId, 'original', interaction);
    commit(ctx, original, written, 'create', 'callback');
  } else {
    return refuse(formError({ type: { _errors: [{ code: 'INTERACTION_RESPONSE_TYPE_INVALID', message: 'Interaction response type is invalid for this interaction' }] } }));
  }
  interaction.original = original;
  interaction.response = record;
  if (url.searchParams.get('with_response') === 'true') {
    return answer({
      status: 200,
      body: {
        interaction: { id: interaction.id, type: 2, response_message_id: original.id, response_message_loading: original.loading, response_message_ephemeral: original.ephemeral },
        resource: { type: record.type, message: messageJson(state, original) },
      },
    });
  }
  return answer({ status: 204 });
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
export async function webhook(ctx: Ctx, method: string, applicationId: string, token: string, messageRef: string | undefined, url: URL, path: string, body: Body): Promise<Reply> {
  const { state, budgets } = ctx;
  const interaction = interactionOf(state, applicationId, token);
  if (messageRef === undefined) {
    // POST: a follow-up message.
    if (!interaction.response) throw unknownWebhook();
    budgets.check(interaction.channelId, method, path);
    const written = await prepareWrite(ctx, body, undefined, { allowEphemeral: true, channelId: interaction.channelId });
    const headers = budgets.spend(interaction.channelId);
    const message = state.newMessage(interaction.channelId, 'followup', interaction);
    commit(ctx, message, written, 'create', 'webhook');
    interaction.followUps.push(message);
    if (url.searchParams.get('wait') === 'true') return { status: 200, body: messageJson(state, message), headers };
    return { status: 204, headers };
  }
  const message = messageRef === '@original' ? interaction.original : interaction.followUps.find((m) => m.id === messageRef);
  if (!message || message.deleted) throw unknownMessage();
  return existingMessage(ctx, method, message, interaction.channelId, path, body, 'webhook');
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
