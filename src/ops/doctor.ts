/**
 * `npm run doctor`: reads the same configuration as `npm start` (`.env` in the folder it runs
 * in, then the environment) and checks, in plain sentences, everything the bot needs: every
 * variable; the service reachable, the key accepted, the models listed (text, image, and the
 * configured defaults among them); the Discord token, the application's intents and the
 * registered commands; the Slack token (or, in the OAuth mode, the installations: doctor-slack.ts)
 * and its scopes against the manifest's; the store. First, the Node.js release it runs on: a
 * warning (not a failure) below the supported ones.
 * Exit code 0 when all is well, 1 otherwise (a warning alone is not a problem); never a stack trace.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type APIApplication,
  type APIUser,
  ApplicationFlags,
  REST,
  type RESTGetAPIApplicationCommandsResult,
  Routes,
} from 'discord.js';
import { commands, messageActions } from '../../commands/index.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { ModelCatalog, type ModelLists } from '../core/models/catalog.ts';
import { ServiceClient } from '../core/service/client.ts';
import { ServiceError } from '../core/service/errors.ts';
import { openStore } from '../core/state/open-store.ts';
import { scrubSecrets } from '../log.ts';
import { slackFindings } from './doctor-slack.ts';

/** One finding: passed or not, in a sentence. */
export interface Finding {
  ok: boolean;
  text: string;
  /** Passed, but the operator should act (printed with `!`; not counted as a problem). */
  warning?: boolean;
}

type Check = (config: Config) => Promise<Finding[]>;

const pass = (text: string): Finding => ({ ok: true, text });
const fail = (text: string): Finding => ({ ok: false, text });

/** The reason of a failure, in a few words, without secrets or stack (the caller scrubs secrets). */
export function reasonOf(error: unknown): string {
  if (error instanceof ServiceError) return error.userMessage;
  const e = error as { data?: { error?: string }; status?: number; code?: string | number; message?: string };
  if (typeof e.data?.error === 'string') return e.data.error;
  if (typeof e.status === 'number') return `HTTP ${e.status}${e.message ? `: ${e.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The Node.js releases the bot supports, as package.json's `engines` says (`^22.13.0 || >=24`):
 * 22 from 22.13 (the least every dependency accepts), 24 and later. Node 20's support ended on
 * 2026-04-30; 23 was never a long-term release.
 */
export function isSupportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 22 && minor >= 13) || major >= 24;
}

/**
 * The line about the runtime: which Node.js runs the doctor (and so `npm start`, from the same
 * PATH), and a warning when it is not a supported release ({@link isSupportedNode}).
 * @param version e.g. `v24.22.3` (`process.version`).
 */
export function runtimeFinding(version: string): Finding {
  return isSupportedNode(version)
    ? pass(`Node.js ${version} runs the bot (supported: 22 from 22.13, and 24).`)
    : {
        ok: true,
        warning: true,
        text: `Node.js ${version} runs the bot, a release it does not support: run it on Node 22 (22.13 or later) or 24 (Node 20's support ended on 2026-04-30).`,
      };
}

/**
 * The service's model lists, fetched once without retries (`GET /v1/models` and the image
 * models' list): what proves the URL and the key work. Connect timeout 5 s, headers 10 s.
 * @throws ServiceError subclasses (the key refused, the service unreachable…): {@link reasonOf} words them.
 */
export async function serviceLists(service: { baseUrl: string; apiKey: string }): Promise<ModelLists> {
  const client = new ServiceClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    maxRetries: 0,
    connectTimeoutMs: 5_000,
    headersTimeoutMs: 10_000,
  });
  try {
    return await new ModelCatalog(client).lists();
  } finally {
    await client.close();
  }
}

/** The sentence for a service that did not answer or refused the key. */
export const serviceFailure = (baseUrl: string, error: unknown): string =>
  `The service at ${baseUrl} did not work: ${reasonOf(error)}`;

const checkService: Check = async (config) => {
  try {
    const lists = await serviceLists(config.service);
    const findings = [
      pass(
        `The service at ${config.service.baseUrl} answers and accepts the API key: ${lists.text.length} text models, ${lists.image.length} image models.`,
      ),
    ];
    if (lists.text.length === 0) findings.push(fail('The service lists no text model: /chat has nothing to use.'));
    const known = (value: string | undefined, list: string[], name: string) => {
      if (value === undefined) return;
      findings.push(
        list.some((m) => m.toLowerCase() === value.toLowerCase())
          ? pass(`${name} ${value} is listed by the service.`)
          : fail(
              `${name} ${value} is not listed by the service (it lists ${list.slice(0, 5).join(', ') || 'none'}${list.length > 5 ? ', …' : ''}).`,
            ),
      );
    };
    known(config.models.chat, lists.text, 'DEFAULT_CHAT_MODEL');
    known(config.models.vision, lists.text, 'DEFAULT_VISION_MODEL');
    const imageNames = lists.image.map((m) => m.display_name);
    known(config.models.image, imageNames, 'DEFAULT_IMAGE_MODEL');
    // A fallback the service does not know would answer 404 when it is needed: the next one is asked.
    for (const model of config.models.fallbacks.chat) known(model, lists.text, 'FALLBACK_CHAT_MODELS');
    for (const model of config.models.fallbacks.image) known(model, imageNames, 'FALLBACK_IMAGE_MODELS');
    return findings;
  } catch (error) {
    return [fail(serviceFailure(config.service.baseUrl, error))];
  }
};

const botFinding = (bot: APIUser) => pass(`Discord accepts DISCORD_TOKEN: the bot is ${bot.username}.`);

/** What Discord says of a bot token: its bot user and its application, or why it refused. */
export type DiscordIdentity =
  | { ok: true; rest: REST; bot: APIUser; application: APIApplication }
  | { ok: false; findings: Finding[] };

/**
 * Asks Discord who a bot token is (`GET /users/@me`, then `GET /applications/@me`), without
 * retries, 10 s each.
 * @param apiUrl the REST base (DISCORD_API_URL); discord.js's default when undefined.
 * @returns the bot user and application, or the findings that say what failed (never the token).
 */
export async function discordIdentity(token: string, apiUrl: string | undefined): Promise<DiscordIdentity> {
  const rest = new REST({ ...(apiUrl ? { api: apiUrl } : {}), retries: 0, timeout: 10_000 }).setToken(token);
  let bot: APIUser;
  try {
    bot = (await rest.get(Routes.user('@me'))) as APIUser;
  } catch (error) {
    return {
      ok: false,
      findings: [
        fail(
          `Discord refused DISCORD_TOKEN (${reasonOf(error)}): reset the token in the Developer Portal → Bot and set it again.`,
        ),
      ],
    };
  }
  try {
    return { ok: true, rest, bot, application: (await rest.get(Routes.currentApplication())) as APIApplication };
  } catch (error) {
    return {
      ok: false,
      findings: [botFinding(bot), fail(`Discord did not answer about the application: ${reasonOf(error)}`)],
    };
  }
}

const checkDiscord: Check = async (config) => {
  const discord = config.discord;
  if (!discord) return [];
  const identity = await discordIdentity(discord.token, discord.apiUrl);
  if (!identity.ok) return identity.findings;
  const { rest, application } = identity;
  const findings: Finding[] = [botFinding(identity.bot)];
  try {
    if (application.id !== discord.applicationId)
      findings.push(
        fail(
          `DISCORD_APPLICATION_ID is ${discord.applicationId}, but the token belongs to application ${application.id}.`,
        ),
      );
    const flags = application.flags ?? 0;
    const contentIntent =
      (flags & (ApplicationFlags.GatewayMessageContent | ApplicationFlags.GatewayMessageContentLimited)) !== 0;
    if (discord.messageContent) {
      findings.push(
        contentIntent
          ? pass('The Message Content intent is enabled, as DISCORD_MESSAGE_CONTENT=true needs.')
          : fail(
              'DISCORD_MESSAGE_CONTENT=true, but the Message Content intent is off in the Developer Portal → Bot: the gateway will refuse the bot (close 4014).',
            ),
      );
    } else {
      findings.push(pass('No privileged intent is needed (DISCORD_MESSAGE_CONTENT is off).'));
    }
    const registered = (await rest.get(
      Routes.applicationCommands(discord.applicationId),
    )) as RESTGetAPIApplicationCommandsResult;
    // Slash commands by name, message actions by name among the message commands (type 3).
    const names = new Set(registered.map((c) => `${c.type ?? 1}:${c.name}`));
    const missing = [
      ...commands.filter((c) => !names.has(`1:${c.name}`)).map((c) => `/${c.name}`),
      ...messageActions.filter((a) => !names.has(`3:${a.name}`)).map((a) => `“${a.name}”`),
    ];
    findings.push(
      missing.length
        ? fail(
            `Commands not registered globally: ${missing.join(', ')}. Run npm run deploy-commands (or set DISCORD_GUILD_ID for one guild).`,
          )
        : pass(`Every command is registered (${registered.length}).`),
    );
  } catch (error) {
    findings.push(fail(`Discord did not answer about the application: ${reasonOf(error)}`));
  }
  return findings;
};

const checkSlack: Check = async (config) => {
  const slack = config.slack;
  if (!slack) return [];
  return slackFindings(slack, config.storeUrl, reasonOf);
};

const checkStore: Check = async (config) => {
  const store = await openStore(config.storeUrl);
  try {
    await store.ping();
    return [pass(`The store (${store.kind}) answers.`)];
  } catch (error) {
    return [
      fail(`The store at ${config.storeUrl.replace(/\/\/[^@/]*@/, '//…@')} does not answer (${reasonOf(error)}).`),
    ];
  } finally {
    await store.close();
  }
};

/**
 * Runs every check.
 * @returns the findings in order, the runtime first ({@link runtimeFinding}); the runtime and the
 * configuration problems alone when the configuration is invalid.
 */
export async function runDoctor(env: Record<string, string | undefined>): Promise<Finding[]> {
  const runtime = runtimeFinding(process.version);
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [runtime, ...error.problems.map((p) => fail(`Configuration: ${p}.`))];
    throw error;
  }
  const findings: Finding[] = [runtime, pass('Every variable is set and well formed.')];
  for (const check of [checkService, checkDiscord, checkSlack, checkStore]) {
    try {
      findings.push(...(await check(config)));
    } catch (error) {
      findings.push(fail(`A check failed unexpectedly: ${reasonOf(error)}`));
    }
  }
  return findings.map((f) => ({ ...f, text: scrubSecrets(f.text, config.secrets) }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const envFile = join(process.env.INIT_CWD ?? process.cwd(), '.env');
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  try {
    const findings = await runDoctor(process.env);
    for (const finding of findings)
      process.stdout.write(`${finding.warning ? '!' : finding.ok ? '✓' : '✗'} ${finding.text}\n`);
    const failed = findings.filter((f) => !f.ok).length;
    process.stdout.write(failed ? `\n${failed} problem${failed > 1 ? 's' : ''} found.\n` : '\nAll is well.\n');
    process.exit(failed ? 1 : 0);
  } catch (error) {
    process.stdout.write(`✗ The doctor could not finish: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
