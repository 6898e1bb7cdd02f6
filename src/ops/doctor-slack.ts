/**
 * The doctor's Slack checks (doctor.ts). With SLACK_BOT_TOKEN: Slack accepts the token
 * (auth.test), and it has every scope the manifest asks for (its `X-OAuth-Scopes`). In the
 * OAuth mode: the installations in the store (how many), and the first
 * {@link INSTALLATIONS_CHECKED} of them opened with SLACK_INSTALLATION_KEY and checked the same
 * way. Both: SLACK_APP_TOKEN, when set, opens a Socket Mode connection.
 */
import { WebClient } from '@slack/web-api';
import { pino } from 'pino';
import type { SlackConfig, SlackOAuthConfig } from '../config.ts';
import { openStore } from '../core/state/open-store.ts';
import { KeyRing, SealError } from '../core/state/sealed.ts';
import { SlackInstallationStore } from '../platforms/slack/installations.ts';
import { SLACK_BOT_SCOPES } from '../platforms/slack/manifest.ts';

/** Installations whose token the doctor checks at most (auth.test each). */
export const INSTALLATIONS_CHECKED = 3;

/** One finding: passed or not, in a sentence (doctor.ts's Finding). */
interface Finding {
  ok: boolean;
  text: string;
}

const pass = (text: string): Finding => ({ ok: true, text });
const fail = (text: string): Finding => ({ ok: false, text });

/**
 * Every Slack finding.
 * @param reasonOf a thrown value in a few words (doctor.ts's).
 */
export async function slackFindings(
  slack: SlackConfig,
  storeUrl: string,
  reasonOf: (error: unknown) => string,
): Promise<Finding[]> {
  const client = (token: string | undefined) =>
    new WebClient(token, {
      ...(slack.apiUrl ? { slackApiUrl: slack.apiUrl } : {}),
      retryConfig: { retries: 0 },
      timeout: 10_000,
    });
  const findings =
    slack.auth.mode === 'token'
      ? await botTokenFindings(client(slack.auth.botToken), 'SLACK_BOT_TOKEN', 'The Slack token', reasonOf)
      : await installationFindings(slack.auth, storeUrl, client, reasonOf);
  if (slack.appToken) {
    try {
      await client(slack.appToken).apps.connections.open();
      findings.push(pass('Slack accepts SLACK_APP_TOKEN for Socket Mode.'));
    } catch (error) {
      findings.push(
        fail(
          `Slack refused SLACK_APP_TOKEN for Socket Mode (${reasonOf(error)}): it needs the connections:write scope.`,
        ),
      );
    }
  }
  return findings;
}

/** auth.test of one bot token, and its scopes against the manifest's. */
async function botTokenFindings(
  client: WebClient,
  name: string,
  subject: string,
  reasonOf: (error: unknown) => string,
): Promise<Finding[]> {
  try {
    const auth = await client.auth.test();
    const findings = [
      pass(`Slack accepts ${name}: the bot is ${auth.user ?? auth.user_id} in ${auth.team ?? auth.team_id}.`),
    ];
    const granted = auth.response_metadata?.scopes;
    if (!granted) {
      findings.push(
        fail(
          `Slack did not say which scopes ${subject.replace(/^The /, 'the ')} has (no X-OAuth-Scopes header): the scopes could not be checked.`,
        ),
      );
      return findings;
    }
    const missing = SLACK_BOT_SCOPES.filter((s) => !granted.includes(s));
    findings.push(
      missing.length
        ? fail(
            `${subject} lacks the scopes ${missing.join(', ')}: add them under OAuth & Permissions (npm run slack-manifest lists them all) and reinstall the app.`,
          )
        : pass(`${subject} has every scope the bot uses (${SLACK_BOT_SCOPES.length}).`),
    );
    return findings;
  } catch (error) {
    return [fail(`Slack refused ${name} or could not be reached (${reasonOf(error)}).`)];
  }
}

/** The OAuth mode: the installations in the store, the first few opened and their tokens checked. */
async function installationFindings(
  oauth: SlackOAuthConfig,
  storeUrl: string,
  client: (token: string | undefined) => WebClient,
  reasonOf: (error: unknown) => string,
): Promise<Finding[]> {
  const store = await openStore(storeUrl);
  try {
    const keys = new KeyRing(oauth.installationKey, oauth.previousInstallationKey);
    const installations = new SlackInstallationStore(store, keys, pino({ level: 'silent' }), { cacheMs: 0 });
    const ids = await installations.ids();
    if (ids.length === 0)
      return [
        pass(
          'No Slack workspace has installed the app yet: open https://<the bot>/slack/install and press "Add to Slack".',
        ),
      ];
    const findings = [
      pass(
        `${ids.length} Slack installation(s) in the store; checking ${Math.min(ids.length, INSTALLATIONS_CHECKED)}.`,
      ),
    ];
    for (const id of ids.slice(0, INSTALLATIONS_CHECKED)) {
      const [kind, value] = id.split(':');
      const enterprise = kind === 'enterprise';
      try {
        const installation = await installations.fetchInstallation({
          teamId: enterprise ? undefined : value,
          enterpriseId: enterprise ? value : undefined,
          isEnterpriseInstall: enterprise,
        });
        const label = `the installation ${id}`;
        findings.push(
          ...(await botTokenFindings(
            client(installation.bot?.token),
            `the bot token of ${label}`,
            `The bot token of ${label}`,
            reasonOf,
          )),
        );
      } catch (error) {
        findings.push(
          fail(
            error instanceof SealError
              ? `The installation ${id} does not open with SLACK_INSTALLATION_KEY (nor SLACK_INSTALLATION_KEY_PREVIOUS): ${error.message}.`
              : `The installation ${id} could not be read (${reasonOf(error)}).`,
          ),
        );
      }
    }
    return findings;
  } catch (error) {
    return [fail(`The Slack installations could not be read from the store (${reasonOf(error)}).`)];
  } finally {
    await store.close();
  }
}
