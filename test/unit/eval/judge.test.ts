import { expect } from 'chai';
import {
  createDeterministicJudge,
  createLlmJudge,
  JUDGE_MAX_CANDIDATE_CHARS,
  parseJudgeAnswer,
  type JudgeRequest,
} from '../../../src/eval/judge.js';
import { evaluateRun } from '../../../src/eval/evaluate.js';
import { loadRubric } from '../../../src/workflow/rubric.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/index.js';
import { createLlmService, type LlmService } from '../../../src/llm/llm-service.js';
import {
  openAiAnswer,
  openAiChunks,
  sendJson,
  sendSse,
  startFakeServer,
  type FakeServer,
} from '../../fixtures/llm/fake-server.js';
import type { LlmClient, LlmRequest } from '../../../src/llm/types.js';
import type { RunRecord } from '../../../src/generated/run-record.js';

/** A provider that answers from a script, one answer per call, recording each request. */
function fakeProvider(answers: (string | Error)[]): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    requests,
    complete(request) {
      requests.push(request);
      const answer = answers[requests.length - 1] ?? new Error('no more answers');
      if (answer instanceof Error) return Promise.reject(answer);
      return Promise.resolve({
        text: answer,
        model: 'fake-judge-1',
        tokensUsed: { input: 8, output: 2, total: 10 },
      });
    },
  };
}

const request = (candidate = 'SYN, SYN-ACK, ACK'): JudgeRequest => ({
  task: 'Answer the question',
  candidate,
  expected: 'SYN, SYN-ACK, ACK',
  criteria: [
    { id: 'quality', description: 'Correct?', anchors: { '1': 'wrong', '5': 'right' } },
    { id: 'clarity', description: 'Clear?', anchors: { '1': 'muddled', '5': 'clear' } },
  ],
  signals: { succeeded: true, completeness: 1, similarity: 1 },
});

describe('eval judge', () => {
  it('reads a valid JSON answer (also inside a ```json fence)', async () => {
    const valid = '{"scores": {"quality": {"score": 5, "reason": "exact"}, "clarity": 4}}';
    const llm = fakeProvider([`\`\`\`json\n${valid}\n\`\`\``]);
    const outcome = await createLlmJudge({ llm, model: 'judge-model' }).rate(request());
    expect(outcome).to.deep.equal({
      scores: { quality: 5, clarity: 4 },
      reasons: { quality: 'exact' },
      status: 'ok',
      model: 'fake-judge-1',
      attempts: 1,
      error: null,
    });
    expect(llm.requests[0]).to.include({ tier: 2, model: 'judge-model' });
    expect(llm.requests[0]?.system).to.match(/exactly one JSON object/);
  });

  it('retries an invalid, then truncated answer and takes the third', async () => {
    const llm = fakeProvider([
      'The output looks great, 5/5!',
      '{"scores": {"quality": {"score": 4, "reason": "mostly',
      '{"scores": {"quality": 3, "clarity": 3}}',
    ]);
    const outcome = await createLlmJudge({ llm }).rate(request());
    expect(outcome).to.include({ status: 'ok', attempts: 3 });
    expect(outcome.scores).to.deep.equal({ quality: 3, clarity: 3 });
  });

  it('reports a failure after the bounded attempts, never throwing', async () => {
    const llm = fakeProvider([
      '{"scores": {"quality": 7, "clarity": 3}}',
      '{"scores": {"quality": 2.5, "clarity": 3}}',
      new Error('provider unavailable'),
      '{"scores": {"quality": 5, "clarity": 5}}',
    ]);
    const outcome = await createLlmJudge({ llm }).rate(request());
    expect(outcome).to.deep.equal({
      scores: {},
      reasons: {},
      status: 'failed',
      model: 'fake-judge-1',
      attempts: 3,
      error: 'provider unavailable',
    });
    expect(llm.requests).to.have.length(3);
  });

  it('truncates the candidate text it shows the judge', async () => {
    const llm = fakeProvider(['{"scores": {"quality": 1, "clarity": 1}}']);
    await createLlmJudge({ llm }).rate(request('x'.repeat(JUDGE_MAX_CANDIDATE_CHARS * 3)));
    const prompt = llm.requests[0]?.prompt ?? '';
    expect(prompt.length).to.be.below(JUDGE_MAX_CANDIDATE_CHARS + 4000);
    expect(prompt).to.include(`[… truncated ${JUDGE_MAX_CANDIDATE_CHARS * 2} characters]`);
  });

  it('names what is wrong with an answer', () => {
    expect(() => parseJudgeAnswer('nope', ['a'])).to.throw(/did not answer with JSON/);
    expect(() => parseJudgeAnswer('{"score": 3}', ['a'])).to.throw(/no scores object/);
    expect(() => parseJudgeAnswer('{"scores": {"b": 3}}', ['a'])).to.throw(
      /no integer 1-5 score for a/,
    );
  });

  it('deterministic judge: 1 + round(4 × overlap), 1 for a failed run', async () => {
    const judge = createDeterministicJudge();
    const half = await judge.rate({
      ...request(),
      signals: { succeeded: true, completeness: 1, similarity: 0.5 },
    });
    expect(half.scores).to.deep.equal({ quality: 3, clarity: 3 });
    const failed = await judge.rate({
      ...request(),
      signals: { succeeded: false, completeness: 1, similarity: 1 },
    });
    expect(failed.scores).to.deep.equal({ quality: 1, clarity: 1 });
    const noExpected = await judge.rate({
      ...request(),
      signals: { succeeded: true, completeness: 0.75, similarity: undefined },
    });
    expect(noExpected.scores.quality).to.equal(4);
  });

  it('a judge failure leaves the judged criterion out of the score and is reported', async () => {
    const record = {
      run_id: 'r',
      workflow_name: 'wf',
      status: 'success',
      inputs: {},
      steps: [],
      final_output: { answer: 'SYN, SYN-ACK, ACK' },
      success_rate: 100,
      total_duration_ms: 10,
      step_count: 0,
      failed_step_count: 0,
      start_time: '2026-01-01T00:00:00.000Z',
      end_time: '2026-01-01T00:00:00.010Z',
      error: null,
      adapter: 'graph',
      extra: {},
    } as unknown as RunRecord;
    const rubric = loadRubric(
      {
        criteria: [
          { id: 'sim', metric: 'expected_similarity', weight: 0.5 },
          { id: 'quality', metric: 'judge', weight: 0.5 },
        ],
      },
      'r',
    );
    const result = await evaluateRun({
      record,
      workflow: {
        name: 'wf',
        description: '',
        outputNames: ['answer'],
        optionalOutputs: [],
        document: { name: 'wf', steps: [] },
      },
      rubric,
      expected: 'SYN, SYN-ACK, ACK',
      judge: createLlmJudge({ llm: fakeProvider([]), maxAttempts: 2 }),
    });
    expect(result.judge).to.deep.equal({
      status: 'failed',
      model: null,
      attempts: 2,
      error: 'no more answers',
    });
    expect(result.criteria[1]).to.include({ applicable: false, error: 'no more answers' });
    expect(result).to.include({
      weighted_score: 100,
      grade: 'A',
      passed: true,
      evaluator: 'llm_judge',
    });
  });
});

describe('eval judge through the tier router (fake OpenAI-compatible server on 127.0.0.1)', () => {
  let server: FakeServer;
  let dir: string;
  let service: LlmService | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'judge-router-'));
    server = await startFakeServer();
  });
  afterEach(async () => {
    await service?.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('asks the AGENTIC_JUDGE_MODEL model, retries invalid and truncated answers, reads the valid one', async () => {
    const answers = [
      'Looks right to me: 5/5.',
      '{"scores": {"quality": {"score": 5, "reason": "exact"}, "clarity": ',
      '{"scores": {"quality": {"score": 5, "reason": "exact"}, "clarity": 4}}',
    ];
    server.handle((request, res, index) => {
      const body = request.body as { stream?: boolean };
      if (body.stream === true) return sendSse(res, openAiChunks(answers[index] ?? ''));
      sendJson(res, 200, openAiAnswer(answers[index] ?? '', { model: 'judge-1' }));
    });
    const config = loadConfig(
      { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-test-judge' },
      dir,
    );
    service = createLlmService(config.llm);
    const outcome = await createLlmJudge({ llm: service.router, model: 'openai:judge-1' }).rate(
      request(),
    );
    expect(outcome).to.include({ status: 'ok', attempts: 3 });
    expect(outcome.scores).to.deep.equal({ quality: 5, clarity: 4 });
    expect(outcome.model).to.match(/judge-1/);
    expect(server.requests).to.have.length(3);
    for (const sent of server.requests) {
      expect(sent.path).to.equal('/v1/chat/completions');
      expect((sent.body as { model: string }).model).to.equal('judge-1');
    }
  });

  it('reports a provider failure as a failed judgement, never a crash', async () => {
    server.handle((_request, res) => sendJson(res, 401, { error: { message: 'bad key' } }));
    const config = loadConfig(
      { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-test-judge' },
      dir,
    );
    service = createLlmService(config.llm);
    const outcome = await createLlmJudge({ llm: service.router, model: 'openai:judge-1' }).rate(
      request(),
    );
    expect(outcome.status).to.equal('failed');
    expect(outcome.error).to.be.a('string').and.not.include('sk-test-judge');
  });
});
