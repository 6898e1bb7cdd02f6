/**
 * Message commands and modals, as Discord does them:
 *
 * - A user picks one of the app's message commands (type 3, MESSAGE: Apps → <name> in a
 *   message's menu): INTERACTION_CREATE type 2 with `data: { id, name, type: 3, target_id,
 *   resolved: { messages: { <id>: message } } }` (interactions/application-commands.mdx,
 *   "Message Commands"). The target message carries its content whatever the app's intents
 *   ("Message Content Intent": content "of the message a message context menu command is used
 *   on" is an exception).
 * - The app answers a command or a button press with a modal (callback type 9, MODAL; not for a
 *   modal submit or an autocomplete): `custom_id` 1–100 characters, `title` at most 45, 1–5
 *   components, each a Label (type 18: `label` at most 45, `description` at most 100) holding a
 *   Text Input (type 4: `custom_id` 1–100, `style` 1 or 2, `min_length` 0–4,000, `max_length`
 *   1–4,000, `value` at most 4,000, `placeholder` at most 100, `required` default true, no `label`
 *   of its own), or an Action Row (type 1, deprecated in modals) holding one Text Input with its
 *   own `label` (components/reference.mdx, "Label", "Text Input", "Action Row"). Refusals are
 *   form errors (50035) naming the field.
 * - The user submits it: INTERACTION_CREATE type 5 (MODAL_SUBMIT) with `data: { custom_id,
 *   components }`, each component as sent back (a Label `{ type: 18, id, component: { type: 4,
 *   id, custom_id, value } }`, a row `{ type: 1, id, components: [...] }`). Discord's client
 *   refuses to submit a required input left empty or a value outside its lengths: so does
 *   {@link submitModal}. A modal submit is answered with 4 or 5 (6 and 7 only for a modal shown
 *   for a button press).
 */
import type { Ctx } from './context.ts';
import { addError, type ErrorTree, formError, hasErrors } from './errors.ts';
import { envelope, launch } from './interaction-payload.ts';
import { FakeInteraction, type FakeMessage } from './model.ts';
import type { FakeCommand, InvokingUser, Json } from './types.ts';
import { checkUserInstallable, installerOf } from './user-install.ts';
import { codePoints, isObject } from './util.ts';
import { messageJson } from './wire.ts';

/** A user picks a message command on a message ({@link dispatchMessageCommand}). */
export interface MessageCommandOptions {
  /** The message command's name, e.g. `Summarize`. */
  command: string;
  /** The message it is used on (in a guild channel or thread). */
  messageId: string;
  user?: InvokingUser;
  admin?: boolean;
  permissions?: string;
}

/** A user submits the modal an interaction was answered with ({@link submitModal}). */
export interface SubmitModalOptions {
  /** The interaction whose callback (type 9) showed the modal. */
  interactionId: string;
  /** What the user typed, by the text inputs' `custom_id` (an input not named is left empty). */
  values: Record<string, string>;
}

/** The registered message command of that name (guild commands first), if any. */
function registeredMessageCommand(ctx: Ctx, guildId: string, name: string): Json | undefined {
  return [...ctx.state.guildCommands(guildId), ...ctx.state.commands].find((c) => c.name === name && c.type === 3);
}

/**
 * Dispatches a message command (see {@link FakeDiscord.dispatchMessageCommand}).
 * @throws Error for what Discord's client would never send: an unknown, deleted, ephemeral or
 *   still loading message, a message in a DM (interactions in DMs are not modelled), a name
 *   registered as another type of command only.
 */
export function dispatchMessageCommand(ctx: Ctx, options: MessageCommandOptions): FakeInteraction {
  const { state } = ctx;
  const message = state.messages.get(options.messageId);
  if (!message || message.deleted) throw new Error(`FakeDiscord: no message ${options.messageId}`);
  if (message.ephemeral) throw new Error(`FakeDiscord: message ${message.id} is ephemeral (it has no app commands)`);
  if (message.loading) throw new Error(`FakeDiscord: message ${message.id} is still loading`);
  const env = envelope(ctx, { ...options, channelId: message.channelId });
  const registered = registeredMessageCommand(ctx, env.guildId, options.command);
  checkUserInstallable(state, env.channel, options.command, registered as FakeCommand | undefined);
  const known = [...state.guildCommands(env.guildId), ...state.commands].some((c) => c.name === options.command);
  if (!registered && known) throw new Error(`FakeDiscord: ${options.command} is not a message command`);
  const payload: Json = {
    ...env.payload,
    type: 2,
    data: {
      id: registered?.id ?? state.commandIdFor(options.command),
      name: options.command,
      type: 3,
      target_id: message.id,
      // The target with its content, whatever the app's intents.
      resolved: { messages: { [message.id]: messageJson(state, message) } },
      ...(registered?.guild_id ? { guild_id: registered.guild_id } : {}),
    },
  };
  const interaction = new FakeInteraction(
    env.id,
    env.token,
    options.command,
    env.guildId,
    env.channel.id,
    env.user,
    payload,
    env.now,
    env.now + state.options.tokenTtlMs,
  );
  interaction.targetMessage = message;
  return launch(ctx, interaction);
}

/** The text inputs of a modal as sent (inside Labels or Action Rows). */
function textInputs(modal: Json): Json[] {
  const inputs: Json[] = [];
  for (const c of Array.isArray(modal.components) ? modal.components : []) {
    if (!isObject(c)) continue;
    if (c.type === 18 && isObject(c.component)) inputs.push(c.component);
    if (c.type === 1 && Array.isArray(c.components)) inputs.push(...c.components.filter(isObject));
  }
  return inputs.filter((i) => i.type === 4);
}

/** Checks a string field's length in code points; `min` 0 allows absence. */
function checkText(
  value: unknown,
  path: Array<string | number>,
  errors: ErrorTree,
  min: number,
  max: number,
  required: boolean,
): void {
  if (value === undefined && !required) return;
  if (typeof value !== 'string') {
    addError(errors, path, 'BASE_TYPE_REQUIRED', 'This field is required');
    return;
  }
  const n = codePoints(value);
  if (n < min || n > max)
    addError(errors, path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);
}

/** Checks one Text Input (type 4). */
function checkTextInput(input: Json, path: Array<string | number>, errors: ErrorTree, inLabel: boolean): void {
  if (input.type !== 4) {
    addError(errors, [...path, 'type'], 'COMPONENT_TYPE_INVALID', 'Component type is invalid here');
    return;
  }
  checkText(input.custom_id, [...path, 'custom_id'], errors, 1, 100, true);
  if (input.style !== 1 && input.style !== 2)
    addError(errors, [...path, 'style'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
  if (inLabel && input.label !== undefined)
    addError(errors, [...path, 'label'], 'COMPONENT_FIELD_INVALID', 'A text input in a label has no label of its own');
  if (!inLabel) checkText(input.label, [...path, 'label'], errors, 1, 45, true);
  for (const [key, min] of [
    ['min_length', 0],
    ['max_length', 1],
  ] as const) {
    const v = input[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 4000))
      addError(errors, [...path, key], 'NUMBER_TYPE_MAX', `Must be between ${min} and 4000.`);
  }
  if (
    typeof input.min_length === 'number' &&
    typeof input.max_length === 'number' &&
    input.min_length > input.max_length
  )
    addError(errors, [...path, 'min_length'], 'NUMBER_TYPE_MAX', 'min_length must be less than or equal to max_length');
  checkText(input.value, [...path, 'value'], errors, 0, 4000, false);
  checkText(input.placeholder, [...path, 'placeholder'], errors, 0, 100, false);
  if (input.required !== undefined && typeof input.required !== 'boolean')
    addError(errors, [...path, 'required'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
}

/**
 * Validates a modal (callback type 9's `data`) as Discord does (see the file's comment).
 * @throws HttpError 400 (50035) naming every offending field.
 */
export function checkModal(data: Json): void {
  const errors: ErrorTree = {};
  checkText(data.custom_id, ['data', 'custom_id'], errors, 1, 100, true);
  checkText(data.title, ['data', 'title'], errors, 1, 45, true);
  const components = data.components;
  if (!Array.isArray(components) || components.length < 1 || components.length > 5) {
    addError(errors, ['data', 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.');
  } else {
    components.forEach((c, i) => {
      const at = ['data', 'components', i];
      if (isObject(c) && c.type === 18) {
        checkText(c.label, [...at, 'label'], errors, 1, 45, true);
        checkText(c.description, [...at, 'description'], errors, 0, 100, false);
        if (isObject(c.component)) checkTextInput(c.component, [...at, 'component'], errors, true);
        else addError(errors, [...at, 'component'], 'BASE_TYPE_REQUIRED', 'This field is required');
      } else if (isObject(c) && c.type === 1) {
        const row = Array.isArray(c.components) ? c.components : [];
        if (row.length !== 1 || !isObject(row[0]))
          addError(errors, [...at, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 1 in length.');
        else checkTextInput(row[0], [...at, 'components', 0], errors, false);
      } else {
        addError(errors, [...at, 'type'], 'COMPONENT_TYPE_INVALID', 'Component type is invalid here');
      }
    });
    const ids = textInputs(data).map((i) => i.custom_id);
    if (new Set(ids).size !== ids.length)
      addError(
        errors,
        ['data', 'components'],
        'COMPONENT_CUSTOM_ID_DUPLICATED',
        'Component custom id cannot be duplicated',
      );
  }
  if (hasErrors(errors)) throw formError(errors);
}

/** A text input's value as the client takes it. @throws Error when the client would not submit it. */
function submittedValue(input: Json, given: string | undefined): string {
  const value = given ?? '';
  const id = String(input.custom_id);
  if (input.required !== false && value === '') throw new Error(`FakeDiscord: input ${id} is required`);
  const n = codePoints(value);
  if (value !== '' && typeof input.min_length === 'number' && n < input.min_length)
    throw new Error(`FakeDiscord: input ${id} takes at least ${input.min_length} characters`);
  if (n > (typeof input.max_length === 'number' ? input.max_length : 4000))
    throw new Error(`FakeDiscord: input ${id} takes at most ${String(input.max_length ?? 4000)} characters`);
  return value;
}

/** The submitted components, in the modal's order, as Discord sends them back. */
function submittedComponents(modal: Json, values: Record<string, string>): Json[] {
  let id = 0;
  const inputOf = (input: Json) => ({
    type: 4,
    id: ++id,
    custom_id: input.custom_id,
    value: submittedValue(input, values[String(input.custom_id)]),
  });
  return (modal.components as Json[]).map((c) => {
    const own = ++id;
    if (c.type === 18) return { type: 18, id: own, component: inputOf(c.component as Json) };
    return { type: 1, id: own, components: (c.components as Json[]).map(inputOf) };
  });
}

/**
 * Submits the modal an interaction showed (see {@link FakeDiscord.submitModal}).
 * @throws Error when no modal was shown for that interaction, it was submitted already, a value
 *   names no input of it, or the client would refuse the values (a required input empty, a value
 *   outside its lengths).
 */
export function submitModal(ctx: Ctx, options: SubmitModalOptions): FakeInteraction {
  const { state } = ctx;
  const shown = state.interactions.get(options.interactionId);
  const modal = shown?.modal;
  if (!shown || !modal) throw new Error(`FakeDiscord: interaction ${options.interactionId} showed no modal`);
  if (shown.modalSubmitted) throw new Error(`FakeDiscord: the modal of ${shown.id} was submitted already`);
  const known = new Set(textInputs(modal).map((i) => String(i.custom_id)));
  for (const name of Object.keys(options.values))
    if (!known.has(name)) throw new Error(`FakeDiscord: the modal has no input ${name}`);
  const components = submittedComponents(modal, options.values);
  const member = shown.payload.member as Json | undefined;
  const env = envelope(ctx, {
    installer: installerOf(shown),
    channelId: shown.channelId,
    user: { id: shown.user.id, username: shown.user.username, globalName: shown.user.global_name ?? undefined },
    permissions: member?.permissions as string | undefined,
  });
  const from: FakeMessage | undefined = shown.componentMessage;
  const payload: Json = {
    ...env.payload,
    type: 5,
    data: { custom_id: modal.custom_id, components },
    ...(from ? { message: messageJson(state, from) } : {}),
  };
  shown.modalSubmitted = true;
  const interaction = new FakeInteraction(
    env.id,
    env.token,
    shown.commandName,
    env.guildId,
    env.channel.id,
    env.user,
    payload,
    env.now,
    env.now + state.options.tokenTtlMs,
  );
  interaction.type = 5;
  interaction.customId = String(modal.custom_id);
  interaction.componentMessage = from;
  interaction.modalOf = shown;
  return launch(ctx, interaction);
}
