import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { WorkflowEvent } from '../../src/generated/events.js';
import type { RunRecord } from '../../src/generated/run-record.js';
import { createSilentLogger } from '../../src/log.js';
import { createScaleKeys } from '../../src/scale/keys.js';
import { openRedis } from '../../src/scale/redis-connection.js';
import { createOrderedSender, type OrderedSender } from '../../src/scale/ordered-sender.js';
import { attachRunPublisher } from '../../src/scale/run-publisher.js';
import { decodeStreamEntry } from '../../src/scale/stream-entry.js';
import { startTestRedis, type TestRedis } from './redis-server.js';

/** The two listener registries of a runtime, driven by hand. */
function fakeRuntime() {
  const events = new Set<(event: WorkflowEvent) => void>();
  const records = new Set<(record: RunRecord, filename: string) => void>();
  return {
    subscribe(listener: (event: WorkflowEvent) => void) {
      events.add(listener);
      return () => events.delete(listener);
    },
    onRecord(listener: (record: RunRecord, filename: string) => void) {
      records.add(listener);
      return () => records.delete(listener);
    },
    emit(event: WorkflowEvent) {
      for (const listener of events) listener(event);
    },
    record(record: RunRecord, filename: string) {
      for (const listener of records) listener(record, filename);
    },
    listeners: () => events.size + records.size,
  };
}

const at = '2026-01-01T00:00:00.000Z';
const start = (runId: string, seq = 0): WorkflowEvent =>
  ({
    type: 'workflow_start',
    run_id: runId,
    seq,
    timestamp: at,
    workflow_name: 'w',
    inputs: {},
  }) as unknown as WorkflowEvent;
const end = (runId: string, seq: number): WorkflowEvent =>
  ({
    type: 'workflow_end',
    run_id: runId,
    seq,
    timestamp: at,
    status: 'completed',
  }) as unknown as WorkflowEvent;
const record = (runId: string, status: string, evaluation = false): RunRecord =>
  ({
    run_id: runId,
    status,
    extra: evaluation ? { evaluation: { enabled: true } } : {},
  }) as unknown as RunRecord;

async function streamOf(redis: Redis, key: string) {
  const entries = await redis.xrange(key, '-', '+');
  return entries.map(([id, fields]) => decodeStreamEntry(id, fields));
}

describe('attachRunPublisher', () => {
  let server: TestRedis;
  let redis: Redis;
  const keys = createScaleKeys('t');

  before(async () => {
    server = await startTestRedis();
    redis = openRedis({ url: server.url, logger: createSilentLogger(), name: 'test' });
  });
  after(async () => {
    redis.disconnect();
    await server.stop();
  });
  let sender: OrderedSender;
  beforeEach(async () => {
    await redis.flushall();
    sender = createOrderedSender(redis, createSilentLogger());
  });
  afterEach(() => sender.close());

  it('appends events in order, marks the last, and sets the after-run TTL at the end', async () => {
    const runtime = fakeRuntime();
    const detach = attachRunPublisher(runtime, {
      redis,
      keys,
      streamTtlMs: 60_000,
      instanceId: 'a',
      logger: createSilentLogger(),
      sender,
    });
    runtime.emit(start('r1'));
    await sender.drained();
    const activeTtl = await redis.pttl(keys.runEvents('r1'));
    expect(activeTtl).to.be.greaterThan(60_000);
    runtime.emit(end('r1', 1));
    await sender.drained();
    const entries = await streamOf(redis, keys.runEvents('r1'));
    expect(entries.map((e) => [e?.event.seq, e?.event.type, e?.last])).to.deep.equal([
      [0, 'workflow_start', false],
      [1, 'workflow_end', true],
    ]);
    const ttl = await redis.pttl(keys.runEvents('r1'));
    expect(ttl).to.be.within(1, 60_000);
    detach();
    expect(runtime.listeners()).to.equal(0);
  });

  it('keeps the stream open after workflow_end when the running record asks for evaluation', async () => {
    const runtime = fakeRuntime();
    const detach = attachRunPublisher(runtime, {
      redis,
      keys,
      streamTtlMs: 60_000,
      instanceId: 'a',
      logger: createSilentLogger(),
      sender,
    });
    runtime.record(record('r2', 'running', true), 'x_r2.json');
    runtime.emit(start('r2'));
    runtime.emit(end('r2', 1));
    await sender.drained();
    const entries = await streamOf(redis, keys.runEvents('r2'));
    expect(entries.map((e) => e?.last)).to.deep.equal([false, false]);
    const notes = await redis.xrange(keys.records, '-', '+');
    expect(notes.map(([, fields]) => fields)).to.deep.equal([
      ['i', 'a', 'f', 'x_r2.json', 'r', 'r2', 's', 'running'],
    ]);
    detach();
  });

  it('caps a stream at 500 events and starts over when a finished run id is reused', async () => {
    const runtime = fakeRuntime();
    const detach = attachRunPublisher(runtime, {
      redis,
      keys,
      streamTtlMs: 60_000,
      instanceId: 'a',
      logger: createSilentLogger(),
      sender,
    });
    runtime.emit(start('r3'));
    for (let seq = 1; seq < 600; seq += 1) {
      runtime.emit({
        type: 'step_start',
        run_id: 'r3',
        seq,
        timestamp: at,
      } as unknown as WorkflowEvent);
    }
    runtime.emit(end('r3', 600));
    await sender.drained();
    const capped = await streamOf(redis, keys.runEvents('r3'));
    expect(capped).to.have.length(500);
    expect(capped[0]?.event.seq).to.equal(101);
    runtime.emit(start('r3'));
    await sender.drained();
    const reused = await streamOf(redis, keys.runEvents('r3'));
    expect(reused.map((e) => e?.event.seq)).to.deep.equal([0]);
    detach();
  });
});
