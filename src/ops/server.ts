/**
 * The operator's HTTP endpoint (`HTTP_PORT`, off by default): `GET /healthz` answers 200 when
 * every configured platform is connected and the store answers, 503 with the reasons
 * otherwise (JSON either way); `GET /metrics` serves the Prometheus text format.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { Logger } from '../log.ts';

/** One health check: a name and a function giving the reason it fails, or undefined when it passes. */
export interface HealthCheck {
  name: string;
  /** @returns undefined when healthy; a short reason otherwise. Must not throw (a throw counts as the reason). */
  check(): Promise<string | undefined> | string | undefined;
}

/** How long one check may take before it counts as failed, in ms. */
const CHECK_TIMEOUT_MS = 2_000;

/** A running ops server. */
export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

async function run(check: HealthCheck): Promise<string | undefined> {
  try {
    const timeout = sleep(CHECK_TIMEOUT_MS).then(() => `${check.name}: no answer within ${CHECK_TIMEOUT_MS} ms`);
    return await Promise.race([Promise.resolve(check.check()), timeout]);
  } catch (error) {
    return `${check.name}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Runs every check at once, each bounded by CHECK_TIMEOUT_MS (a throw or a timeout is its reason).
 * @returns each check's name and reason, undefined when it passes; never rejects.
 */
export function runChecks(checks: readonly HealthCheck[]): Promise<Array<readonly [string, string | undefined]>> {
  return Promise.all(checks.map(async (c) => [c.name, await run(c)] as const));
}

/** The health route: 200 when every check passes, 503 with the reasons otherwise. */
export const HEALTH_PATH = '/healthz';

/** The Prometheus route. */
export const METRICS_PATH = '/metrics';

/**
 * Starts the server on every interface (a container's health probe and Prometheus reach it
 * from outside; `host` narrows it), on `port` (0: any free port).
 * @throws when the port cannot be bound.
 */
export async function startOpsServer(
  port: number,
  options: { checks: readonly HealthCheck[]; registry: Registry; log: Logger; host?: string },
): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === HEALTH_PATH) {
      void runChecks(options.checks).then((results) => {
        const failures = results.filter(([, reason]) => reason !== undefined).map(([, reason]) => reason!);
        const body = JSON.stringify({
          status: failures.length ? 'unhealthy' : 'ok',
          checks: Object.fromEntries(results.map(([name, reason]) => [name, reason ?? 'ok'])),
          ...(failures.length ? { reasons: failures } : {}),
        });
        res
          .writeHead(failures.length ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          .end(body);
      });
      return;
    }
    if (path === METRICS_PATH) {
      options.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text))
        .catch((error: unknown) => {
          options.log.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'metrics could not be collected',
          );
          res.writeHead(500).end();
        });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, options.host ?? '0.0.0.0', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  options.log.info({ port: bound }, 'health and metrics listening');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
