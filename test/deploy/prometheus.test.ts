/**
 * deploy/prometheus and deploy/grafana against a running bot (issue 43 item 2): Debian's real
 * `prometheus` scrapes the bot's /metrics (HTTP_PORT) every second, with the repository's
 * prometheus.yml (its job and path; only the target, the intervals and the rule file's place
 * changed) and alerts.yml; `promtool` checks both files. The bot runs on Discord and Slack
 * (HTTP mode) with Redis and a spending cap, and is driven into what the alerts watch:
 *
 * - round 1 makes every series exist: a /chat answered on each platform, a /chat the service
 *   fails (503 three times), a Slack 429;
 * - round 2, once Prometheus has scraped round 1, moves them (a counter first seen at 1 shows
 *   no increase): the same failures again, 429s past the rule's threshold, the /chat that
 *   passes 80 % of the user's daily cap, and the event loop held 700 ms;
 * - then Redis is killed and Discord's gateway dropped (the health checks fail).
 *
 * Each platform's last-event timestamp moves with round 2's slash command and interaction.
 * Every panel's query of the dashboard and every rule's expression (read from the files) is then
 * asked of Prometheus' HTTP API: each is valid, each panel's returns series, each rule's returns
 * series (its alert condition holds) but GenbotEventSilence's, which needs an hour without an
 * event, and every genbot_ metric any of them names is one the bot exports.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { TestBot } from '../e2e/harness.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { promtool, startPrometheus, type TestPrometheus } from '../helpers/prometheus.ts';
import type { TestRedis } from '../helpers/redis.ts';

const DEPLOY = resolve(import.meta.dirname, '../../deploy');
const CONFIG = join(DEPLOY, 'prometheus/prometheus.yml');
const RULES = join(DEPLOY, 'prometheus/alerts.yml');
const DASHBOARD = join(DEPLOY, 'grafana/dashboards/genbot.json');

/** Rules whose condition this test cannot bring about, and why. */
const NOT_BROUGHT_ABOUT: Record<string, string> = {
  GenbotEventSilence: 'an hour without any platform event',
};

/** fake-chat at 4 EUR a million prompt tokens and 25 a million completion tokens: 0.026 EUR an answer (usage below). */
const PRICES = join(mkdtempSync(join(tmpdir(), 'genbot-prometheus-prices-')), 'prices.json');
writeFileSync(PRICES, JSON.stringify({ currency: 'EUR', chat: { 'fake-chat': { prompt: 4, completion: 25 } } }));

const SLACK_CHANNEL = 'C0METRICS';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let redis: TestRedis;
let testBot: TestBot;
let botUrl: string;
let prometheus: TestPrometheus;

useE2E(
  {
    discord: {},
    slack: { channels: [{ id: SLACK_CHANNEL, name: 'metrics' }] },
    redis: true,
    bot: {
      env: {
        HTTP_PORT: '0',
        PRICES_FILE: PRICES,
        // Three answers of 0.026: the third passes 80 % (0.056) of the user's day.
        SPEND_CAP_USER_DAY: '0.07',
        MAX_TOKENS_LIMIT: '1000',
        DEFAULT_CHAT_MODEL: 'fake-chat',
        NOTIFY_AFTER_SECONDS: '0',
      },
    },
  },
  (e2e) => {
    ({ service, discord, slack, redis, bot: testBot, botUrl } = e2e);
    service.setStreamUsage({ prompt_tokens: 250, completion_tokens: 1_000 });
  },
);

beforeAll(async () => {
  const config = parse(readFileSync(CONFIG, 'utf8')) as {
    global: Record<string, string>;
    rule_files: string[];
    scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
  };
  const job = config.scrape_configs.find((c) => c.job_name === 'genbot')!;
  job.static_configs = [{ targets: [`127.0.0.1:${testBot.bot.ops!.port}`] }];
  config.global = { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' };
  config.rule_files = config.rule_files.map((f) => resolve(DEPLOY, 'prometheus', f));
  prometheus = await startPrometheus(config);
});

afterAll(async () => {
  discord.restoreGateway();
  await prometheus?.stop();
});

/** Each panel's queries (rows hold none). */
function panelQueries(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** Each alert rule's name and expression. */
function ruleQueries(): Array<{ alert: string; expr: string }> {
  const file = parse(readFileSync(RULES, 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  return file.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert, expr: r.expr })));
}

/** Polls `expr` until it returns series (Prometheus scrapes every second). */
async function seriesOf(expr: string, timeout = 20_000) {
  await expect
    .poll(
      async () => {
        const answer = await prometheus.query(expr);
        return answer.status === 'success' ? answer.series.length : 0;
      },
      { timeout, interval: 250 },
    )
    .toBeGreaterThan(0);
}

/** A Slack /chat by the workspace's default user; resolves with whether it was answered. */
async function slackChat(text: string): Promise<boolean> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${SLACK_CHANNEL}`));
  const ack = await slack.sendSlashCommand(botUrl, { command: '/chat', text, channel_id: SLACK_CHANNEL });
  expect(ack.ackedInTime).toBe(true);
  return (await done)[0]!.ok;
}

/** A Slack /chat the service fails: 503 to the request and to each of the client's retries. */
async function failedSlackChat(text: string): Promise<void> {
  for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 503 });
  expect(await slackChat(text)).toBe(false);
}

/** A Discord /chat; resolves once answered. */
async function discordChat(channelId: string, prompt: string): Promise<void> {
  const done = testBot.outcomes((o) => o.platform === 'discord');
  discord.dispatchInteraction({
    command: 'chat',
    options: { prompt },
    channelId,
    user: { id: '1290000000000000888', username: 'ops' },
  });
  expect((await done)[0]!.ok).toBe(true);
}

describe('deploy/prometheus and deploy/grafana against a running bot', () => {
  it('promtool passes the alert rules and the configuration', async () => {
    const rules = await promtool(['check', 'rules', RULES]);
    expect(rules.output).toMatch(new RegExp(`SUCCESS: ${ruleQueries().length} rules found`));
    expect(rules.code).toBe(0);
    const config = await promtool(['check', 'config', CONFIG]);
    expect(config.output).toMatch(/SUCCESS: .*prometheus\.yml is valid prometheus config file syntax/);
    expect(config.code).toBe(0);
  });

  it("every panel's query returns series and every rule's expression is valid and holds, once the bot has failed in each way", {
    timeout: 180_000,
  }, async () => {
    const channel = discord.addChannel('metrics');
    // Round 1: every series exists.
    slack.rateLimitNext('chat.postMessage', 1, 1);
    expect(await slackChat('first')).toBe(true);
    await failedSlackChat('fails once');
    await discordChat(channel.id, 'hello');
    await seriesOf('genbot_platform_rate_limited_total{platform="slack"}');
    await seriesOf('genbot_commands_total{platform="slack",outcome="server_error"}');
    await seriesOf('genbot_commands_total{platform="discord",outcome="ok"}');

    // Round 2: the counters move past the rules' thresholds.
    const round2 = Math.floor(Date.now() / 1000);
    slack.rateLimitNext('chat.postMessage', 7, 1);
    await failedSlackChat('fails again');
    expect(await slackChat('second')).toBe(true);
    expect(await slackChat('third: past 80 % of the cap')).toBe(true);
    await discordChat(channel.id, 'again');
    const stalled = Date.now() + 700;
    while (Date.now() < stalled) {
      // The event loop held: what GenbotEventLoopLag watches.
    }
    await seriesOf('genbot_commands_total{platform="slack",outcome="server_error"} == 2');
    await seriesOf('genbot_spend_cap_notices_total{scope="user",period="day"} == 1');
    await seriesOf('max_over_time(genbot_nodejs_eventloop_lag_p99_seconds[5m]) > 0.5');
    // Each platform's last event is one of round 2's (a slash command; an interaction).
    await seriesOf(`genbot_platform_last_event_timestamp_seconds{platform="slack"} >= ${round2}`);
    await seriesOf(`genbot_platform_last_event_timestamp_seconds{platform="discord"} >= ${round2}`);

    // The store and Discord's gateway gone.
    await redis.kill();
    discord.dropGateway();
    await seriesOf('genbot_health_check_up{check="store"} == 0');
    await seriesOf('genbot_health_check_up{check="discord"} == 0');

    const panels = panelQueries();
    expect(panels.length).toBeGreaterThan(10);
    for (const { panel, expr } of panels) {
      const answer = await prometheus.query(expr);
      expect(answer, `${panel}: ${expr}`).toMatchObject({ status: 'success' });
      expect(answer.status === 'success' && answer.series.length, `${panel}: ${expr}`).toBeGreaterThan(0);
    }

    const rules = ruleQueries();
    const holding: string[] = [];
    for (const { alert, expr } of rules) {
      const answer = await prometheus.query(expr);
      expect(answer, `${alert}: ${expr}`).toMatchObject({ status: 'success' });
      if (answer.status === 'success' && answer.series.length > 0) holding.push(alert);
    }
    expect(holding.sort()).toEqual(
      rules
        .map((r) => r.alert)
        .filter((a) => !(a in NOT_BROUGHT_ABOUT))
        .sort(),
    );

    // Prometheus evaluates the loaded rules itself without an error.
    const loaded = await prometheus.rules();
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map((r) => r.alert).sort());
    for (const rule of loaded) expect(rule, rule.name).toMatchObject({ health: 'ok' });

    // Every genbot_ metric the rules and panels name is one the bot exports.
    const exported = await prometheus.query('count by (__name__) ({__name__=~"genbot_.+"})');
    const names = new Set(exported.status === 'success' ? exported.series.map((s) => s.metric.__name__) : []);
    const named = [...panels, ...rules].flatMap((q) => q.expr.match(/\bgenbot_\w+/g) ?? []);
    expect(named.length).toBeGreaterThan(0);
    for (const name of new Set(named)) expect(names, name).toContain(name);
  });
});
