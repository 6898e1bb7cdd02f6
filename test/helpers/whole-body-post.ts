/**
 * A POST by a client that sends its whole body before it reads the answer, as Python's `requests`
 * does, over a plain TCP socket: when a server answers early and closes the connection under the
 * upload, such a client sees its write fail (EPIPE, ECONNRESET) and reports that, never the
 * answer. undici, curl and Node's `http` read an early answer while they upload, so they hide
 * that fault of a server.
 */
import { connect } from 'node:net';

/** What the client got: the answer's status and body; or the error it reported instead. */
export type WholeBodyAnswer = { status: number; text: string } | { error: string };

/**
 * POSTs `body` to `url` (HTTP/1.1, `connection: close`) in 64 KiB writes, each after the previous
 * one drained; once every byte is written, reads the answer until the server closes the connection.
 * @param chunked send it without `content-length`, in chunked transfer encoding (one chunk a write).
 */
export function postWholeBody(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  chunked = false,
): Promise<WholeBodyAnswer> {
  const { hostname, port, pathname } = new URL(url);
  const head = [
    `POST ${pathname} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'connection: close',
    chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let written = false;
    socket.on('data', (part) => received.push(part));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!written) resolve({ error: error.code ?? error.message });
    });
    socket.on('close', () => {
      const answer = Buffer.concat(received).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1];
      const text = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      resolve(written && status ? { status: Number(status), text } : { error: 'closed without an answer' });
    });
    let offset = 0;
    const write = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 64 * 1024);
        offset += piece.length;
        const framed = chunked
          ? [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]
          : [piece];
        if (!socket.write(Buffer.concat(framed))) return void socket.once('drain', write);
      }
      socket.write(chunked ? '0\r\n\r\n' : '', () => {
        written = true;
      });
    };
    socket.once('connect', () => {
      socket.write(`${head}\r\n\r\n`);
      write();
    });
  });
}
