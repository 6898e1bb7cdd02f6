/**
 * `/forget me` (Slack `/forget me`; Discord `/forget scope:me`): erases what the asker left in
 * this server or workspace (keys.ts `workspaceOf`; every DM with the bot on Discord): their turns
 * in every conversation and the bot's answers to them, their votes, the /imagine button states
 * they asked for; and says how many. Anyone may, anywhere: it touches nobody else's words.
 *
 * The conversations and records are found in the user's index (state/user-index.ts), one read,
 * not a listing of the store. In each conversation where turns were erased, the Regenerate states
 * of its answers go as /forget's do (answer-index.ts `forgetAnswerStates`): they keep the
 * requests sent, the erased turns among them. Usage and quota counters, and the votes' counts in
 * the feedback tallies, stay until they reset (or a user could lift their own cap).
 */

import type { Core } from '../core.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { storeKeys, workspaceOf } from '../keys.ts';
import type { CommandContext } from '../platform.ts';
import type { StoredMessage } from '../state/history.ts';
import { forgetAnswerStates } from './answer-index.ts';

/** What `/forget me` erased, counted. */
export interface ForgetMeCounts {
  /** The user's turns. */
  turns: number;
  /** The bot's answers to them. */
  answers: number;
  /** Conversations they were in. */
  conversations: number;
  /** Votes and button states. */
  records: number;
}

/**
 * `messages` without `user`'s turns and the bot's answers to them (the assistant turns right
 * after one of theirs, until another user's turn).
 */
export function withoutUser(messages: StoredMessage[], user: string): StoredMessage[] {
  let theirs = false;
  const kept = messages.filter((m) => {
    if (m.role === 'user') theirs = m.userId === user;
    else if (m.role !== 'assistant') theirs = false;
    return !theirs;
  });
  return kept.length === messages.length ? messages : kept;
}

/**
 * Erases `user`'s turns, answers, votes and button states in `workspace` (`slack:<team>`,
 * `discord:<guild | dm>`), then their index.
 * @returns what was erased, counted.
 * @throws the store's error (what was erased stays erased; asking again finishes the work).
 */
export async function eraseUser(core: Core, workspace: string, user: string): Promise<ForgetMeCounts> {
  const counts: ForgetMeCounts = { turns: 0, answers: 0, conversations: 0, records: 0 };
  const { conversations, records } = await core.userIndex.read(workspace, user);
  for (const conversationId of conversations) {
    let turns = 0;
    const { before, after } = await core.history.edit(conversationId, (messages) => {
      const kept = withoutUser(messages, user);
      turns = messages.filter((m) => m.role === 'user' && m.userId === user).length;
      return kept;
    });
    if (after === before) continue;
    counts.turns += turns;
    counts.answers += before - after - turns;
    counts.conversations += 1;
    core.pendingTurns.forget(conversationId);
    await forgetAnswerStates(core, conversationId);
  }
  const doomed = records.flatMap((key) => [key, storeKeys.owned(workspace, key)]);
  await core.store.deleteKeys(doomed);
  counts.records = records.length;
  await core.userIndex.drop(workspace, user);
  return counts;
}

/** The sentence saying what `/forget me` erased (the server's or the workspace's, by `platform`). */
export function forgetMeDone(counts: ForgetMeCounts, platform: 'discord' | 'slack'): Sentence {
  if (!counts.turns && !counts.records) return sentence('commands.forget.me_nothing', { platform });
  return sentence('commands.forget.me_done', {
    turns: counts.turns,
    answers: counts.answers,
    conversations: counts.conversations,
    records: counts.records,
    platform,
  });
}

/**
 * `/forget me`: erases the asker's data in this server or workspace ({@link eraseUser}) and tells
 * them alone what was erased, in their words.
 * @throws the store's error (the command's failure sentence).
 */
export async function forgetMe(ctx: CommandContext, core: Core): Promise<void> {
  const workspace = workspaceOf(ctx.channelKey);
  if (!workspace) throw new Error(`no workspace for ${ctx.channelKey}`);
  const counts = await eraseUser(core, workspace, ctx.user.id);
  ctx.log.info({ ...counts }, 'user data forgotten (/forget me)');
  const words = await core.languages.forUser(ctx);
  await ctx.reply.sendEphemeral(words.say(forgetMeDone(counts, ctx.platform)));
}
