/**
 * The guard in front of Bolt in HTTP mode (src/platforms/slack/http.ts), end to end: the whole
 * bot on its SQLite file, requests sent with undici as anyone on the internet could send them.
 *
 * - 10,000 unsigned or wrongly signed requests are refused 401 and leave the store's file as it
 *   was (same number of rows in the keyv table, same size of the file and its write-ahead log),
 *   with a handful of log lines, not 10,000.
 * - A captured signed slash command replayed with anything appended to its signature (`=x`,
 *   which Bolt alone accepts; `x`; a space; a second signature) runs once.
 * - A body over 1 MB is refused 413, whether it says its length or not, and stores nothing; a
 *   10 MB one too, also for a client that reads the answer only once its whole body is sent.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/platforms/slack/http.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, signSlackRequest } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { postWholeBody } from '../helpers/whole-body-post.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;
let pool: Pool;

useE2E(
  {
    slack: {
      channels: [
        { id: 'C0GENERAL', name: 'general' },
        { id: 'C0REPLAY', name: 'replay' },
      ],
    },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
    pool = new Pool(botUrl, { connections: 50 });
    return () => pool.close();
  },
);

/** The rows of the keyv table in the bot's SQLite file (read on the bot's own connection). */
async function rowCount(): Promise<number> {
  const sqlite = testBot.bot.core.store.keyv.store as { query(sql: string): Promise<Array<{ n: number }>> };
  return (await sqlite.query('SELECT count(*) AS n FROM keyv'))[0]!.n;
}

/** Bytes of the SQLite file and of its write-ahead log. */
function fileBytes(): { file: number; wal: number } {
  const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
  return { file: size(testBot.storePath), wal: size(`${testBot.storePath}-wal`) };
}

/** POSTs to the bot's Slack endpoint with exactly these headers; resolves with the status. */
async function post(body: string | Readable, headers: Record<string, string | string[]>): Promise<number> {
  const res = await pool.request({
    method: 'POST',
    path: '/slack/events',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}

/** A slash command's form body as Slack sends it (no response_url of the fake: nothing should ever use it). */
const commandBody = (text: string, channel = 'C0GENERAL') =>
  new URLSearchParams({
    token: 'x',
    team_id: 'T0FAKE',
    channel_id: channel,
    user_id: 'U0ALICE',
    command: '/chat',
    text,
    response_url: 'http://127.0.0.1:9/none',
    trigger_id: '1.2.3',
  }).toString();

/** Runs `tasks` with at most `limit` at a time. */
async function inParallel<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

describe('Slack HTTP guard', () => {
  it('refuses 10,000 unsigned or wrongly signed requests with 401, and the store keeps its row count and file size', async () => {
    // Settled: whatever the bot wrote while starting is in the file.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rowsBefore = await rowCount();
    const bytesBefore = fileBytes();
    const logsBefore = testBot.logs.length;
    const started = Date.now();
    const nowSec = () => Math.floor(Date.now() / 1000);
    const kinds = [
      'unsigned',
      'wrong digest',
      'stale',
      'from another body, =x appended',
      'future',
      'upper-case hex',
    ] as const;
    const statuses = await inParallel(10_000, 50, async (i) => {
      const body = commandBody(`forged ${i}`);
      const ts = nowSec();
      const kind = kinds[i % kinds.length]!;
      const headers: Record<string, string> =
        kind === 'unsigned'
          ? {}
          : kind === 'wrong digest'
            ? { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': `v0=${randomBytes(32).toString('hex')}` }
            : kind === 'stale'
              ? {
                  'x-slack-request-timestamp': String(ts - 360),
                  'x-slack-signature': signSlackRequest(slack.signingSecret, ts - 360, body),
                }
              : kind === 'future'
                ? {
                    'x-slack-request-timestamp': String(ts + 600),
                    'x-slack-signature': signSlackRequest(slack.signingSecret, ts + 600, body),
                  }
                : kind === 'upper-case hex'
                  ? {
                      'x-slack-request-timestamp': String(ts),
                      'x-slack-signature': `v0=${signSlackRequest(slack.signingSecret, ts, body).slice(3).toUpperCase()}`,
                    }
                  : {
                      'x-slack-request-timestamp': String(ts),
                      'x-slack-signature': `${signSlackRequest(slack.signingSecret, ts, commandBody('a genuine one'))}=x`,
                    };
      return `${kind}: ${await post(body, headers)}`;
    });
    expect(await rowCount()).toBe(rowsBefore);
    expect(fileBytes()).toEqual(bytesBefore);
    const tally = new Map<string, number>();
    for (const s of statuses) tally.set(s, (tally.get(s) ?? 0) + 1);
    expect(Object.fromEntries(tally)).toEqual(
      Object.fromEntries(
        kinds.map((k, i) => [`${k}: 401`, Math.floor(10_000 / kinds.length) + (i < 10_000 % kinds.length ? 1 : 0)]),
      ),
    );
    // Nothing ran, and the refusals were logged in a few lines, not one each.
    expect(service.chatRequests()).toEqual([]);
    const refusals = testBot.logs.slice(logsBefore).filter((l) => String(l.msg).startsWith('slack request refused'));
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 10_000) + 1);
    expect(testBot.rawLog()).not.toContain(slack.signingSecret);
    expect(testBot.rawLog()).not.toContain('forged ');

    // The count does see what a genuine request stores (its replay claim, its history).
    const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0GENERAL'));
    const genuine = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'a genuine one',
      channel_id: 'C0GENERAL',
    });
    expect(genuine.status).toBe(200);
    await done;
    expect(await rowCount()).toBeGreaterThan(rowsBefore);
  }, 120_000);

  it('runs a captured signed slash command once, however its signature is suffixed when replayed', async () => {
    const timestampSec = Math.floor(Date.now() / 1000);
    const text = 'only once, whatever the suffix';
    const outcomes: unknown[] = [];
    const record = (o: { conversationId: string }) => {
      if (o.conversationId.endsWith(':C0REPLAY')) outcomes.push(o);
    };
    testBot.bot.core.events.on('command.done', record);
    try {
      const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0REPLAY'));
      const first = await slack.sendSlashCommand(
        botUrl,
        { command: '/chat', text, channel_id: 'C0REPLAY' },
        { timestampSec },
      );
      expect(first.status).toBe(200);
      await done;
      const good = signSlackRequest(slack.signingSecret, timestampSec, first.rawBody);
      const replays: Array<string | string[]> = [
        good,
        `${good}=x`,
        `${good}x`,
        `${good} `,
        `${good},${good}`,
        `${good}, v0=${'0'.repeat(64)}`,
        `${good}=`,
        [good, `${good}=x`],
      ];
      const statuses: number[] = [];
      for (const signature of replays)
        statuses.push(
          await post(first.rawBody, {
            'x-slack-request-timestamp': String(timestampSec),
            'x-slack-signature': signature,
          }),
        );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(service.chatRequests().filter((b) => JSON.stringify(b.messages).includes(text))).toHaveLength(1);
      expect(outcomes).toHaveLength(1);
      // The replay as is (and with a space, which HTTP drops) is acknowledged; anything else is not a valid signature.
      expect(statuses).toEqual([200, 401, 401, 200, 401, 401, 401, 401]);
    } finally {
      testBot.bot.core.events.off('command.done', record);
    }
  });

  it('refuses a body over 1 MB with 413, announced or streamed, and stores nothing', async () => {
    const rowsBefore = await rowCount();
    const ts = Math.floor(Date.now() / 1000);
    const big = commandBody('x'.repeat(MAX_BODY_BYTES));
    const headers = {
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(slack.signingSecret, ts, big),
    };
    expect(await post(big, headers)).toBe(413);
    async function* chunks() {
      for (let sent = 0; sent < big.length; sent += 64 * 1024) yield Buffer.from(big.slice(sent, sent + 64 * 1024));
    }
    expect(await post(Readable.from(chunks()), headers)).toBe(413);
    expect(await rowCount()).toBe(rowsBefore);
    expect(service.chatRequests().filter((b) => JSON.stringify(b.messages).includes('xxxxxxxx'))).toEqual([]);
  });

  it('answers a 10 MB signed request 413, also to a client that reads the answer only once it has sent its whole body', async () => {
    const rowsBefore = await rowCount();
    const ts = Math.floor(Date.now() / 1000);
    const big = commandBody('y'.repeat(10 * 1024 * 1024));
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(slack.signingSecret, ts, big),
    };
    const url = `${botUrl}/slack/events`;
    for (const chunked of [false, true])
      expect(await postWholeBody(url, Buffer.from(big), headers, chunked), chunked ? 'chunked' : 'announced').toEqual({
        status: 413,
        text: 'body too large',
      });
    // The bot still answers on new connections, and kept nothing of those requests.
    expect(await post(commandBody('after'), {})).toBe(401);
    expect(await rowCount()).toBe(rowsBefore);
    expect(service.chatRequests().filter((b) => JSON.stringify(b.messages).includes('yyyyyyyy'))).toEqual([]);
  });
});
