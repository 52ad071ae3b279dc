/**
 * The fake OpenAI-compatible server of `npm run bench:llm`, in its own process so that its
 * work does not count against the service's event loop. Non-streamed requests get one small
 * completion at once; streamed ones get BENCH_LLM_CHUNKS chunks, one every
 * BENCH_LLM_CHUNK_MS ms. Prints its URL on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const CHUNKS = Number(process.env.BENCH_LLM_CHUNKS ?? 40);
const CHUNK_MS = Number(process.env.BENCH_LLM_CHUNK_MS ?? 25);
const ANSWER = JSON.stringify({
  id: 'c',
  object: 'chat.completion',
  model: 'bench',
  choices: [
    { index: 0, message: { role: 'assistant', content: '{"result":"ok"}' }, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const chunk = (content: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ model: 'bench', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'bench' }], models: [{ name: 'bench' }] }));
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const pieces = [
      '{"res',
      'ult":',
      ' "tok',
      'en ',
      ...Array.from({ length: CHUNKS }, (_, i) => `t${i} `),
      '"}',
    ];
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      const piece = pieces[sent++];
      if (piece === undefined) {
        clearInterval(timer);
        res.write(chunk('', 'stop'));
        res.end(
          `data: ${JSON.stringify({ model: 'bench', choices: [], usage: { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS } })}\n\ndata: [DONE]\n\n`,
        );
        return;
      }
      res.write(chunk(piece));
    }, CHUNK_MS);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('disconnect', () => process.exit(0));
