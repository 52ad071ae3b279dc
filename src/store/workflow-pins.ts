/**
 * Pinned workflows: the exact workflow a run started with, kept so that resuming the run (or
 * replaying it) uses that version even after its YAML was edited or deleted.
 *
 * A run's start record names the workflow by content hash (`extra.workflow_hash`,
 * `sha256:<hex>` of the compiled document's JSON), and the document itself is kept once per
 * hash under the runs directory: `.workflows/<hex>.json`, written atomically (temp file, fsync,
 * rename) before the first start record naming it. Content-addressed rather than one copy per
 * run (`.<run file>.workflow`): a run then costs no extra file write after its workflow's first
 * run (the durable write path is the service's ceiling: two fsyncs per run today), and a copy is
 * never bigger than the workflow-size bound. Copies are small and few (one per workflow version),
 * so nothing removes them (retention removes run files only).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CompiledWorkflow, WorkflowDocument } from '../workflow/types.js';
import type { FileWriter } from './write-thread.js';

/** The directory of pinned workflows, inside the runs directory. */
export const PINNED_WORKFLOWS_DIR = '.workflows';

/** Where `extra` of a run record holds its workflow's hash. */
export const WORKFLOW_HASH_KEY = 'workflow_hash';

/** Distinct hashes remembered as written; past it the memory starts again (rewrites are harmless). */
const REMEMBERED_PINS = 1024;

const HASH = /^sha256:([0-9a-f]{64})$/;

/** The content hash of a workflow document: `sha256:<hex>` of its JSON text. */
export function workflowHash(document: WorkflowDocument): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(document)).digest('hex')}`;
}

/** The path of the pinned copy of `hash` (undefined for a string that is not such a hash). */
export function pinnedWorkflowPath(runsDir: string, hash: string): string | undefined {
  const hex = HASH.exec(hash)?.[1];
  return hex === undefined ? undefined : join(runsDir, PINNED_WORKFLOWS_DIR, `${hex}.json`);
}

/**
 * The pinned document of `hash`, or undefined when there is none (never written, removed, or
 * not the document of that hash: a damaged copy is not used).
 */
export async function readPinnedWorkflow(
  runsDir: string,
  hash: string,
): Promise<WorkflowDocument | undefined> {
  const path = pinnedWorkflowPath(runsDir, hash);
  if (path === undefined) return undefined;
  let document: WorkflowDocument;
  try {
    document = JSON.parse(await readFile(path, 'utf8')) as WorkflowDocument;
  } catch {
    return undefined;
  }
  return workflowHash(document) === hash ? document : undefined;
}

/** The hash of a run record's pinned workflow, if it names one. */
export function recordWorkflowHash(extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return undefined;
  const hash = (extra as Record<string, unknown>)[WORKFLOW_HASH_KEY];
  return typeof hash === 'string' && HASH.test(hash) ? hash : undefined;
}

/** One runtime's pinned workflows: hashes computed once per compiled workflow, copies written once. */
export class WorkflowPins {
  private readonly hashes = new WeakMap<CompiledWorkflow, string>();
  private readonly written = new Map<string, Promise<void>>();
  private madeDir = false;

  constructor(
    private readonly runsDir: string,
    private readonly writeFile: FileWriter,
  ) {}

  /** The content hash of `workflow` (computed on first use). */
  hashOf(workflow: CompiledWorkflow): string {
    let hash = this.hashes.get(workflow);
    if (hash === undefined) {
      hash = workflowHash(workflow.document);
      this.hashes.set(workflow, hash);
    }
    return hash;
  }

  /** Makes sure the copy of `workflow` is on disk; resolves with its hash. */
  async pin(workflow: CompiledWorkflow): Promise<string> {
    const hash = this.hashOf(workflow);
    let written = this.written.get(hash);
    if (written === undefined) {
      if (this.written.size >= REMEMBERED_PINS) this.written.clear();
      written = this.write(hash, workflow.document).catch((error: unknown) => {
        // A failed write is tried again by the next run of that workflow.
        this.written.delete(hash);
        throw error;
      });
      this.written.set(hash, written);
    }
    await written;
    return hash;
  }

  private async write(hash: string, document: WorkflowDocument): Promise<void> {
    const path = pinnedWorkflowPath(this.runsDir, hash)!;
    if (!this.madeDir) {
      await mkdir(join(this.runsDir, PINNED_WORKFLOWS_DIR), { recursive: true });
      this.madeDir = true;
    }
    try {
      await this.writeFile(path, JSON.stringify(document));
    } catch (error) {
      // The directory was removed since: made again on the next try.
      this.madeDir = false;
      throw error;
    }
  }
}
