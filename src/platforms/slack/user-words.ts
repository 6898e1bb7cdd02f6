/**
 * The words of what only one Slack user sees (an ephemeral message, a form, their App Home):
 * their Slack language (`users.info` with `include_locale`, kept by users.ts `SlackDirectory`,
 * a lookup bounded at 1 s), else DEFAULT_LOCALE (i18n/languages.ts `forUser`).
 */
import type { WebClient } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import type { Words } from '../../core/i18n/words.ts';
import type { SlackDirectory } from './users.ts';

/** What {@link userWords} reads. */
export interface UserWordsDeps {
  core: Pick<Core, 'languages'>;
  directory: SlackDirectory;
}

/**
 * `user`'s words on workspace `team` (team id). Never rejects: DEFAULT_LOCALE's when Slack says
 * nothing of the user.
 */
export function userWords(client: WebClient, deps: UserWordsDeps, team: string, user: string): Promise<Words> {
  return deps.core.languages.forUser({ locale: { user: deps.directory.locale(client, team, user) } });
}
