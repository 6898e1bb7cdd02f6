/**
 * The HTTP server Slack posts to in HTTP mode (`/slack/events`): Bolt's HTTPReceiver does the
 * work (signature check, acks, dispatch), behind a guard that refuses what Bolt lets through:
 * a timestamp more than 5 minutes in the FUTURE (Bolt only refuses the past), and a signed
 * request replayed as is (same signature and timestamp), which is acknowledged but not run
 * again. Replays are remembered in the shared store, so instances behind one load balancer agree.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { HTTPReceiver } from '@slack/bolt';
import type { Claims } from '../../core/state/claims.ts';
import type { Logger } from '../../log.ts';

/** Slack's window for request timestamps, in seconds (either way). */
export const MAX_CLOCK_SKEW_SEC = 5 * 60;

/** How long a seen signature is remembered, in ms: past it, its timestamp is too old anyway. */
const REPLAY_TTL_MS = 2 * MAX_CLOCK_SKEW_SEC * 1000;

/**
 * Creates (does not start) the server.
 * @param now the clock, ms since the epoch (tests).
 */
export function createSlackServer(receiver: HTTPReceiver, deps: { claims: Claims; log: Logger; now?: () => number }): Server {
  const now = deps.now ?? Date.now;
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    try {
      receiver.requestListener(req, res);
    } catch {
      // Bolt throws for a path it does not serve.
      if (!res.headersSent) res.writeHead(404).end();
    }
  };
  return createServer((req, res) => {
    const timestamp = Number(req.headers['x-slack-request-timestamp']);
    const signature = req.headers['x-slack-signature'];
    if (req.method !== 'POST' || !Number.isFinite(timestamp) || typeof signature !== 'string') return pass(req, res);
    if (Math.abs(now() / 1000 - timestamp) > MAX_CLOCK_SKEW_SEC) {
      deps.log.info({ skewSec: Math.round(timestamp - now() / 1000) }, 'slack request refused: timestamp more than 5 minutes off');
      res.writeHead(401, { 'content-type': 'text/plain' }).end('timestamp out of range');
      return;
    }
    deps.claims.claim(`slack:request:${signature}:${timestamp}`, REPLAY_TTL_MS).then(
      (first) => {
        if (first) return pass(req, res);
        deps.log.warn('slack request replayed (same signature and timestamp): acknowledged, not run again');
        req.resume();
        res.writeHead(200).end();
      },
      // Without the store a replay cannot be told apart; Bolt still checks the signature.
      () => pass(req, res),
    );
  });
}
