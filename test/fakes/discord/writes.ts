/**
 * Creating and editing messages, shared by every route that writes (interaction callbacks,
 * interaction webhooks, channel messages): validation of the body and files against
 * Discord's limits, then the new revision, the write record and the `write` event, and
 * MESSAGE_CREATE for a new message that is not ephemeral (Discord echoes the bot's own
 * messages to it), MESSAGE_UPDATE for an edit of one (so discord.js's cache follows edits). A reply pings the replied author when `allowed_mentions` is absent, or
 * when it says `replied_user: true`.
 */
import sharp from 'sharp';
import { contentTypeFor, storedAttachment } from './attachments.ts';
import { checkComponentsV2, componentsText, resolveMedia } from './components-v2.ts';
import { MAX_CONTENT, MAX_FILES } from './constants.ts';
import type { Ctx } from './context.ts';
import { addError, discordError, type ErrorTree, formError, hasErrors } from './errors.ts';
import type { Body, Reply } from './http.ts';
import { type FakeAttachment, type FakeMessage, isV2, MessageFlag, type Pings } from './model.ts';
import type { FakeWrite, Json } from './types.ts';
import { codePoints, isObject, snowflake } from './util.ts';
import { checkAllowedMentions, checkComponents, checkEmbeds, resolvePings } from './validation.ts';
import { gatewayMessageJson, restMessageJson } from './wire.ts';

/** What a validated create or edit sets on a message. */
export interface WriteState {
  content: string;
  embeds: Json[];
  attachments: FakeAttachment[];
  /** Action rows of buttons (kept from the message when the body names none). */
  components: Json[];
  flags: number;
  allowedMentions: unknown;
}

/**
 * Validates a create/edit body and the files; returns the state to apply.
 * @throws HttpError 400 (50035 form errors, 50006 empty message), 413 (40005 file too large).
 */
export async function prepareWrite(
  ctx: Ctx,
  body: Body,
  message: FakeMessage | undefined,
  options: { allowEphemeral: boolean; channelId: string },
): Promise<WriteState> {
  const json = body.json === undefined ? {} : body.json;
  if (!isObject(json))
    throw formError({
      _errors: [{ code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' }],
    });
  const errors: ErrorTree = {};
  let content = message?.content ?? '';
  if (json.content !== undefined && json.content !== null) {
    if (typeof json.content !== 'string') addError(errors, ['content'], 'BASE_TYPE_STRING', 'Must be a string.');
    else {
      if (codePoints(json.content) > MAX_CONTENT)
        addError(errors, ['content'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT} or fewer in length.`);
      content = json.content;
    }
  } else if (json.content === null) content = '';
  const embeds = json.embeds === undefined ? (message?.embeds ?? []) : checkEmbeds(json.embeds, errors);
  checkAllowedMentions(json.allowed_mentions, errors);

  let flags = message?.flags ?? 0;
  if (json.flags !== undefined && json.flags !== null) {
    const f = json.flags;
    const allowed =
      MessageFlag.SuppressEmbeds |
      MessageFlag.SuppressNotifications |
      MessageFlag.IsComponentsV2 |
      (options.allowEphemeral ? MessageFlag.Ephemeral : 0);
    if (typeof f !== 'number' || !Number.isInteger(f) || (f & ~allowed) !== 0) {
      addError(errors, ['flags'], 'MESSAGE_FLAGS_INVALID', 'Invalid flags for this message');
    } else if (message) {
      // An edit sets or unsets SUPPRESS_EMBEDS, and may set IS_COMPONENTS_V2, never unset it (message.mdx, Edit Message).
      const editable = MessageFlag.SuppressEmbeds | MessageFlag.IsComponentsV2;
      flags = (message.flags & ~MessageFlag.SuppressEmbeds) | (f & editable);
    } else flags = f;
  }
  const v2 = (flags & MessageFlag.IsComponentsV2) !== 0;
  if (v2) refuseLegacyFields(content, embeds, errors);

  // Attachments: kept existing ones (by id) and new uploads (files[N] bound to attachment id N).
  if (body.files.length > MAX_FILES)
    addError(errors, ['files'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`);
  const listed = json.attachments;
  if (listed !== undefined && !Array.isArray(listed))
    addError(errors, ['attachments'], 'BASE_TYPE_LIST', 'Must be a list.');
  const entries = Array.isArray(listed) ? listed.filter(isObject) : [];
  const existing = message?.attachments ?? [];
  const kept = Array.isArray(listed) ? existing.filter((a) => entries.some((e) => String(e.id) === a.id)) : existing;
  const uploadName = (file: Body['files'][number]) => {
    const entry = entries.find((e) => String(e.id) === file.index);
    return typeof entry?.filename === 'string' ? entry.filename : file.filename;
  };
  const names = [...kept.map((a) => a.filename), ...body.files.map(uploadName)];
  let components = message?.components ?? [];
  if (json.components !== undefined) {
    if (!v2) components = checkComponents(json.components, errors);
    else if (json.components === null) components = [];
    else if (!Array.isArray(json.components)) addError(errors, ['components'], 'BASE_TYPE_LIST', 'Must be a list.');
    else components = checkComponentsV2(json.components, errors, names);
  }
  for (const e of entries) {
    const id = String(e.id);
    if (!existing.some((a) => a.id === id) && !body.files.some((f) => f.index === id)) {
      addError(
        errors,
        ['attachments', entries.indexOf(e), 'id'],
        'ATTACHMENT_NOT_FOUND',
        `Attachment "${id}" was not found in the request or the message.`,
      );
    }
  }
  if (kept.length + body.files.length > MAX_FILES)
    addError(errors, ['attachments'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`);
  if (hasErrors(errors)) throw formError(errors);
  for (const file of body.files) {
    if (file.data.length > ctx.state.options.maxFileBytes) throw discordError(413, 40005, 'Request entity too large');
  }
  const added: FakeAttachment[] = [];
  for (const file of body.files) {
    const entry = entries.find((e) => String(e.id) === file.index);
    const id = snowflake();
    const filename = uploadName(file);
    const contentType = contentTypeFor(file.filename, file.contentType);
    let width: number | undefined;
    let height: number | undefined;
    if (contentType?.startsWith('image/')) {
      try {
        const meta = await sharp(file.data).metadata();
        width = meta.width;
        height = meta.height;
      } catch {
        // Not decodable: Discord keeps it as a plain file.
      }
    }
    const description = typeof entry?.description === 'string' ? entry.description : undefined;
    added.push(
      storedAttachment(ctx.state, options.channelId, {
        id,
        filename,
        data: file.data,
        contentType,
        width,
        height,
        description,
      }),
    );
  }
  const attachments = [...kept, ...added];
  if (content.trim() === '' && embeds.length === 0 && attachments.length === 0 && components.length === 0)
    throw discordError(400, 50006, 'Cannot send an empty message');
  // Discord resolves a V2 message's `attachment://` media to the attachments they name, once they exist.
  if (v2 && Array.isArray(json.components)) components = resolveMedia(components, attachments);
  return { content, embeds, attachments, components, flags, allowedMentions: json.allowed_mentions };
}

/**
 * With the Components V2 flag a message has neither `content` nor `embeds`: a request that
 * gives them, or an edit setting the flag on a message that has them without resetting them
 * (`content: null`, `embeds: []`), is refused as Discord does (message.mdx, Create Message and
 * Edit Message): 50035 `MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2` at the field.
 * @param content the message's content after the request; @param embeds likewise.
 */
function refuseLegacyFields(content: string, embeds: Json[], errors: ErrorTree): void {
  const refuse = (field: string) =>
    addError(
      errors,
      [field],
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      `The '${field}' field cannot be used when using MessageFlags.IS_COMPONENTS_V2`,
    );
  if (content !== '') refuse('content');
  if (embeds.length > 0) refuse('embeds');
}

/** Applies a prepared write to a message, records the revision and the write. */
export function commit(
  ctx: Ctx,
  message: FakeMessage,
  state: WriteState,
  kind: 'create' | 'edit',
  via: FakeWrite['via'],
): void {
  const at = Date.now();
  message.content = state.content;
  message.embeds = state.embeds;
  message.attachments = state.attachments;
  message.components = state.components;
  message.flags = state.flags & ~MessageFlag.Loading;
  if (kind === 'edit') message.editedAt = at;
  // A Components V2 message pings from its Text Displays (components/reference.mdx, Text Display).
  const text = isV2(message) ? componentsText(state.components) : state.content;
  const pinged = withRepliedUser(ctx, message, resolvePings(text, state.allowedMentions), state.allowedMentions);
  const seq = ctx.state.nextSeq();
  const reference = message.reference ? { messageId: message.reference.messageId } : undefined;
  message.revisions.push({
    seq,
    at,
    via: kind,
    content: state.content,
    embeds: state.embeds,
    attachmentIds: state.attachments.map((a) => a.id),
    flags: message.flags,
    allowedMentions: state.allowedMentions,
    pinged,
    reference,
    components: state.components,
  });
  const write: FakeWrite = {
    seq,
    at,
    kind,
    via,
    channelId: message.channelId,
    messageId: message.id,
    interactionId: message.interaction?.id,
    allowedMentions: state.allowedMentions,
    content: state.content,
    pinged,
  };
  ctx.state.writes.push(write);
  ctx.state.events.emit('write', write);
  if (kind === 'create') announce(ctx, message);
  else if (!message.ephemeral) ctx.gateway.dispatch('MESSAGE_UPDATE', gatewayMessageJson(ctx.state, message));
}

/**
 * Adds the replied author to a reply's pings as Discord decides: pinged when the request had
 * no `allowed_mentions` at all, else only with `replied_user: true`; never the bot itself.
 */
function withRepliedUser(ctx: Ctx, message: FakeMessage, pings: Pings, allowedMentions: unknown): Pings {
  const replied = message.reference ? ctx.state.messages.get(message.reference.messageId) : undefined;
  if (!replied || replied.author.id === ctx.state.botUser.id || pings.users.includes(replied.author.id)) return pings;
  const ping =
    allowedMentions === undefined ||
    allowedMentions === null ||
    (isObject(allowedMentions) && allowedMentions.replied_user === true);
  return ping ? { ...pings, users: [...pings.users, replied.author.id] } : pings;
}

/** MESSAGE_CREATE for a new message, unless ephemeral (only its user sees those). */
export function announce(ctx: Ctx, message: FakeMessage): void {
  if (!message.ephemeral) ctx.gateway.dispatch('MESSAGE_CREATE', gatewayMessageJson(ctx.state, message));
}

/**
 * GET, DELETE or PATCH (an edit, within its rate-limit bucket) of a message that exists.
 * @param token the interaction token of a webhook route (its bucket in documented mode).
 */
export async function existingMessage(
  ctx: Ctx,
  method: string,
  message: FakeMessage,
  channelId: string,
  path: string,
  body: Body,
  via: 'webhook' | 'channel',
  token?: string,
): Promise<Reply> {
  if (method === 'GET') return { status: 200, body: restMessageJson(ctx.state, message) };
  if (method === 'DELETE') {
    message.deleted = true;
    return { status: 204 };
  }
  ctx.budgets.check(channelId, method, path, token);
  const written = await prepareWrite(ctx, body, message, { allowEphemeral: via === 'webhook', channelId });
  const headers = ctx.budgets.spend(channelId, token);
  commit(ctx, message, written, 'edit', via);
  return { status: 200, body: restMessageJson(ctx.state, message), headers };
}
