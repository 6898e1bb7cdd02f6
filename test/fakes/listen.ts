/**
 * The HTTP server every fake listens with: 127.0.0.1, a random port, keep-alive like a front
 * end's, and a backlog like one's (Node's default 511 drops SYNs of a 1,000-request burst,
 * which clients retry only after 1–3 s).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Creates a server and binds it on 127.0.0.1 with a random port (requests are the caller's to handle).
 * @throws when the port cannot be bound.
 */
export async function listenOnLoopback(): Promise<{ server: Server; port: number }> {
  const server = createServer({ keepAliveTimeout: 5_000 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
