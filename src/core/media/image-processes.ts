/**
 * The worker processes of a pool (image-pool.ts): started on demand (image-worker.ts, at the
 * pool's nice level), handed one job at a time over IPC, parked when idle (ended after
 * `idleMs` unused, and never keeping the bot's process alive), killed (SIGKILL) at a job's
 * deadline, on its abort, past its memory cap, or when the pool closes.
 *
 * A worker's whole memory is bounded, not only its JavaScript heap (pdf.js keeps a decoded
 * stream in typed arrays, sharp its pixels in native memory, both outside the heap):
 * - by the kernel: the worker is started through `/bin/sh -c 'ulimit -d …; exec node …'`, so
 *   that RLIMIT_DATA (setrlimit(2): the process's private writable memory, which is what every
 *   allocation of the heap, of typed arrays and of malloc takes) is the cap; an allocation past
 *   it fails, and the worker ends. The limit is the cap plus what this Node reserves before
 *   running anything ({@link runtimeReserveKiB}: V8's code range and cages, ~90 MiB on Node 20
 *   but ~600 MiB on Node 24, which does not start at all under a 512 MiB limit);
 * - and by the pool: while a job runs, the worker's resident size (`/proc/<pid>/statm`) is read
 *   every {@link MEMORY_POLL_MS} ms, and a worker past the cap is killed.
 * A job whose worker ended either way, or crashed with its memory near the cap, settles as
 * `memory`. Both need Linux; elsewhere the worker runs without the kernel's cap.
 */
import { type ChildProcess, execFile, type SpawnOptions, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerJob, WorkerOps, WorkerReply } from './image-worker.ts';
import { MEASURE_RESERVE_ARG } from './images.ts';

/**
 * The worker's entry file beside this one: built JavaScript where the bot runs built (`npm start`
 * runs dist/, `npm run build`), else the TypeScript source run by tsx (tests import src/).
 */
const BUILT = import.meta.url.endsWith('.js');
const WORKER_FILE = fileURLToPath(new URL(BUILT ? './image-worker.js' : './image-worker.ts', import.meta.url));
/** Node options of the worker beyond its heap: tsx's loader for the source, none for the build. */
const WORKER_LOADER = BUILT ? [] : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
/**
 * The worker's environment: the bot's, and for the source, esbuild without its worker thread.
 * tsx turns a file it has not cached yet (e.g. pdf-text.ts, imported at a worker's first PDF)
 * into JavaScript with esbuild's synchronous API, which by default starts a worker thread: a
 * second V8 isolate, whose reservations (~0.55 GiB on Node 24) come on top of the measured
 * reserve and end the worker at its cap ("Failed to reserve virtual memory for CodeRange").
 * `ESBUILD_WORKER_THREADS=0` makes esbuild run its own process for that call instead.
 */
const workerEnv = (): NodeJS.ProcessEnv => (BUILT ? process.env : { ...process.env, ESBUILD_WORKER_THREADS: '0' });
/**
 * The worker's JavaScript heap, in MB, at most: a heap past it ends the worker. The whole
 * process is held to the pool's `memoryMb` besides (this file's comment).
 */
const WORKER_HEAP_MB = 256;

/** How often a running job's worker has its resident size read, in ms. */
export const MEMORY_POLL_MS = 50;

/** A worker that ends while its private memory is past this share of the cap is taken to have run out of it. */
const NEAR_CAP = 0.5;

/** How much of a worker's stderr is kept, in characters: enough for V8's last fatal line. */
const STDERR_TAIL_CHARS = 2048;

/**
 * V8's words as a process dies for want of memory: "Fatal process out of memory: …" (an internal
 * allocation refused at the kernel's cap; Node 24 then ends by SIGTRAP, before the pool's next
 * read of its memory), "JavaScript heap out of memory" (the heap's own cap).
 */
const FATAL_OUT_OF_MEMORY = /out of memory/i;

/** The page size of `/proc/<pid>/statm`'s counts, in bytes (4 KiB on the platforms the bot runs on). */
const PAGE_BYTES = 4096;

/**
 * What a fresh Node of this binary holds as private memory before running anything, in KiB, when
 * it could not be measured (yet): enough for Node 20 to 24 to start under the kernel's cap.
 */
const FALLBACK_RESERVE_KIB = 2 * 1024 * 1024;

/** The measured reserve ({@link runtimeReserveKiB}), once known. */
let measuredReserveKiB: number | undefined;
let measuring: Promise<void> | undefined;

/**
 * What a worker holds as private memory (VmData) once loaded, before any job, in KiB: mostly V8's
 * reservations (its code range and cages, one set per isolate: tsx's loader thread, where the
 * source runs, is a second), which RLIMIT_DATA counts though little of it is ever touched.
 * Measured once per process, in the background (the worker's file run with
 * {@link MEASURE_RESERVE_ARG}, which prints its own `/proc/self/status`); {@link FALLBACK_RESERVE_KIB}
 * until then or where it cannot be read.
 */
export function runtimeReserveKiB(): number {
  void measureReserve();
  return measuredReserveKiB ?? FALLBACK_RESERVE_KIB;
}

/** Starts measuring {@link runtimeReserveKiB} once; resolves when it is known (or could not be). */
function measureReserve(): Promise<void> {
  measuring ??= new Promise<void>((resolve) => {
    execFile(
      process.execPath,
      [...WORKER_LOADER, WORKER_FILE, MEASURE_RESERVE_ARG],
      { timeout: 20_000, maxBuffer: 1024, env: workerEnv() },
      (error, stdout) => {
        const kib = Number(stdout);
        if (!error && Number.isSafeInteger(kib) && kib > 0) measuredReserveKiB = kib;
        resolve();
      },
    );
  });
  return measuring;
}

/** How a worker's job ended without a reply: `timeout`, `aborted`, `memory`, or a phrase (a crash). */
export type WorkerExit = { exit: string };

/** A worker process and the job it runs. */
interface Worker {
  child: ChildProcess;
  /** Settles the running job with the worker's reply, or with its end. */
  settle?: (reply: WorkerReply | WorkerExit) => void;
  idleTimer?: NodeJS.Timeout;
  /** Reads the worker's memory while a job runs. */
  memoryTimer?: NodeJS.Timeout;
  /** The largest private (data) size seen while its job ran, in bytes. */
  peakData?: number;
  /** The end of what the worker wrote to stderr (at most {@link STDERR_TAIL_CHARS}), passed on to the bot's stderr. */
  stderrTail: string;
}

/** Options of {@link WorkerProcesses}. */
export interface WorkerProcessOptions {
  /** How long an unused worker lives, in ms. */
  idleMs: number;
  /** The workers' scheduling priority (nice, 0–19): above the bot's 0. */
  nice: number;
  /** The most memory one worker may hold, in MiB (resident, and private with the kernel's cap). */
  memoryMb: number;
}

/** A process's resident and private (data + stack) sizes in bytes, from `/proc/<pid>/statm`; undefined where there is none. */
export function processMemory(pid: number): { resident: number; data: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/statm`, 'latin1').split(' ');
    return { resident: Number(fields[1]) * PAGE_BYTES, data: Number(fields[5]) * PAGE_BYTES };
  } catch {
    return undefined;
  }
}

/** The workers of one pool: at most as many as the pool's slots, since each runs one job. */
export class WorkerProcesses {
  private readonly idle: Worker[] = [];
  private readonly workers = new Set<Worker>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerProcessOptions) {
    // Measured before the first worker is needed (workers start on demand).
    if (process.platform === 'linux') void measureReserve();
  }

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
    // Not before the runtime's reserve is known (measured since the pool began): the job will start one.
    if (process.platform === 'linux' && measuredReserveKiB === undefined) return;
    this.park(this.spawn());
  }

  /** Ends every worker (their running jobs settle with "the bot is stopping"); later jobs get a worker that is ended at once. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers].map((worker) => this.end(worker, 'the bot is stopping')));
  }

  /**
   * Sends a job to an idle worker (or a new one) and resolves with its reply or its end. The first
   * worker of the process waits for {@link runtimeReserveKiB}'s measurement (once, well under a
   * second), so that its kernel cap is the cap above what the runtime itself reserves.
   */
  async send<K extends keyof WorkerOps>(
    op: K,
    args: WorkerOps[K]['args'],
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<WorkerReply | WorkerExit> {
    if (process.platform === 'linux' && measuredReserveKiB === undefined && this.idle.length === 0) {
      await measureReserve();
      if (signal?.aborted) return { exit: 'aborted' };
      if (Date.now() >= deadline) return { exit: 'timeout' };
    }
    return this.sendNow(op, args, deadline, signal);
  }

  private sendNow<K extends keyof WorkerOps>(
    op: K,
    args: WorkerOps[K]['args'],
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<WorkerReply | WorkerExit> {
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
      this.watchMemory(worker);
      worker.settle = (reply) => {
        clearTimeout(timer);
        clearInterval(worker.memoryTimer);
        signal?.removeEventListener('abort', onAbort);
        worker.settle = undefined;
        if (!('exit' in reply) && this.workers.has(worker)) {
          // A worker refused memory at its cap is not trusted with another job.
          if (!reply.ok && reply.error.memory) void this.end(worker, 'memory');
          else this.park(worker);
        }
        resolve(reply);
      };
      const message: WorkerJob<K> = { id, op, args };
      worker.child.send(message, (error) => {
        if (error) void this.end(worker, `could not send the job: ${error.message}`);
      });
    });
  }

  /** Starts a worker process (through `sh`, which sets its memory cap, where there is one). @throws what spawn throws. */
  private spawn(): Worker {
    const node = [
      `--max-old-space-size=${Math.min(WORKER_HEAP_MB, this.options.memoryMb)}`,
      ...WORKER_LOADER,
      WORKER_FILE,
      String(this.options.nice),
    ];
    // stderr is piped to keep its end (FATAL_OUT_OF_MEMORY), and passed on as it comes.
    const stdio: SpawnOptions['stdio'] = ['ignore', 'inherit', 'pipe', 'ipc'];
    const io: SpawnOptions = { serialization: 'advanced', stdio, env: workerEnv() };
    // `ulimit -d` takes KiB (POSIX sh); `exec` keeps the pid, so the pid below is Node's. The
    // limit is the cap above what the runtime reserves before running anything.
    const child =
      process.platform === 'linux'
        ? spawn(
            '/bin/sh',
            [
              '-c',
              'ulimit -d "$1" 2>/dev/null; shift; exec "$@"',
              'sh',
              String(this.options.memoryMb * 1024 + runtimeReserveKiB()),
              process.execPath,
              ...node,
            ],
            io,
          )
        : spawn(process.execPath, node, io);
    // Below the bot from its first instruction: starting Node, the TypeScript loader and sharp
    // takes ~0.4 s of CPU, which the bot's own work must not wait behind (the worker lowers itself too).
    try {
      if (child.pid !== undefined) setPriority(child.pid, this.options.nice);
    } catch {
      // Not allowed here (some containers): the worker's own call still tries.
    }
    const worker: Worker = { child, stderrTail: '' };
    this.workers.add(worker);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      process.stderr.write(chunk);
      worker.stderrTail = (worker.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    child.on('message', (reply: WorkerReply) => worker.settle?.(reply));
    child.on('error', (error) => void this.end(worker, error.message));
    // 'close', not 'exit': stderr's last words (a fatal out-of-memory line) are read by then.
    child.on('close', (code, signal) => {
      this.forget(worker);
      const used = (worker.peakData ?? 0) - runtimeReserveKiB() * 1024;
      const ranOut =
        used >= this.options.memoryMb * 1024 * 1024 * NEAR_CAP || FATAL_OUT_OF_MEMORY.test(worker.stderrTail);
      worker.settle?.({ exit: ranOut ? 'memory' : `exited (${signal ?? code})` });
    });
    return worker;
  }

  /**
   * Reads a running job's worker's memory every {@link MEMORY_POLL_MS} ms: kills it (`memory`)
   * once its resident size passes the cap, and keeps its largest private size (to tell a worker
   * that ran out of memory from one that crashed).
   */
  private watchMemory(worker: Worker): void {
    const pid = worker.child.pid;
    if (pid === undefined) return;
    const cap = this.options.memoryMb * 1024 * 1024;
    worker.peakData = 0;
    worker.memoryTimer = setInterval(() => {
      const memory = processMemory(pid);
      if (!memory) return clearInterval(worker.memoryTimer);
      worker.peakData = Math.max(worker.peakData ?? 0, memory.data);
      if (memory.resident > cap) void this.end(worker, 'memory');
    }, MEMORY_POLL_MS);
    worker.memoryTimer.unref();
  }

  /** Puts a worker back among the idle ones, to end after `idleMs` unused. */
  park(worker: Worker): void {
    if (this.closed) return void this.end(worker, 'closed');
    this.idle.push(worker);
    worker.idleTimer = setTimeout(() => void this.end(worker, 'idle'), this.options.idleMs);
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
    clearInterval(worker.memoryTimer);
    const index = this.idle.indexOf(worker);
    if (index >= 0) this.idle.splice(index, 1);
  }
}
