/**
 * The clients of `npm run bench:llm`'s streaming phase, in their own process so the event-loop
 * delay measured in the bench process is the service's alone (as the fake provider has its
 * own process too). Asked over IPC `{url, count, prefix}`, it starts `count` runs of
 * `stream_step` (POST /api/run), subscribes to each over WebSocket, tells the parent `{open}`
 * once every socket is open, and answers `{results}` once every run's workflow_end arrived.
 */
import { WebSocket } from 'ws';

interface Job {
  url: string;
  count: number;
  prefix: string;
}

export interface ClientResult {
  status: string;
  complete: boolean;
  events: number;
  deltas: number;
}

async function runBatch(job: Job): Promise<ClientResult[]> {
  let open = 0;
  return Promise.all(
    Array.from({ length: job.count }, async (_, n) => {
      const runId = `${job.prefix}-${n}`;
      const response = await fetch(`${job.url}/api/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'stream_step', input_data: { n }, run_id: runId }),
      });
      if (response.status !== 200) throw new Error(`POST /api/run: ${response.status}`);
      const socket = new WebSocket(`${job.url.replace('http', 'ws')}/ws/execution/${runId}`);
      const seqs: number[] = [];
      let deltas = 0;
      const ended = new Promise<string>((resolve, reject) => {
        socket.on('message', (data: Buffer) => {
          const event = JSON.parse(data.toString()) as {
            type: string;
            seq: number;
            status?: string;
          };
          seqs.push(event.seq);
          if (event.type === 'token_delta') deltas++;
          if (event.type === 'workflow_end') resolve(event.status ?? '');
        });
        socket.on('error', reject);
        socket.on('close', (code) =>
          reject(new Error(`socket closed ${code} before workflow_end`)),
        );
      });
      socket.once('open', () => {
        if (++open === job.count) process.send?.({ open: true });
      });
      const status = await ended;
      socket.close();
      return { status, complete: seqs.every((seq, i) => seq === i), events: seqs.length, deltas };
    }),
  );
}

process.on('message', (job: Job) => {
  runBatch(job).then(
    (results) => process.send?.({ results }),
    (error: unknown) => process.send?.({ error: String(error) }),
  );
});
