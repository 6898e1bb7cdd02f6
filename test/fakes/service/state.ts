/**
 * What one fake service holds, shared by its modules: the recorded requests and events, the
 * scripted behaviours and replies, the model lists, the stored images, and its open sockets,
 * timers and streams; with its sleep (which never ends once the fake is closed) and the
 * seeded PRNG of each stream.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { DEFAULT_API_KEY, DEFAULT_IMAGE_MODELS, DEFAULT_MODELS } from './constants.ts';
import type {
  Behaviour,
  ChatReply,
  CompletionReply,
  FakeImageModel,
  FakeModel,
  FakeRoute,
  FakeServiceEvents,
  FakeServiceOptions,
  RecordedRequest,
  StreamUsage,
} from './types.ts';
import { prng } from './util.ts';

/** The options the fake reads while serving, defaults filled in. */
export type ResolvedOptions = Required<
  Pick<
    FakeServiceOptions,
    'chunkDelayMs' | 'imageModelsEnvelope' | 'allowDisableSafetyChecker' | 'seed' | 'reportSeed' | 'noisyImages'
  >
>;

/** The state of one fake service. */
export class ServiceState {
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  readonly events = new EventEmitter<FakeServiceEvents>();
  readonly apiKey: string;
  /** Stored images of `/v1/images/view/<id>`. */
  readonly images = new Map<string, Buffer>();
  readonly options: ResolvedOptions;
  readonly queues = new Map<FakeRoute, Behaviour[]>();
  /** Behaviours played for every request naming a model (`setModelBehaviour`), by model. */
  readonly byModel = new Map<string, Behaviour>();
  readonly sockets = new Set<Socket>();
  readonly timers = new Set<NodeJS.Timeout>();
  models: FakeModel[];
  imageModels: FakeImageModel[];
  chatReply: ChatReply | undefined;
  completionReply: CompletionReply | undefined;
  /** The `usage` a streamed chat reply ends with (`setStreamUsage`); none by default. */
  streamUsage: StreamUsage | undefined;
  /** Streamed responses whose connection is still open. */
  open = 0;
  streamCount = 0;
  closed = false;

  constructor(
    /** `http://127.0.0.1:PORT` (no `/v1`). */
    readonly baseUrl: string,
    opts: FakeServiceOptions,
  ) {
    this.apiKey = opts.apiKey ?? DEFAULT_API_KEY;
    this.options = {
      chunkDelayMs: opts.chunkDelayMs ?? 0,
      imageModelsEnvelope: opts.imageModelsEnvelope ?? false,
      allowDisableSafetyChecker: opts.allowDisableSafetyChecker ?? false,
      seed: opts.seed ?? 1,
      reportSeed: opts.reportSeed ?? false,
      noisyImages: opts.noisyImages ?? false,
    };
    this.models = (opts.models ?? DEFAULT_MODELS).map((m) => ({ ...m }));
    this.imageModels = (opts.imageModels ?? DEFAULT_IMAGE_MODELS).map((m) => ({ ...m }));
  }

  /** Resolves after `ms` (an event-loop turn when 0); never once the fake is closed. */
  sleep(ms: number): Promise<void> {
    if (this.closed) return new Promise(() => undefined);
    if (ms <= 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  /** The PRNG of the next stream (seeded by the options' seed and the stream's number). */
  nextRandom(): () => number {
    this.streamCount += 1;
    return prng(this.options.seed * 7919 + this.streamCount);
  }
}
