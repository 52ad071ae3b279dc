/**
 * A paced HTTP client (the service's: each body chunk in a turn of its slicer) hands on the
 * chunks of an answer only once their turn comes, in order, and a stream still ends whole.
 */
import { expect } from 'chai';
import { createHttpClient, type HttpClient } from '../../../src/llm/http.js';
import { createOpenAiCompatibleProvider } from '../../../src/llm/providers/openai.js';
import type { Provider } from '../../../src/llm/types.js';
import { Inbox } from '../../http/events-fixtures.js';
import {
  openAiChunks,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';

describe('HTTP client pacing (fake server on 127.0.0.1)', () => {
  let server: FakeServer;
  let http: HttpClient;
  afterEach(async () => {
    await http.close();
    await server.close();
  });

  /**
   * An OpenAI-compatible provider whose client asks `turns` for each chunk's turn, against a
   * server answering `text` streamed in `parts` deltas, sent in one piece.
   */
  async function pacedProvider(
    text: string,
    parts: number,
  ): Promise<{ provider: Provider; turns: Inbox<() => void> }> {
    const turns = new Inbox<() => void>();
    http = createHttpClient({
      provider: 'openai',
      pace: () => new Promise<void>((resolve) => turns.push(resolve)),
    });
    server = await startFakeServer((_req, res) =>
      sendSse(res, openAiChunks(text, { parts }), { pieceBytes: 4096 }),
    );
    const provider = createOpenAiCompatibleProvider({
      name: 'openai',
      http,
      chatUrl: () => `${server.url}/v1/chat/completions`,
      modelsUrl: `${server.url}/v1/models`,
      headers: {},
    });
    return { provider, turns };
  }

  it('hands each body chunk on only once its turn comes, in order', async () => {
    const { provider, turns } = await pacedProvider('one two three', 3);
    const deltas: string[] = [];
    const answer = provider.chat({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      signal: new AbortController().signal,
      onDelta: (delta) => deltas.push(delta),
    });
    // The whole answer came in one piece: it waits for its turn, nothing handed on yet.
    await turns.until((asked) => asked.length === 1, 'a turn asked for the first chunk');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(deltas).to.deep.equal([]);
    expect(turns.items).to.have.length(1);
    // Each chunk asks for its own turn; the stream goes on as the turns come.
    let released = 0;
    const releaseAll = setInterval(() => {
      while (released < turns.items.length) turns.items[released++]?.();
    }, 1);
    try {
      const result = await answer;
      expect(result.text).to.equal('one two three');
      expect(deltas.join('')).to.equal('one two three');
      expect(deltas.length).to.be.greaterThan(1);
    } finally {
      clearInterval(releaseAll);
    }
  });

  it('hands nothing on once the call is cancelled while a chunk waits for its turn', async () => {
    const { provider, turns } = await pacedProvider('never shown', 2);
    const controller = new AbortController();
    const deltas: string[] = [];
    const answer = provider.chat({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      signal: controller.signal,
      onDelta: (delta) => deltas.push(delta),
    });
    const [first] = await turns.until((asked) => asked.length === 1, 'a turn asked');
    const reason = new Error('run cancelled');
    controller.abort(reason);
    first?.();
    let rejected: unknown;
    try {
      await answer;
    } catch (error) {
      rejected = error;
    }
    expect(rejected).to.equal(reason);
    expect(deltas).to.deep.equal([]);
  });
});
