// Shared setup for the OpenWOP host tests (service families, agents, mcp, event log): a real OpenWOP host over a real
// SQLite file or PostgreSQL schema, reopened on the same store for restart tests, a fresh Db per store backend,
// workflow builders, and a wait on the run's event log.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import type { Backend } from '../ledger/helpers.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { InterruptRequest, NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import type { RunEvent, RunStatus, WorkflowDefinition, WorkflowNode } from '../../src/openwop/types.js';

export const clock = new RealClock();

/** What `host.close()` gives node work in flight when not told (the run manager's shutdown default). */
export const HOST_DEFAULT_GRACE_MS = 10_000;

/** A temp SQLite file path in a new temp folder. */
export function tempDbFile(prefix = 'mhs-svc-'): string {
  return join(mkdtempSync(join(tmpdir(), prefix)), 'host.db');
}

/**
 * One host process over one store (a SQLite file, or a PostgreSQL URL; a new temp SQLite file by default);
 * `reopen` closes it and starts another on the same store. `graceMs` is what `close` gives node work in flight.
 */
export class HostFixture {
  host!: OpenwopHost;
  db!: Db;
  readonly file: string;
  private isOpen = false;

  constructor(
    private readonly make: (db: Db) => Promise<{ families?: ServiceFamily[]; nodes?: NodeModule[] }>,
    file?: string,
    private readonly graceMs = 100,
  ) {
    this.file = file ?? tempDbFile();
  }

  async open(): Promise<OpenwopHost> {
    this.db = await openDb(this.file);
    const extra = await this.make(this.db);
    this.host = await createOpenwopHost({ db: this.db, clock, workflowsDir: false, ...extra });
    this.isOpen = true;
    return this.host;
  }

  /** Closes the host and its Db; a no-op when already closed. */
  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.isOpen = false;
    await this.host.close(this.graceMs);
    await this.db.close();
  }

  async reopen(): Promise<OpenwopHost> {
    await this.close();
    return this.open();
  }

  /**
   * Restarts the host on the same store, answers the interrupt of the held run `runId` with `body` once its resumed
   * node holds on it again, and waits for the run to end; its terminal status.
   */
  async restartAndResolve(runId: string, body: Record<string, unknown>): Promise<RunStatus> {
    await this.reopen();
    await resolveWhenPending(this.host, runId, body);
    return this.host.runs.waitTerminal(runId);
  }
}

/** A list whose members are closed, in order, after each test: push every fixture a test opens. */
export function closedAfterEach<T extends { close(): Promise<void> }>(): T[] {
  const list: T[] = [];
  afterEach(async () => {
    for (const f of list.splice(0)) await f.close();
  });
  return list;
}

/**
 * A Db on a fresh store of `backend`; closing it and removing the store is pushed onto `cleanups` (one entry, so
 * the caller's order of running them decides when).
 */
export async function freshDb(backend: Backend, cleanups: Array<() => Promise<void>>): Promise<Db> {
  const h = await backend.fresh();
  const db = await openDb(h.location);
  cleanups.push(async () => {
    await db.close();
    await h.cleanup();
  });
  return db;
}

/** A workflow node; id and name default to 'n', config and inputs to empty, position to the origin. */
export function workflowNode(node: Partial<WorkflowNode> & { typeId: string }): WorkflowNode {
  return { id: 'n', name: 'n', position: { x: 0, y: 0 }, config: {}, inputs: {}, ...node };
}

/** A one-node manual workflow (`extra` overrides any top-level field). */
export function oneNode(
  id: string,
  node: Partial<WorkflowNode> & { typeId: string },
  extra: Partial<WorkflowDefinition> = {},
): WorkflowDefinition {
  return {
    id,
    name: id,
    version: '1',
    nodes: [workflowNode(node)],
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

/** Runs `workflowId` to a terminal status: its id, status, events (each checked against the schemas) and error code. */
export async function runToTerminal(
  host: OpenwopHost,
  workflowId: string,
): Promise<{ runId: string; status: RunStatus; events: RunEvent[]; code: string | undefined }> {
  const { run } = await host.runs.createRun({ workflowId }, { principal: 't' });
  const status = await host.runs.waitTerminal(run.runId);
  const events = await expectValidEvents(host, run.runId);
  return { runId: run.runId, status, events, code: await runErrorCode(host, run.runId) };
}

/** Starts `workflowId` and waits until the run asks for input; its id and the interrupt.requested event. */
export async function startUntilAsked(
  host: OpenwopHost,
  workflowId: string,
): Promise<{ runId: string; asked: RunEvent }> {
  const { run } = await host.runs.createRun({ workflowId }, { principal: 't' });
  return { runId: run.runId, asked: await waitForEvent(host, run.runId, (e) => e.type === 'interrupt.requested') };
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
