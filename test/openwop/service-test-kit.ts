// Shared setup for the host-service family tests (prompts-*, ai-envelope-*, agent-runtime-*): a real OpenWOP host
// over a real SQLite file, reopened on the same file for restart tests, and a wait on the run's event log.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { InterruptRequest, NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import type { RunEvent, WorkflowDefinition, WorkflowNode } from '../../src/openwop/types.js';

export const clock = new RealClock();

/** One host process over one SQLite file; `reopen` closes it and starts another on the same file. */
export class HostFixture {
  host!: OpenwopHost;
  db!: Db;
  readonly file: string;

  constructor(
    private readonly make: (db: Db) => Promise<{ families?: ServiceFamily[]; nodes?: NodeModule[] }>,
    file?: string,
  ) {
    this.file = file ?? join(mkdtempSync(join(tmpdir(), 'mhs-svc-')), 'host.db');
  }

  async open(): Promise<OpenwopHost> {
    this.db = await openDb(this.file);
    const extra = await this.make(this.db);
    this.host = await createOpenwopHost({ db: this.db, clock, workflowsDir: false, ...extra });
    return this.host;
  }

  async close(): Promise<void> {
    await this.host.close(100);
    await this.db.close();
  }

  async reopen(): Promise<OpenwopHost> {
    await this.close();
    return this.open();
  }
}

/** A one-node manual workflow. */
export function oneNode(id: string, node: Partial<WorkflowNode> & { typeId: string }, extra = {}): WorkflowDefinition {
  return {
    id,
    name: id,
    version: '1',
    nodes: [{ id: 'n', name: 'n', position: { x: 0, y: 0 }, config: {}, inputs: {}, ...node }],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
    ...extra,
  };
}

/** Resolves with the first event of `runId` (stored or appended later) matching `pred`; rejects if the run ends first. */
export async function waitForEvent(
  host: OpenwopHost,
  runId: string,
  pred: (e: RunEvent) => boolean,
): Promise<RunEvent> {
  const ended = (e: RunEvent): boolean => ['run.completed', 'run.failed', 'run.cancelled'].includes(e.type);
  let stop = (): void => undefined;
  const live = new Promise<RunEvent>((resolve, reject) => {
    stop = host.store.subscribe(runId, (e) => {
      if (pred(e)) resolve(e);
      else if (ended(e)) reject(new Error(`run ended (${e.type}) before the awaited event`));
    });
  });
  live.catch(() => undefined);
  const prior = await host.store.events(runId);
  const hit = prior.find(pred);
  try {
    if (hit) return hit;
    const end = prior.find(ended);
    if (end) throw new Error(`run ended (${end.type}) before the awaited event`);
    return await live;
  } finally {
    stop();
  }
}

/** Every event of the run validates against run-event.schema.json and its payload $def. */
export async function expectValidEvents(host: OpenwopHost, runId: string): Promise<RunEvent[]> {
  const events = await host.store.events(runId);
  for (const e of events)
    expect({ type: e.type, issues: openwopSchemas().checkEvent(e) }).toEqual({ type: e.type, issues: [] });
  return events;
}

/** The capabilities document validates against capabilities.schema.json. */
export function expectValidCapabilities(host: OpenwopHost): Record<string, unknown> {
  const doc = host.capabilities();
  expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
  return doc;
}

/** The failed run's error code. */
export async function runErrorCode(host: OpenwopHost, runId: string): Promise<string | undefined> {
  const snap = (await host.runs.snapshot(runId)) as { error?: { code?: string } };
  return snap.error?.code;
}

/**
 * Resolves the interrupt of `runId` once its (resumed) node has registered it again. A resumed node re-registers a
 * recorded interrupt without appending an event, so this retries on `not_found`, yielding to the event loop.
 */
export async function resolveWhenPending(
  host: OpenwopHost,
  runId: string,
  body: Record<string, unknown>,
): Promise<void> {
  for (let i = 0; ; i++) {
    const p = host.runs.pendingInterrupts().find((x) => x.runId === runId);
    if (p) {
      await host.runs.resolveInterrupt(runId, p.nodeId, body, { principal: 't' });
      return;
    }
    if (i > 100_000) throw new Error(`no interrupt pending for ${runId}`);
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** An approval interrupt a test node holds on (resolve with `{ action: 'accept' }`). */
export const HOLD: InterruptRequest = {
  kind: 'approval',
  data: { artifactId: 'hold', artifactType: 'test', title: 'hold', actions: ['accept', 'reject'] },
};
