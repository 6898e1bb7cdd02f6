/**
 * The worker processes of the image pool (image-pool.ts): started on demand (image-worker.ts,
 * at nice 10), handed one job at a time over IPC, parked when idle (ended after
 * `idleMs` unused, and never keeping the bot's process alive), killed (SIGKILL) at a job's
 * deadline, on its abort, or when the pool closes.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerJob, WorkerOps, WorkerReply } from './image-worker.ts';
import { WORKER_NICE } from './images.ts';

/**
 * The worker's entry file beside this one: built JavaScript where the bot runs built (`npm start`
 * runs dist/, `npm run build`), else the TypeScript source run by tsx (tests import src/).
 */
const BUILT = import.meta.url.endsWith('.js');
const WORKER_FILE = fileURLToPath(new URL(BUILT ? './image-worker.js' : './image-worker.ts', import.meta.url));
/** Node options of the worker beyond its heap: tsx's loader for the source, none for the build. */
const WORKER_LOADER = BUILT ? [] : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
/**
 * The worker's JavaScript heap, in MB: a PDF built to make pdf.js allocate without end ends
 * its worker (a crash, the file named as unreadable), not the machine. sharp's pixels are
 * native memory, outside this heap.
 */
const WORKER_HEAP_MB = 256;

/** A worker process and the job it runs. */
interface Worker {
  child: ChildProcess;
  /** Settles the running job with the worker's reply, or with its end. */
  settle?: (reply: WorkerReply | { exit: string }) => void;
  idleTimer?: NodeJS.Timeout;
}

/** The workers of one pool: at most as many as the pool's slots, since each runs one job. */
export class WorkerProcesses {
  private readonly idle: Worker[] = [];
  private readonly workers = new Set<Worker>();
  private nextId = 1;
  private closed = false;

  /** @param idleMs how long an unused worker lives, in ms. */
  constructor(private readonly idleMs: number) {}

  /** Worker processes alive now (running a job or idle). */
  get count(): number {
    return this.workers.size;
  }

  /** The process ids of the workers alive now. */
  get pids(): number[] {
    return [...this.workers].flatMap((w) => (w.child.pid === undefined ? [] : [w.child.pid]));
  }

  /** Whether a worker waits idle. */
  get anyIdle(): boolean {
    return this.idle.length > 0;
  }

  /** Starts a worker and parks it, ready for the next job. @throws what fork throws. */
  startIdle(): void {
    this.park(this.spawn());
  }

  /** Ends every worker (their running jobs settle with "the bot is stopping"); later jobs get a worker that is ended at once. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers].map((worker) => this.end(worker, 'the bot is stopping')));
  }

  /** Sends a job to an idle worker (or a new one) and resolves with its reply or its end. */
  send<K extends keyof WorkerOps>(
    op: K,
    args: WorkerOps[K]['args'],
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<WorkerReply | { exit: string }> {
    let worker: Worker;
    try {
      worker = this.idle.pop() ?? this.spawn();
    } catch (error) {
      return Promise.resolve({
        exit: `could not start a worker: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    clearTimeout(worker.idleTimer);
    worker.child.ref();
    (worker.child as unknown as { channel?: { ref(): void } }).channel?.ref();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => void this.end(worker, 'timeout'), Math.max(0, deadline - Date.now()));
      const onAbort = () => void this.end(worker, 'aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.settle = (reply) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.settle = undefined;
        if (!('exit' in reply) && this.workers.has(worker)) this.park(worker);
        resolve(reply);
      };
      const message: WorkerJob<K> = { id, op, args };
      worker.child.send(message, (error) => {
        if (error) void this.end(worker, `could not send the job: ${error.message}`);
      });
    });
  }

  /** Starts a worker process. @throws what fork throws. */
  private spawn(): Worker {
    const child = fork(WORKER_FILE, [], {
      execArgv: [`--max-old-space-size=${WORKER_HEAP_MB}`, ...WORKER_LOADER],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    // Below the bot from its first instruction: starting Node, the TypeScript loader and sharp
    // takes ~0.4 s of CPU, which the bot's own work must not wait behind (the worker lowers itself too).
    try {
      if (child.pid !== undefined) setPriority(child.pid, WORKER_NICE);
    } catch {
      // Not allowed here (some containers): the worker's own call still tries.
    }
    const worker: Worker = { child };
    this.workers.add(worker);
    child.on('message', (reply: WorkerReply) => worker.settle?.(reply));
    child.on('error', (error) => void this.end(worker, error.message));
    child.on('exit', (code, signal) => {
      this.forget(worker);
      worker.settle?.({ exit: `exited (${signal ?? code})` });
    });
    return worker;
  }

  /** Puts a worker back among the idle ones, to end after `idleMs` unused. */
  park(worker: Worker): void {
    if (this.closed) return void this.end(worker, 'closed');
    this.idle.push(worker);
    worker.idleTimer = setTimeout(() => void this.end(worker, 'idle'), this.idleMs);
    worker.idleTimer.unref();
    // An idle worker does not keep the bot's process alive.
    worker.child.unref();
    (worker.child as unknown as { channel?: { unref(): void } }).channel?.unref();
  }

  /** Kills a worker; its running job (if any) settles with `why`. */
  private async end(worker: Worker, why: string): Promise<void> {
    if (!this.workers.has(worker)) return;
    this.forget(worker);
    const exited = new Promise<void>((resolve) => {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) resolve();
      else worker.child.once('exit', () => resolve());
    });
    worker.child.kill('SIGKILL');
    worker.settle?.({ exit: why });
    await exited;
  }

  private forget(worker: Worker): void {
    this.workers.delete(worker);
    clearTimeout(worker.idleTimer);
    const index = this.idle.indexOf(worker);
    if (index >= 0) this.idle.splice(index, 1);
  }
}
