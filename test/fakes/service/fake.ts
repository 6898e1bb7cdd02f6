/**
 * {@link FakeService}: the facade tests hold. Starting and closing the server, scripting
 * (`enqueue`, `setModelBehaviour`, `setChatReply`, `setCompletionReply`, `setModels`, `reset`) and inspection
 * (`requests`, `events`, `chatRequests`, `lastRequest`, `openStreams`, `images`); the serving
 * itself is in server.ts and the endpoints' modules.
 */
import type { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnLoopback } from '../listen.ts';
import { serve } from './server.ts';
import { ServiceState } from './state.ts';
import type {
  Behaviour,
  ChatReply,
  ChatRequestBody,
  CompletionReply,
  FakeImageModel,
  FakeModel,
  FakeRoute,
  FakeServiceEvents,
  FakeServiceOptions,
  RecordedRequest,
  StreamUsage,
} from './types.ts';

/** A running fake of the generation service (see test/fakes/service.ts). */
export class FakeService {
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  readonly events: EventEmitter<FakeServiceEvents>;
  readonly apiKey: string;
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  readonly baseUrl: string;
  /** Stored images of `/v1/images/view/<id>`. */
  readonly images: Map<string, Buffer>;

  private readonly server: Server;
  private readonly state: ServiceState;
  /** The server's open sockets (read by a test of the client's cancellation, through a cast). */
  private readonly sockets: Set<Socket>;

  private constructor(server: Server, baseUrl: string, opts: FakeServiceOptions) {
    this.server = server;
    this.state = new ServiceState(baseUrl, opts);
    this.requests = this.state.requests;
    this.events = this.state.events;
    this.apiKey = this.state.apiKey;
    this.baseUrl = baseUrl;
    this.images = this.state.images;
    this.sockets = this.state.sockets;
  }

  /** Starts a fake on 127.0.0.1 with a random port. */
  static async start(opts: FakeServiceOptions = {}): Promise<FakeService> {
    const { server, port } = await listenOnLoopback();
    const fake = new FakeService(server, `http://127.0.0.1:${port}`, opts);
    serve(server, fake.state);
    return fake;
  }

  /** Scripts the next request of `route` (one-shot, FIFO per route). */
  enqueue(route: FakeRoute, behaviour: Behaviour): void {
    const q = this.state.queues.get(route) ?? [];
    q.push(behaviour);
    this.state.queues.set(route, q);
  }

  /**
   * Scripts every request that names `model` (a chat or text completion's `model`, an image
   * generation's `user_selected_model`) until changed: e.g. `{ status: 503 }` for a model that is
   * down, `{ hang: true }` for one that never answers, `{ stream: { dropAfterChunks: 3 } }` for
   * one whose answers break off. Wins over the route's queue, which such requests leave as it is.
   * `undefined` removes it; `reset` removes them all.
   */
  setModelBehaviour(model: string, behaviour: Behaviour | undefined): void {
    if (behaviour) this.state.byModel.set(model, behaviour);
    else this.state.byModel.delete(model);
  }

  /** Scripted behaviours not used yet. */
  pending(route: FakeRoute): number {
    return this.state.queues.get(route)?.length ?? 0;
  }

  /** Sets the chat reply (a string, or a function of the validated body); `undefined` restores the default (`Echo: <last user text>`, JSON in JSON mode). */
  setChatReply(reply: ChatReply | string | undefined): void {
    this.state.chatReply = typeof reply === 'string' ? () => reply : reply;
  }

  /** Sets the text-completion reply; `undefined` restores the default (`Echo: <prompt>`). */
  setCompletionReply(reply: CompletionReply | string | undefined): void {
    this.state.completionReply = typeof reply === 'string' ? () => reply : reply;
  }

  /** Ends every streamed chat reply with a usage chunk (`undefined`: none, the default; `reset` restores it). */
  setStreamUsage(usage: StreamUsage | undefined): void {
    this.state.streamUsage = usage;
  }

  /** Replaces the model lists at run time. */
  setModels(models: FakeModel[], imageModels?: FakeImageModel[]): void {
    this.state.models = models.map((m) => ({ ...m }));
    if (imageModels) this.state.imageModels = imageModels.map((m) => ({ ...m }));
  }

  /** Bodies of the POST /v1/chat/completions requests (also refused ones), oldest first. */
  chatRequests(): ChatRequestBody[] {
    return this.requests.filter((r) => r.route === 'chat' && r.method === 'POST').map((r) => r.body as ChatRequestBody);
  }

  /** The last request of a route (any route when omitted). */
  lastRequest(route?: FakeRoute): RecordedRequest | undefined {
    for (let i = this.requests.length - 1; i >= 0; i--) {
      const r = this.requests[i]!;
      if (route === undefined || r.route === route) return r;
    }
    return undefined;
  }

  /** Streamed responses whose connection is still open (a client that left has closed its own). */
  get openStreams(): number {
    return this.state.open;
  }

  /** Forgets recorded requests, scripted behaviours and reply overrides. */
  reset(): void {
    this.requests.length = 0;
    this.state.queues.clear();
    this.state.byModel.clear();
    this.state.chatReply = undefined;
    this.state.completionReply = undefined;
    this.state.streamUsage = undefined;
  }

  /** Stops the server and destroys every open socket (keep-alive, hanging, streaming). */
  async close(): Promise<void> {
    const state = this.state;
    if (state.closed) return;
    state.closed = true;
    for (const t of state.timers) clearTimeout(t);
    state.timers.clear();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of state.sockets) s.destroy();
    await done;
    this.events.removeAllListeners();
  }
}
