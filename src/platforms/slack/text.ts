/**
 * Slack's text format both ways: what the bot posts is escaped (so model output reads as
 * written and can never form a `<!channel>` or `<@U…>` mention), and what users write
 * (`<@U…>`, `<#C…|name>`, `<url|label>`, `&lt;`) is turned into plain text for the model.
 */

/**
 * Escapes the three characters Slack's `text` reserves (`&`, `<`, `>`), which also stops
 * model output from forming `<!channel>` or `<@U…>` mentions.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Undoes the escaping Slack applies to `&`, `<` and `>` in user text. */
export function unescapeSlackText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Length of `text` after {@link escapeSlackText}, in UTF-16 code units. */
export function slackLength(text: string): number {
  let extra = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 38) extra += 4;
    else if (c === 60 || c === 62) extra += 3;
  }
  return text.length + extra;
}

/**
 * A user's message as plain text (Slack "formatting" reference): the bot's own mention
 * removed; `<@U…|name>` → `@name` (`@U…` when Slack gave no name); `<#C…|general>` →
 * `#general`; `<!here>` → `@here`; `<https://x|label>` → `label (https://x)`; entities unescaped.
 * @param botUserId the bot's user id (`U…`), whose mentions are dropped.
 */
export function plainTextOf(text: string, botUserId: string | undefined): string {
  let out = text;
  if (botUserId) out = out.replace(new RegExp(`\\s*<@${botUserId}(?:\\|[^>]*)?>\\s*`, 'g'), ' ');
  out = out
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]+))?>/g, (_, id: string, name: string | undefined) => `@${name ?? id}`)
    .replace(/<#([CGD][A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, name: string | undefined) => `#${name || id}`)
    .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_, name: string | undefined) => `@${name ?? 'group'}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<(mailto:|https?:\/\/)([^|>]+)\|([^>]+)>/g, (_, scheme: string, rest: string, label: string) => `${label} (${scheme === 'mailto:' ? rest : scheme + rest})`)
    .replace(/<((?:https?:\/\/|mailto:)[^>]+)>/g, (_, url: string) => url.replace(/^mailto:/, ''));
  return unescapeSlackText(out).trim();
}
