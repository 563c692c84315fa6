/**
 * Shared set-up of the agents tests: a real OpenWOP host with the agents family over a real SQLite file, and
 * helpers that run a workflow, read its event log and check every event against the OpenWOP schemas.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { agentsFamily } from '../../src/openwop/agents/agents-family.js';
import type { AgentsFamilyOptions } from '../../src/openwop/agents/agents-family.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { openwopSchemas } from '../../src/openwop/schemas.js';
import type { RunEvent, RunStatus } from '../../src/openwop/types.js';

export const clock = new RealClock();

export interface Opened {
  host: OpenwopHost;
  db: Db;
  file: string;
}

/** A temp SQLite file path. */
export function tempDbFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'mhs-agents-')), 'host.db');
}

/** Opens a host with the agents family on `file` (a new temp file by default). */
export async function openAgentsHost(file = tempDbFile(), opts: AgentsFamilyOptions = {}): Promise<Opened> {
  const db = await openDb(file);
  const host = await createOpenwopHost({ db, clock, workflowsDir: false, families: [agentsFamily(opts)] });
  return { host, db, file };
}

export async function closeHost(o: Opened): Promise<void> {
  await o.host.close();
  await o.db.close();
}

/** Starts a run of `workflowId`. */
export async function start(
  host: OpenwopHost,
  workflowId: string,
  inputs: Record<string, unknown> = {},
): Promise<string> {
  const { run } = await host.runs.createRun({ workflowId, inputs }, { principal: 'agents-test' });
  return run.runId;
}

/** Runs `workflowId` to a terminal status. */
export async function runToEnd(
  host: OpenwopHost,
  workflowId: string,
  inputs: Record<string, unknown> = {},
): Promise<{ runId: string; status: RunStatus; events: RunEvent[] }> {
  const runId = await start(host, workflowId, inputs);
  const status = await host.runs.waitTerminal(runId);
  return { runId, status, events: await host.store.events(runId) };
}

/** Polls the stored run until its status is `status` (the run actor writes it; no sleeps beyond a yield). */
export async function untilStatus(host: OpenwopHost, runId: string, status: RunStatus): Promise<RunEvent[]> {
  for (let i = 0; i < 2000; i++) {
    const r = await host.store.getRun(runId);
    if (r?.status === status) return host.store.events(runId);
    await new Promise<void>((res) => setImmediate(res));
  }
  throw new Error(`run ${runId} never reached ${status}`);
}

/** Every event validates against run-event.schema.json and its payload $def. */
export function expectValidEvents(events: readonly RunEvent[]): void {
  const bad = events
    .map((e) => ({ type: e.type, issues: openwopSchemas().checkEvent(e) }))
    .filter((x) => x.issues.length);
  expect(bad).toEqual([]);
}

export const types = (events: readonly RunEvent[]): string[] => events.map((e) => e.type);
export const ofType = (events: readonly RunEvent[], type: string): RunEvent[] => events.filter((e) => e.type === type);
