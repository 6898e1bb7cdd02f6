/**
 * A real redis-server for tests, on a free loopback port, started by the test that needs it
 * (`.ci/run` installs the Debian package). No persistence: each server starts empty.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/** A running redis-server. */
export interface TestRedis {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: as if it died). */
  kill(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP): its connections stay open and nothing is answered, as a
   * server stalled by a long command, swapping or a paused VM; {@link resume} thaws it.
   */
  pause(): void;
  /** Thaws a server frozen by {@link pause} (SIGCONT): what its clients sent meanwhile is answered. */
  resume(): void;
  /** Starts it again on the same port (empty). */
  restart(): Promise<void>;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/** A free TCP port on loopback (for a server started after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts redis-server on a free port and resolves once it accepts connections.
 * @param options.password the default user's password (`--requirepass`); none by default.
 * @throws Error when redis-server is not installed (`apt-get install redis-server`) or does not start in 10 s.
 */
export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        ...(options.password ? ['--requirepass', options.password] : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${output}`)), 10_000);
      proc.stdout!.on('data', () => {
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`redis-server could not be run (apt-get install redis-server): ${error.message}`));
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
    await ready;
  };
  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
  };
  const signal = (name: 'SIGSTOP' | 'SIGCONT') => {
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error('redis-server is not running');
    child.kill(name);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: launch,
    stop: kill,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
  };
}
