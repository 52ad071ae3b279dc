/**
 * A real service for HTTP tests: temp runs and workflows directories (the shipped workflows
 * copied in), no-LLM mode, the full middleware chain in open mode with a generous rate limit,
 * listening on 127.0.0.1 port 0.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, packageRoot } from '../../src/config/index.js';
import type { RunRecord } from '../../src/engine/types.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { createSilentLogger, type Logger } from '../../src/log.js';
import type { FileWriter } from '../../src/store/write-thread.js';

export interface TestService extends RunningServer {
  root: string;
  runsDir: string;
  workflowsDir: string;
  /** Resolves with the final record of a run (at once when it has already finished). */
  finished(runId: string): Promise<RunRecord>;
  /** Restarts nothing: stops the server and removes the temp directories. */
  dispose(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  /** Reuse directories of an earlier service (restart tests). */
  root?: string;
  /** The run-file writer (fault injection). */
  writeFile?: FileWriter;
  /** The service's logger. @default silent */
  logger?: Logger;
  /** Resolve only once the run history is loaded (start-up tests turn this off). @default true */
  waitForHistory?: boolean;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const root = options.root ?? (await mkdtemp(join(tmpdir(), 'agentic-http-')));
  const runsDir = join(root, 'runs');
  const workflowsDir = join(root, 'workflows');
  if (options.root === undefined) {
    await cp(join(packageRoot, 'workflows'), workflowsDir, { recursive: true });
  }
  const config = loadConfig({
    AGENTIC_HOST: '127.0.0.1',
    AGENTIC_PORT: '0',
    AGENTIC_RUNS_DIR: runsDir,
    AGENTIC_WORKFLOWS_DIR: workflowsDir,
    AGENTIC_FRONTEND_DIR: join(root, 'frontend'),
    AGENTIC_NO_LLM: '1',
    AGENTIC_RATE_LIMIT_DEFAULT: '100000/second',
    AGENTIC_SHUTDOWN_GRACE_SECONDS: '0',
    // Unmatched paths stay JSON 404s unless a test builds a frontend (or turns the console on).
    AGENTIC_CONSOLE: '0',
    ...options.env,
  });
  const running = await startServer({
    config,
    logger: options.logger ?? createSilentLogger(),
    ...(options.writeFile !== undefined ? { writeFile: options.writeFile } : {}),
  });
  // The service listens before its history is loaded; tests start from a loaded index.
  if (options.waitForHistory !== false) await running.history.whenLoaded();
  const waiters = new Map<string, ((record: RunRecord) => void)[]>();
  // A run has finished for a client once its workflow_end is out (the run is released then),
  // which comes after its end record is written and its journal removed.
  const ended = new Map<string, RunRecord>();
  const offRecord = running.runtime.onRecord((record) => {
    if (record.status === 'success' || record.status === 'failed') ended.set(record.run_id, record);
  });
  const offEvents = running.runtime.subscribe((event) => {
    if (event.type !== 'workflow_end') return;
    const record = ended.get(event.run_id);
    ended.delete(event.run_id);
    if (record === undefined) return;
    for (const resolve of waiters.get(event.run_id) ?? []) resolve(record);
    waiters.delete(event.run_id);
  });
  const off = (): void => {
    offRecord();
    offEvents();
  };
  return {
    ...running,
    root,
    runsDir,
    workflowsDir,
    async finished(runId) {
      const wait = new Promise<RunRecord>((resolve) => {
        waiters.set(runId, [...(waiters.get(runId) ?? []), resolve]);
      });
      if (!running.runtime.isActive(runId)) {
        const found = await running.history.getByRunId(runId);
        if (found && (found.record.status === 'success' || found.record.status === 'failed')) {
          return found.record;
        }
      }
      return wait;
    },
    async dispose() {
      off();
      await running.close();
      if (options.root === undefined) await rm(root, { recursive: true, force: true });
    },
  };
}

/** JSON request helper: returns status, headers and the parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (HTML pages, assets): callers read `text`.
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
