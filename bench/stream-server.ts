/**
 * A local server for the SSE benchmark, run in its own process so that its CPU time is not
 * counted against the consumers. Answers every POST /v1/chat/completions with the same
 * stream of N OpenAI-style chunks (argv[2], default 100,000), written in 64 KiB pieces.
 * Prints `PORT <n>` when listening.
 */
import { createServer } from 'node:http';

const count = Number(process.argv[2] ?? 100_000);
const words = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog. ', '\n'];
const parts: string[] = [];
for (let i = 0; i < count; i++) {
  const chunk = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'bench-model',
    choices: [{ index: 0, delta: { content: words[i % words.length] }, finish_reason: null }],
  };
  parts.push(`data: ${JSON.stringify(chunk)}\n\n`);
}
parts.push('data: [DONE]\n\n');
const payload = Buffer.from(parts.join(''));

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let offset = 0;
    const pump = () => {
      while (offset < payload.length) {
        const piece = payload.subarray(offset, offset + 65_536);
        offset += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`PORT ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('disconnect', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
