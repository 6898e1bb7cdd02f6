/**
 * Benchmark: what reading the installation costs each Slack request in the OAuth mode — Bolt's
 * own authorize (@slack/oauth InstallProvider#authorize) over the bot's installation store
 * (src/platforms/slack/installations.ts: the keyv read and the AES-256-GCM opening) — with
 * BENCH_WORKSPACES (1,000) workspaces installed, on SQLite (a file) and on Redis (REDIS_URL, else
 * a redis-server started here on a free port, as the tests do; skipped when neither is there).
 * Each store is measured without the in-process cache (every request reads the store) and with it
 * (CACHE_TTL_MS), requests for random workspaces one at a time (p50 / p95 / p99 latency, ms) and
 * BENCH_CONCURRENCY (16) at a time (p95, and requests a second). The target: p95 ≤ 1 ms.
 * Run: `npm run bench:installations`. Environment: BENCH_WORKSPACES, BENCH_REQUESTS (5000),
 * BENCH_CONCURRENCY, REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstallProvider } from '@slack/oauth';
import { pino } from 'pino';
import { openStore } from '../src/core/state/open-store.ts';
import { KeyRing } from '../src/core/state/sealed.ts';
import type { StateStore } from '../src/core/state/store.ts';
import { type SlackInstallation, SlackInstallationStore } from '../src/platforms/slack/installations.ts';
import { startRedis, type TestRedis } from '../test/helpers/redis.ts';
import { percentile } from './figures.ts';

const WORKSPACES = Number(process.env.BENCH_WORKSPACES ?? 1_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const log = pino({ level: 'silent' });
const keys = new KeyRing(randomBytes(32));

/** An installation as Bolt's installer stores one (a bot token, and a refresh token far from expiry). */
function installation(i: number): SlackInstallation {
  const team = `T${String(i).padStart(9, '0')}`;
  return {
    team: { id: team, name: `Workspace ${i}` },
    enterprise: undefined,
    user: { id: `U${i}`, token: undefined, scopes: undefined },
    bot: {
      token: `xoxe.xoxb-1-${randomBytes(24).toString('hex')}`,
      refreshToken: `xoxe-1-${randomBytes(24).toString('hex')}`,
      expiresAt: Math.floor(Date.now() / 1000) + 12 * 3600,
      scopes: ['chat:write', 'app_mentions:read', 'files:read', 'users:read', 'im:history', 'channels:history'],
      id: 'B0BENCH',
      userId: 'U0BENCHBOT',
    },
    isEnterpriseInstall: false,
    authVersion: 'v2',
    tokenType: 'bot',
    appId: 'A0BENCH',
  } as SlackInstallation;
}

/** Bolt's authorize over the store, as the receiver builds it. */
function authorizer(store: SlackInstallationStore): InstallProvider {
  return new InstallProvider({
    clientId: '1.2',
    clientSecret: 'bench',
    stateSecret: 'bench',
    installationStore: store,
    logger: {
      debug() {},
      info() {},
      warn() {},
      error() {},
      setLevel() {},
      getLevel: () => 'error',
      setName() {},
    } as never,
  });
}

const randomTeam = () => `T${String(Math.floor(Math.random() * WORKSPACES)).padStart(9, '0')}`;
const ms = (n: number) => n.toFixed(3);

/** One store, without and with the cache: table rows. */
async function measure(name: string, state: StateStore): Promise<string[]> {
  const filler = new SlackInstallationStore(state, keys, log, { cacheMs: 0 });
  for (let i = 0; i < WORKSPACES; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, WORKSPACES - i) }, (_, j) => filler.storeInstallation(installation(i + j))),
    );
  const rows: string[] = [];
  for (const cacheMs of [0, undefined]) {
    const provider = authorizer(new SlackInstallationStore(state, keys, log, cacheMs === 0 ? { cacheMs } : {}));
    const once = async () => {
      const started = performance.now();
      const result = await provider.authorize({
        teamId: randomTeam(),
        enterpriseId: undefined,
        isEnterpriseInstall: false,
      });
      if (!result.botToken) throw new Error('no bot token');
      return performance.now() - started;
    };
    for (let i = 0; i < 500; i++) await once(); // warm-up
    const sequential: number[] = [];
    for (let i = 0; i < REQUESTS; i++) sequential.push(await once());
    const concurrent: number[] = [];
    const started = performance.now();
    let done = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (done < REQUESTS) {
          done += 1;
          concurrent.push(await once());
        }
      }),
    );
    const perSecond = REQUESTS / ((performance.now() - started) / 1000);
    rows.push(
      `| ${name} | ${cacheMs === 0 ? 'none' : 'in-process, 5 s'} | ${ms(percentile(sequential, 50))} | ${ms(percentile(sequential, 95))} | ${ms(percentile(sequential, 99))} | ${ms(percentile(concurrent, 95))} | ${Math.round(perSecond)} |`,
    );
  }
  return rows;
}

const rows: string[] = [];
const sqlite = await openStore(
  `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-bench-')), 'installations.sqlite')}`,
);
try {
  rows.push(...(await measure('SQLite (file)', sqlite)));
} finally {
  await sqlite.close();
}
let redis: TestRedis | undefined;
let redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  try {
    redis = await startRedis();
    redisUrl = redis.url;
  } catch (error) {
    process.stderr.write(`Redis skipped: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
if (redisUrl) {
  const redisStore = await openStore(redisUrl);
  try {
    rows.push(...(await measure(redis ? 'Redis (loopback)' : 'Redis (REDIS_URL)', redisStore)));
  } finally {
    await redisStore.close();
    await redis?.stop();
  }
}
process.stdout.write(
  `Installation read per Slack request (Bolt's authorize: store read + AES-256-GCM opening), ${WORKSPACES} workspaces installed, random workspaces, Node ${process.version}:\n\n`,
);
process.stdout.write(
  `| store | cache | p50 ms | p95 ms | p99 ms | p95 ms (${CONCURRENCY} at a time) | requests/s (${CONCURRENCY} at a time) |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
