/**
 * Discord's user install: a user adds the app to their own account (OAuth2 `integration_type=1`,
 * scope `applications.commands`), and its commands and message actions answer them in any server,
 * group DM or DM, even where the bot is not a member ("Developing a User-Installable App";
 * docs/platform-limits.md, Discord, "Installations").
 *
 * Where the bot is not a member, only the interaction serves: its callback and its webhook token
 * (deferral, edits of `@original`, follow-ups, files, components, modals). Every bot-token call
 * there is refused (403, 50001 Missing Access), and no gateway event of the place reaches the bot.
 * So, for such an interaction (one the user install alone authorized):
 * - nothing is written or read with the bot token (channel-writes.ts refuses before any request);
 * - what needs membership is not attempted, and the answer says so in one line: a thread
 *   ({@link NO_THREAD_HERE}), and an answer that would outlive the interaction's 15 minutes
 *   (stopped a minute before, {@link ANSWER_TIME_UP}); a reply chain, a thread's messages and
 *   catch-up only come with messages the bot receives, which it does not here;
 * - at most {@link USER_INSTALL_FOLLOW_UPS} follow-ups are sent ({@link FollowUpAllowance}), and an
 *   answer shows at most {@link USER_INSTALL_ANSWER_CHARS} characters in messages, the whole of a
 *   longer one coming as `answer.md` (the answer's cap: what a reader can scroll through, and the
 *   whole text kept in a file rather than cut);
 * - its conversation is its user's own in that channel (keys.ts `discord:user:<user>:<channel>`):
 *   apart from the guild install's, and from every other user's install used there (the answers
 *   are public, but each user's history is what they asked).
 */

import { type BaseInteraction, InteractionContextType } from 'discord.js';
import { InputError } from '../../core/errors.ts';
import { english, type Sentence, sentence } from '../../core/i18n/words.ts';
import { type ConversationRef, channelKey, conversationKey } from '../../core/keys.ts';

/** Follow-up messages Discord allows one interaction that only a user install authorized (Create Followup Message). */
export const USER_INSTALL_FOLLOW_UPS = 5;

/**
 * Longest answer shown in messages where follow-ups are limited, in characters (about three of
 * Discord's 2,000-character pages): with the notes, `answer.md` and a long answer's notice, the
 * answer stays within {@link USER_INSTALL_FOLLOW_UPS}.
 */
export const USER_INSTALL_ANSWER_CHARS = 6_000;

/** How long before the interaction token's 15 minutes an answer there is ended, in ms: its last writes need the token. */
export const TOKEN_END_MARGIN_MS = 60_000;

/** Discord's interaction token lifetime, in ms (Receiving and Responding). */
const TOKEN_LIFETIME_MS = 15 * 60_000;

/** Under a `/chat thread:true` answered where the bot is not a member. */
export const NO_THREAD_HERE: Sentence = sentence('discord.user_install.no_thread_here');

/** Why an answer where the bot is not a member was ended before the interaction's 15 minutes. */
export const ANSWER_TIME_UP: Sentence = sentence('discord.user_install.answer_time_up');

/** Why a write that needs the bot's membership (its own token) was not attempted. */
export const NOT_A_MEMBER: Sentence = sentence('discord.user_install.not_a_member');

/** Why a follow-up past Discord's limit was not attempted. */
export const FOLLOW_UPS_USED: Sentence = sentence('discord.user_install.follow_ups_used', {
  count: USER_INSTALL_FOLLOW_UPS,
});

/** What the user-install checks read of an interaction. */
type Installed = Pick<BaseInteraction, 'authorizingIntegrationOwners' | 'context' | 'channelId' | 'guildId' | 'user'>;

/**
 * Whether only a user install authorized the interaction, so that the bot is not a member where
 * it runs: in a private channel (context 2: a group DM, a DM between users), or in a server whose
 * `authorizing_integration_owners` names the user install (`"1"`) and not the guild's (`"0"`).
 * False in the bot's own DM (context 1), and for an interaction without the fields (older payloads).
 */
export function isUserInstalledOnly(
  interaction: Pick<BaseInteraction, 'authorizingIntegrationOwners' | 'context'>,
): boolean {
  if (interaction.context === InteractionContextType.PrivateChannel) return true;
  if (interaction.context === InteractionContextType.BotDM) return false;
  return onlyUserInstall(interaction);
}

/** Whether `authorizing_integration_owners` names the user install and not the guild install: Discord then limits follow-ups. */
export function onlyUserInstall(interaction: Pick<BaseInteraction, 'authorizingIntegrationOwners'>): boolean {
  const owners = interaction.authorizingIntegrationOwners;
  return owners?.userId != null && owners.guildId == null;
}

/**
 * Where an interaction's conversation is: a user install's own ({@link ConversationRef} `user`: the
 * installing user, whom Discord names for a press of a button on that install's message too), or
 * the guild's channel (the DM's).
 */
export function conversationRefOf(interaction: Installed): ConversationRef {
  if (isUserInstalledOnly(interaction)) {
    const user = interaction.authorizingIntegrationOwners.userId ?? interaction.user.id;
    return { platform: 'discord', guild: undefined, user, channel: interaction.channelId ?? '' };
  }
  return { platform: 'discord', guild: interaction.guildId ?? undefined, channel: interaction.channelId ?? '' };
}

/**
 * The conversation and channel keys of a user-installed interaction (its channel key is its
 * conversation's: settings there are the defaults, no server's admin sets them); undefined for
 * any other, whose keys the caller makes as before.
 */
export function userInstallKeys(interaction: Installed): { conversationId: string; channelKey: string } | undefined {
  if (!isUserInstalledOnly(interaction)) return undefined;
  const ref = conversationRefOf(interaction);
  return { conversationId: conversationKey(ref), channelKey: channelKey(ref) };
}

/** A follow-up refused before any request: Discord's limit for an app that is not a member is spent ({@link FOLLOW_UPS_USED}). */
export class FollowUpLimitError extends InputError {
  constructor() {
    super(FOLLOW_UPS_USED);
  }
}

/**
 * The follow-ups one interaction may still send: unlimited for an interaction of a guild install,
 * {@link USER_INSTALL_FOLLOW_UPS} for one only a user install authorized ("Create Followup Message":
 * "Apps are limited to 5 followup messages per interaction if it was initiated from a user-installed
 * app and isn't installed in the server").
 */
export class FollowUpAllowance {
  private sent = 0;

  constructor(private readonly limited: boolean) {}

  /**
   * Sends one follow-up with `send` when one is left; counts it once Discord took it.
   * @throws FollowUpLimitError when none is left (nothing sent); what `send` throws.
   */
  async spend<T>(send: () => Promise<T>): Promise<T> {
    if (this.limited && this.sent >= USER_INSTALL_FOLLOW_UPS) throw new FollowUpLimitError();
    const sent = await send();
    this.sent += 1;
    return sent;
  }
}

/**
 * The reason an answer's signal is aborted with before the token ends: its `userMessage` is the
 * line shown (English until the core reads `sentence`, the same line not yet in words).
 */
class TokenEnding extends Error {
  readonly sentence = ANSWER_TIME_UP;
  readonly userMessage = english.say(ANSWER_TIME_UP);

  constructor() {
    super('the interaction token is about to expire');
    this.name = 'TokenEnding';
  }
}

/**
 * The signal of an invocation where the bot is not a member: `signal` (shutdown), and aborted
 * {@link TOKEN_END_MARGIN_MS} before the interaction's token expires, so that the answer's last
 * writes (with the line saying why) still go through it. `dispose` clears the timer.
 * @param createdAt when the interaction was created (its snowflake's time), ms since the epoch.
 */
export function beforeTokenEnds(signal: AbortSignal, createdAt: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const passOn = () => controller.abort(signal.reason);
  if (signal.aborted) passOn();
  else signal.addEventListener('abort', passOn, { once: true });
  const timer = setTimeout(
    () => controller.abort(new TokenEnding()),
    Math.max(0, createdAt + TOKEN_LIFETIME_MS - TOKEN_END_MARGIN_MS - Date.now()),
  );
  timer.unref();
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', passOn);
    },
  };
}
