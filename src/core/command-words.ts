/**
 * Where a command's, an option's, a choice's and a message action's words are in the catalog
 * (`commands.json`: `command.<name>`, `option.<name>` for options several commands share,
 * `action.<id>`, docs/i18n.md "Commands"), and reading them in a locale. The English catalog is
 * the one source of the definitions' English (Slack's manifest, Discord's default name and
 * description); Discord's `name_localizations` and `description_localizations`, and /help in the
 * user's language, read the other locales with the same keys.
 */
import type { MessageKey } from './i18n/catalogs.ts';
import { english, type MessageValues, type Words } from './i18n/words.ts';

/**
 * A catalog path whose `.name` and `.description` are both messages, e.g.
 * `commands.command.chat` or `commands.command.chat.options.prompt`: the words of a command,
 * an option or a message action (type-checked against the English catalog).
 */
export type TextKey = {
  [K in MessageKey]: K extends `${infer P}.description` ? (`${P}.name` extends MessageKey ? P : never) : never;
}[MessageKey];

/** A thing whose words are in the catalog: its {@link TextKey} and the values its description takes. */
export interface Texted {
  /** Where its words are: `${text}.name`, `${text}.description`. */
  text?: TextKey | undefined;
  /** Values of the description's placeholders (e.g. `/imagine seed`'s `{max}`), the same in every locale. */
  textValues?: MessageValues | undefined;
}

/**
 * The English words of a command or option, for its definition: `{ text, description }` (and the
 * description's values), spread into the definition: `{ name: 'prompt', ...texts('commands.command.chat.options.prompt'), … }`.
 */
export function texts(
  text: TextKey,
  values?: MessageValues,
): { text: TextKey; description: string; textValues?: MessageValues } {
  return {
    text,
    description: english.t(`${text}.description` as MessageKey, values),
    ...(values ? { textValues: values } : {}),
  };
}

/**
 * The English words of a message action, whose name is words too (a menu's label, spaces and
 * capitals allowed): `{ name, description, text }`.
 */
export function actionTexts(text: TextKey): { name: string; description: string; text: TextKey } {
  return {
    name: english.t(`${text}.name` as MessageKey),
    description: english.t(`${text}.description` as MessageKey),
    text,
  };
}

/** A choice whose name is the catalog's message `text` (English in the definition), e.g. `choice('off', '…choices.off')`. */
export function choice<V extends string | number>(
  value: V,
  text: MessageKey,
): { name: string; value: V; text: MessageKey } {
  return { name: english.t(text), value, text };
}

/** A thing's name in `words`' locale; its definition's `name` when it has no words in the catalog. */
export function nameIn(thing: Texted & { name: string }, words: Words): string {
  return thing.text ? words.t(`${thing.text}.name` as MessageKey) : thing.name;
}

/** A thing's description in `words`' locale; its definition's (English) when it has no words in the catalog. */
export function descriptionIn(thing: Texted & { description: string }, words: Words): string {
  return thing.text ? words.t(`${thing.text}.description` as MessageKey, thing.textValues) : thing.description;
}

/** A choice's name in `words`' locale; its definition's when it has no words in the catalog (a setting's name, a value). */
export function choiceNameIn(c: { name: string; text?: MessageKey | undefined }, words: Words): string {
  return c.text ? words.t(c.text) : c.name;
}
