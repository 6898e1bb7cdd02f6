/**
 * What a Slack user reads when they ask for something while the bot is stopping (running.ts
 * `RESTARTING_KEY`), in their Slack language: only they see it (an ephemeral message, a form's
 * error, their App Home), so it follows their `users.info` locale (users.ts
 * `SlackDirectory.locale`), else DEFAULT_LOCALE.
 */
import type { WebClient } from '@slack/web-api';
import { resolveLocale } from '../../core/i18n/locales.ts';
import { wordsOf } from '../../core/i18n/words.ts';
import { RESTARTING_KEY } from '../../core/running.ts';
import { type UserWordsDeps, userWords } from './user-words.ts';

/**
 * The refusal in `user`'s language: the directory's while fresh, else one users.info call
 * bounded as every language lookup is (1 s). Never rejects: DEFAULT_LOCALE when Slack says nothing.
 * @param team the workspace (team id); @param user the user id.
 */
export async function refusalWhileStopping(
  client: WebClient,
  deps: UserWordsDeps,
  team: string,
  user: string,
): Promise<string> {
  return (await userWords(client, deps, team, user)).t(RESTARTING_KEY);
}

/**
 * The refusal in `user`'s language as the directory knows it now, no lookup started: for an ack
 * that must carry it within Slack's 3 s (a form's `response_action: errors`). DEFAULT_LOCALE when
 * the user is not known.
 */
export function knownRefusalWhileStopping(deps: UserWordsDeps, team: string, user: string): string {
  const locale = resolveLocale(deps.directory.knownLocale(team, user), deps.core.languages.defaultLocale);
  return wordsOf(locale).t(RESTARTING_KEY);
}
