/**
 * A real Prometheus for tests (Debian's package `prometheus`, which test/setup.sh installs, with
 * its `promtool`): started on a free loopback port with a configuration the test writes, an
 * empty TSDB in a temporary folder, and its HTTP API (`/api/v1/query`, `/api/v1/rules`,
 * https://prometheus.io/docs/prometheus/latest/querying/api/) for the test to read.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { freePort } from './redis.ts';

/** The Debian package's binary, else the one on PATH. */
function binary(name: 'prometheus' | 'promtool'): string {
  return existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : name;
}

/** One series of an instant query's answer (`resultType: vector`). */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** What `/api/v1/query` answered: `success` with the series, or `error` with Prometheus' reason. */
export type QueryAnswer = { status: 'success'; series: Sample[] } | { status: 'error'; error: string };

/** A running Prometheus. */
export interface TestPrometheus {
  url: string;
  /** Evaluates `expr` now (an instant query). */
  query(expr: string): Promise<QueryAnswer>;
  /** The loaded rule groups (`/api/v1/rules`): each rule's name, query, health and last error. */
  rules(): Promise<Array<{ name: string; query: string; health: string; lastError?: string }>>;
  stop(): Promise<void>;
}

/**
 * Runs `promtool` with `args` (e.g. `['check', 'rules', file]`).
 * @returns its exit code and output (stdout and stderr).
 */
export async function promtool(args: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(binary('promtool'), args);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
  }
}

/**
 * Starts Prometheus with `config` (a prometheus.yml as an object) and resolves once it is ready.
 * @throws Error when the binary is missing (`apt-get install prometheus`) or it is not ready within 30 s.
 */
export async function startPrometheus(config: Record<string, unknown>): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-prometheus-'));
  const file = join(dir, 'prometheus.yml');
  writeFileSync(file, stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary('prometheus'),
    [
      `--config.file=${file}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<never>((_, reject) => {
    child.once('error', (e) =>
      reject(new Error(`prometheus could not be run (apt-get install prometheus): ${e.message}`)),
    );
    child.once('exit', (code) => reject(new Error(`prometheus exited with ${code}:\n${output}`)));
  });
  exited.catch(() => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await Promise.race([
      fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      ),
      exited,
    ]).catch(async (error: unknown) => {
      await stop();
      throw error;
    });
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query`, {
        method: 'POST',
        body: new URLSearchParams({ query: expr }),
      });
      const body = (await response.json()) as { status: string; data?: { result: Sample[] }; error?: string };
      return body.status === 'success'
        ? { status: 'success', series: body.data!.result }
        : { status: 'error', error: body.error ?? `HTTP ${response.status}` };
    },
    async rules() {
      const body = (await (await fetch(`${url}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ rules: Array<{ name: string; query: string; health: string; lastError?: string }> }> };
      };
      return body.data.groups.flatMap((g) => g.rules);
    },
    stop,
  };
}
