/**
 * Shared set-up of the agents tests: a real OpenWOP host with the agents family over a real store (a HostFixture of
 * service-test-kit), the supervisor ⇄ dispatch loop and gated worker definitions, and helpers that run a workflow,
 * wait on its child runs, read its event log and check every event against the OpenWOP schemas.
 */
import { expect } from 'vitest';
import { agentsFamily } from '../../src/openwop/agents/agents-family.js';
import type { AgentsFamilyOptions } from '../../src/openwop/agents/agents-family.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { openwopSchemas } from '../../src/openwop/schemas.js';
import type { RunEvent, RunStatus, WorkflowDefinition } from '../../src/openwop/types.js';
import {
  HOST_DEFAULT_GRACE_MS,
  HostFixture,
  oneNode,
  tempDbFile as kitTempDbFile,
  workflowNode,
} from './service-test-kit.js';

export { clock } from './service-test-kit.js';

/** An agents host: `host`, `db`, `file` (its store), `close()` and `reopen()`. */
export type Opened = HostFixture;

/** A temp SQLite file path. */
export function tempDbFile(): string {
  return kitTempDbFile('mhs-agents-');
}

/** Opens a host with the agents family on `file` (a SQLite path or PostgreSQL URL; a new temp file by default). */
export async function openAgentsHost(file = tempDbFile(), opts: AgentsFamilyOptions = {}): Promise<Opened> {
  const fx = new HostFixture(async () => ({ families: [agentsFamily(opts)] }), file, HOST_DEFAULT_GRACE_MS);
  await fx.open();
  return fx;
}

/** Closes the host and its Db (a no-op when already closed). */
export async function closeHost(o: Opened): Promise<void> {
  await o.close();
}

/** A supervisor ⇄ dispatch loop with a scripted plan (`dispatch` is the dispatch node's config). */
export function supervisorLoop(
  id: string,
  plan: unknown[],
  dispatch: Record<string, unknown> = {},
  variables: WorkflowDefinition['variables'] = [],
): WorkflowDefinition {
  return {
    id,
    name: id,
    version: '1',
    nodes: [
      workflowNode({
        id: 'supervisor',
        typeId: 'core.orchestrator.supervisor',
        name: 's',
        config: { mockDispatchPlan: plan },
      }),
      workflowNode({ id: 'dispatch', typeId: 'core.dispatch', name: 'd', position: { x: 1, y: 0 }, config: dispatch }),
    ],
    edges: [
      { id: 'e1', sourceNodeId: 'supervisor', targetNodeId: 'dispatch' },
      { id: 'e2', sourceNodeId: 'dispatch', targetNodeId: 'supervisor' },
    ],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables,
    metadata: {},
    settings: {},
  };
}

/** A worker held on an approval gate (node 'gate') whose variable childOutcome defaults to `outcome`. */
export function gatedWorker(id: string, outcome: string, gateConfig: Record<string, unknown> = {}): WorkflowDefinition {
  return oneNode(
    id,
    { id: 'gate', name: 'gate', typeId: 'core.approvalGate', config: gateConfig },
    { name: 'gated child', variables: [{ name: 'childOutcome', type: 'string', defaultValue: outcome }] },
  );
}

/** A loop that dispatches `workerId` once and harvests its childOutcome into parentResult. */
export function harvestingLoop(id: string, workerId: string, name = id): WorkflowDefinition {
  return {
    ...supervisorLoop(
      id,
      [{ kind: 'next-worker', nextWorkerIds: [workerId] }],
      { outputMapping: { parentResult: 'childOutcome' } },
      [{ name: 'parentResult', type: 'string', defaultValue: '' }],
    ),
    name,
  };
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

/** Starts a run of `workflowId` and waits until it has `status` (e.g. held on an approval); its id and events. */
export async function startUntil(
  host: OpenwopHost,
  workflowId: string,
  status: RunStatus,
): Promise<{ runId: string; events: RunEvent[] }> {
  const runId = await start(host, workflowId);
  return { runId, events: await untilStatus(host, runId, status) };
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

/** Polls the child runs of `runId` until one has `status`; its run id, or undefined after `tries` polls. */
export async function untilChild(
  host: OpenwopHost,
  runId: string,
  status: RunStatus,
  tries = 2000,
): Promise<string | undefined> {
  let childId: string | undefined;
  for (let i = 0; !childId && i < tries; i++) {
    childId = (await host.store.childRuns(runId)).find((c) => c.status === status)?.runId;
    if (!childId) await new Promise<void>((res) => setImmediate(res));
  }
  return childId;
}

/**
 * Registers `worker` (a gated worker) and `parent` (a loop dispatching it), starts the parent and waits until the
 * worker holds on its gate; the parent run and the worker's child run (undefined if not held after `tries` polls).
 */
export async function startUntilWorkerHolds(
  host: OpenwopHost,
  worker: WorkflowDefinition,
  parent: WorkflowDefinition,
  tries = 2000,
): Promise<{ runId: string; childId: string | undefined }> {
  await host.catalog.register(worker);
  await host.catalog.register(parent);
  const runId = await start(host, parent.id);
  return { runId, childId: await untilChild(host, runId, 'waiting-approval', tries) };
}

/**
 * Accepts the gate of the waiting worker `childId` (once its resumed host has it waiting again) and waits for
 * the parent `runId` to end; its terminal status and events.
 */
export async function acceptGateAndFinish(
  host: OpenwopHost,
  runId: string,
  childId: string,
): Promise<{ status: RunStatus; events: RunEvent[] }> {
  await untilStatus(host, childId, 'waiting-approval');
  // After a restart the stored status is already waiting-approval before the resumed node registers its interrupt.
  while (!host.runs.pendingInterrupts().some((p) => p.runId === childId && p.nodeId === 'gate'))
    await new Promise((r) => setTimeout(r, 5));
  await host.runs.resolveInterrupt(childId, 'gate', { action: 'accept' }, { principal: 'operator' });
  const status = await host.runs.waitTerminal(runId);
  return { status, events: await host.store.events(runId) };
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
