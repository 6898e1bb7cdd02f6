/**
 * The sweep on Slack (core/sweep.ts): catch-up's reading (catch-up.ts) every `SWEEP_MINUTES`
 * over the conversations active lately, and, when Slack has delivered no event for
 * `EVENT_SILENCE_MINUTES` while the sweep found mentions or DMs it never delivered: in Socket
 * Mode the socket is replaced — @slack/socket-mode's `SocketModeClient.disconnect()` then
 * `start()` (a new `apps.connections.open` URL, a new WebSocket; catch-up runs after its
 * `connected`); in HTTP mode (Events API) there is no connection of the bot's to re-establish:
 * the deafness is only reported (/healthz).
 */
import type { App } from '@slack/bolt';
import { Sweep } from '../../core/sweep.ts';
import { slackCatchUpSource, type WorkspaceClients } from './catch-up.ts';
import type { SlackEventDeps } from './events.ts';

/** The Socket Mode client of a Bolt app (Bolt 5 keeps it as `receiver.client`), when it runs in Socket Mode. */
interface SocketClient {
  disconnect(): Promise<void>;
  start(): Promise<unknown>;
  websocket?: { isActive(): boolean };
}

/** The app's Socket Mode client, or undefined in HTTP mode. */
function socketClientOf(app: App): SocketClient | undefined {
  const socket = (app as unknown as { receiver?: { client?: Partial<SocketClient> } }).receiver?.client;
  return typeof socket?.disconnect === 'function' && typeof socket.start === 'function'
    ? (socket as SocketClient)
    : undefined;
}

/** What the Slack sweep needs from the adapter. */
export interface SlackSweepDeps extends SlackEventDeps {
  /** When Slack last delivered an event (a verified request or a Socket Mode envelope), in ms since 1970. */
  lastEventAt(): number;
}

/**
 * Replaces the Socket Mode connection (see the file's comment). Never rejects: a failure is
 * logged (the next sweep tries again after another silence).
 */
async function reconnectSocket(socket: SocketClient, deps: SlackSweepDeps): Promise<void> {
  try {
    await socket.disconnect();
    await socket.start();
  } catch (error) {
    deps.log.warn({ err: error }, 'slack socket could not reconnect');
  }
}

/** The Slack sweep of an app (started by the adapter once it listens or is connected). */
export function slackSweep(app: App, workspaces: WorkspaceClients, deps: SlackSweepDeps) {
  const socket = socketClientOf(app);
  return new Sweep(
    deps.core,
    slackCatchUpSource(workspaces, deps),
    {
      lastEventAt: deps.lastEventAt,
      // Every event Bolt runs its middleware for is a user's (Socket Mode's hello is not one).
      lastDeliveryAt: deps.lastEventAt,
      ...(socket
        ? { reconnect: () => reconnectSocket(socket, deps), looksUp: () => socket.websocket?.isActive() === true }
        : {}),
    },
    deps.log.child({ sweep: 'slack' }),
  );
}
