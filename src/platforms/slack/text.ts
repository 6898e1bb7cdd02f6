/**
 * Slack's text format both ways: what the bot posts is escaped (so model output reads as
 * written and can never form a `<!channel>` or `<@U…>` mention), and what users write
 * (`<@U…>`, `<#C…|name>`, `<url|label>`, `&lt;`) is turned into plain text for the model.
 * Every function here is linear in the length of its text (no backtracking expression).
 */
import { english, type Words } from '../../core/i18n/words.ts';
import { NextIndex, replaceSpacedTags } from '../../core/text-scan.ts';

/** The characters Slack's text formatting reserves, and what each is written as. */
const SLACK_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;' } as const;
const SLACK_SPECIAL = /[&<>]/;
const SLACK_SPECIALS = /[&<>]/g;

/**
 * Escapes the three characters Slack's `text` reserves (`&`, `<`, `>`), which also stops
 * model output from forming `<!channel>` or `<@U…>` mentions.
 */
export function escapeSlackText(text: string): string {
  // One pass, and none for text with nothing to escape: three chained replaces took twice as long
  // or more on a megabyte of nothing but `&<>` (0.50-0.79 s against 0.25-0.27 s on a slow day).
  return SLACK_SPECIAL.test(text) ? text.replace(SLACK_SPECIALS, (c) => SLACK_ESCAPES[c as '&' | '<' | '>']) : text;
}

const MARKDOWN_SPECIAL = /[&<]/;
const MARKDOWN_SPECIALS = /[&<]/g;

/**
 * Escapes what Slack's Markdown (a `markdown` block) must not read as its own: `&` and `<`, so
 * that model output can never form a `<!channel>`, `<@U…>` or `<!subteam^…>` mention or an
 * entity (every Slack token opens with `<`). `>` stays, for it marks a quote in Markdown and
 * closes nothing without a `<`.
 */
export function escapeSlackMarkdown(text: string): string {
  return MARKDOWN_SPECIAL.test(text) ? text.replace(MARKDOWN_SPECIALS, (c) => SLACK_ESCAPES[c as '&' | '<']) : text;
}

const SLACK_ENTITIES = /&(?:lt|gt|amp);/g;
const SLACK_UNESCAPES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/**
 * Undoes the escaping Slack applies to `&`, `<` and `>` in user text: one pass (the entity is
 * read once, so `&amp;lt;` stays `&lt;`), and none for text without `&`.
 */
export function unescapeSlackText(text: string): string {
  return text.includes('&') ? text.replace(SLACK_ENTITIES, (entity) => SLACK_UNESCAPES[entity]!) : text;
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
 * Replaces each `<…>` tag of `text` that `convert` accepts (it is given what is between `<` and
 * `>`, and the index there of the first `|`, or -1) by what it returns, left to right: the same
 * as `text.replace(/<…>/g, …)` for a pattern that holds no `>` but the last, whose matches can
 * therefore only end at the first `>` after their `<`. Linear in the length of `text` when
 * `convert` reads no further than the first `|` of a tag it rejects.
 */
function replaceTags(text: string, convert: (inside: string, pipe: number) => string | undefined): string {
  const closes = new NextIndex(text, '>');
  const pipes = new NextIndex(text, '|');
  const parts: string[] = [];
  let kept = 0;
  for (let open = text.indexOf('<'); open >= 0; ) {
    const close = closes.at(open + 1);
    if (close < 0) break; // no `>` after this `<`: no tag after it either
    const pipe = pipes.at(open + 1);
    const replaced = convert(text.slice(open + 1, close), pipe >= 0 && pipe < close ? pipe - open - 1 : -1);
    if (replaced === undefined) {
      open = text.indexOf('<', open + 1);
      continue;
    }
    parts.push(text.slice(kept, open), replaced);
    kept = close + 1;
    open = text.indexOf('<', kept);
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(kept));
  return parts.join('');
}

/**
 * Removes each mention of `userId` (`<@U…>` or `<@U…|name>`) with the whitespace around it,
 * leaving one space: what replacing every match of `\s*<@U…(?:\|[^>]*)?>\s*` by ' ' does (the id
 * taken literally), in one linear pass.
 */
function withoutMentionOf(text: string, userId: string): string {
  const tag = `<@${userId}`;
  const closes = new NextIndex(text, '>');
  return replaceSpacedTags(text, tag, (at) => {
    const next = text.charCodeAt(at + tag.length);
    if (next === 0x3e /* > */) return at + tag.length + 1;
    if (next !== 0x7c /* | */) return -1;
    const close = closes.at(at + tag.length + 1);
    return close < 0 ? -1 : close + 1;
  });
}

/** `@U123ABC`: a user id of a mention (U or W, then capitals and digits). */
const USER_ID = /^[UW][A-Z0-9]+$/;
/** A channel id of a channel link (C, G or D, then capitals and digits). */
const CHANNEL_ID = /^[CGD][A-Z0-9]+$/;
/** A user group id. */
const GROUP_ID = /^[A-Z0-9]+$/;

/** `inside` split at its first `|` (`pipe`, or -1): the id part, and the label (undefined without a `|`). */
function idAndLabel(inside: string, from: number, pipe: number): { id: string; label: string | undefined } {
  return pipe < 0
    ? { id: inside.slice(from), label: undefined }
    : { id: inside.slice(from, pipe), label: inside.slice(pipe + 1) };
}

/**
 * A user's message as plain text (Slack "formatting" reference): the bot's own mention
 * removed; `<@U…|name>` → `@name` (`@U…` when Slack gave no name); `<#C…|general>` →
 * `#general`; `<!here>` → `@here`; `<https://x|label>` → `label (https://x)`; entities unescaped.
 * Linear in the length of `text` (each pass reads a tag once, whatever the text holds).
 * @param botUserId the bot's user id (`U…`), whose mentions are dropped.
 */
export function plainTextOf(text: string, botUserId: string | undefined): string {
  let out = text;
  if (botUserId) out = withoutMentionOf(out, botUserId);
  // One pass per kind of tag, in this order (a label may hold what a later pass converts).
  out = replaceTags(out, (inside, pipe) => {
    if (inside.charCodeAt(0) !== 0x40 /* @ */) return undefined;
    const { id, label } = idAndLabel(inside, 1, pipe);
    return USER_ID.test(id) && label !== '' ? `@${label ?? id}` : undefined;
  });
  out = replaceTags(out, (inside, pipe) => {
    if (inside.charCodeAt(0) !== 0x23 /* # */) return undefined;
    const { id, label } = idAndLabel(inside, 1, pipe);
    return CHANNEL_ID.test(id) ? `#${label || id}` : undefined;
  });
  out = replaceTags(out, (inside, pipe) => {
    if (!inside.startsWith('!subteam^')) return undefined;
    const { id, label } = idAndLabel(inside, 9, pipe);
    return GROUP_ID.test(id) ? `@${label ?? 'group'}` : undefined;
  });
  out = replaceTags(out, (inside, pipe) => {
    if (inside.charCodeAt(0) !== 0x21 /* ! */) return undefined;
    const { id } = idAndLabel(inside, 1, pipe);
    return id === 'here' || id === 'channel' || id === 'everyone' ? `@${id}` : undefined;
  });
  out = replaceTags(out, (inside, pipe) => {
    const scheme = linkSchemeOf(inside);
    // `<https://x|label>`: an address up to the first `|` (not empty), then a label (not empty).
    if (!scheme || pipe <= scheme.length || pipe === inside.length - 1) return undefined;
    const rest = inside.slice(scheme.length, pipe);
    return `${inside.slice(pipe + 1)} (${scheme === 'mailto:' ? rest : scheme + rest})`;
  });
  out = replaceTags(out, (inside) => {
    const scheme = linkSchemeOf(inside);
    if (!scheme || inside.length <= scheme.length) return undefined;
    return scheme === 'mailto:' ? inside.slice(scheme.length) : inside;
  });
  return unescapeSlackText(out).trim();
}

/** The scheme a Slack link starts with (`https://`, `http://` or `mailto:`), or undefined. */
function linkSchemeOf(inside: string): string | undefined {
  if (inside.startsWith('https://')) return 'https://';
  if (inside.startsWith('http://')) return 'http://';
  if (inside.startsWith('mailto:')) return 'mailto:';
  return undefined;
}

/** The message that shows a slash command's question to the channel, in its `words`: `*alice* asked:` and the text quoted. */
export function questionText(asker: string, question: string, words: Words = english): string {
  const quoted = escapeSlackText(question.trim())
    .split('\n')
    .map((line) => `>${line ? ` ${line}` : ''}`)
    .join('\n');
  const head = `${words.t('slack.reply.asked', { asker: escapeSlackText(asker) })}\n`;
  return `${head}${quoted}`.slice(0, 3_900);
}
