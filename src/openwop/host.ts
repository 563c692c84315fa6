import { join } from 'node:path';
import type { Clock, HostError } from '../core/index.js';
import type { Db } from '../ledger/index.js';
import { baseCapabilities, DEFAULT_MAX_RUN_DURATION_MS, runnableFixtures } from './capabilities.js';
import type { HostLimits } from './capabilities.js';
import type { RunModelLimits } from './run-options.js';
import { NodeRegistry } from './node-registry.js';
import type { NodeModule } from './node-registry.js';
import { delayNode, failNode, identityNode, noopNode } from './nodes/core-nodes.js';
import { approvalGateNode, clarificationGateNode, interruptNode } from './nodes/interrupt-nodes.js';
import { conversationGateNode } from './nodes/conversation-gate.js';
import { conformanceReplayNodes, EffectSeam } from './nodes/conformance-replay-nodes.js';
import { RunEffectRecords } from './effects/effect-records.js';
import { effectsFamily } from './effects/effects-family.js';
import { MockAiPrograms, structuredOutputNode } from './nodes/structured-output-node.js';
import { forkRun } from './fork.js';
import type { ForkRequest, ForkResponse } from './fork.js';
import type { Caller } from './node-registry.js';
import { ForkStore, ReplayControl } from './replay.js';
import { controlSubWorkflowNode, subWorkflowNode } from './nodes/subworkflow-node.js';
import { RunManager } from './run-manager.js';
import { RunOwnership } from './run-ownership.js';
import { RunEventRelay, listenOf } from './run-event-relay.js';
import { RunRequests } from './run-requests.js';
import type { RunLeaseTiming } from './run-ownership.js';
import { mergeCapabilities } from './service-family.js';
import type { ServiceFamily } from './service-family.js';
import { REPO_ROOT } from './schemas.js';
import { OpenwopStore } from './store.js';
import { WorkflowCatalog } from './workflows.js';
import type { WorkflowRecorder } from './workflows.js';

/** The core node types every host registers. */
export const CORE_NODES: readonly NodeModule[] = [
  noopNode,
  identityNode,
  failNode,
  delayNode,
  approvalGateNode,
  interruptNode,
  clarificationGateNode,
  subWorkflowNode,
  controlSubWorkflowNode,
  conversationGateNode,
];

/** Options of {@link createOpenwopHost}. */
export interface OpenwopHostOptions {
  db: Db;
  clock: Clock;
  /** Extra node types (e.g. `mhs.invoke`, `mhs.task`). */
  nodes?: readonly NodeModule[];
  /** 3 where the server serves OpenWOP major 2: the era key every created run is stamped with (event-log-era.ts). */
  newRunEra?: 3;
  /** Extra capability families, each with a behaviour check (see capabilities.ts). */
  capabilities?: Record<string, unknown>;
  /** Host service families (RFC 0144: `ctx.mcp`, `ctx.promptLibrary`, ...): their nodes, surfaces and advertisement. */
  families?: readonly ServiceFamily[];
  /** Folder of example workflows to register (default `<repo>/workflows`; `false` for none). */
  workflowsDir?: string | false;
  limits?: Partial<HostLimits>;
  /** Per-run counts of the conformance effect seam (pass one map to keep them across a reopen; default a new one). */
  effectCounts?: Map<string, number>;
  /** This host's stable id (RFC 0040 `crossHostCausation.hostId`; see causation/host-id.ts). Default `mhs-host`. */
  hostId?: string;
  /** Where failures no caller sees go: a run waiting out a store outage, a run actor's own fault (HOST-093). */
  onBackgroundError?: (err: HostError) => void;
  /** Told of every run-store write refused as unavailable (e.g. to probe the ledger, so its status shows it). */
  onStoreOutage?: (err: HostError) => void;
  /** Lease timing of this process's runs on a shared PostgreSQL store (issue 19; unused on SQLite). */
  runLeases?: RunLeaseTiming;
  /** Records a workflow registered or replaced by a principal (the host ledger's `workflow.registered`, issue 20). */
  recordWorkflow?: WorkflowRecorder;
  /** What the host's model calls accept (`serve --model`): a run whose sampling they would refuse is refused at create. */
  modelLimits?: RunModelLimits;
}

/** The assembled OpenWOP host: store, registry, catalog, run manager and the discovery document. */
export interface OpenwopHost {
  store: OpenwopStore;
  /** The Layer-2 effect records of runs (MCP tool calls, model calls; MHS commands when the ledger index is installed). */
  effects: RunEffectRecords;
  registry: NodeRegistry;
  catalog: WorkflowCatalog;
  runs: RunManager;
  /** This process's run leases on a shared PostgreSQL store (issue 19); undefined on SQLite (it drives every run). */
  ownership: RunOwnership | undefined;
  limits: HostLimits;
  /** This host's id (RFC 0040): the `hostId` of its ancestry answers and the `causationHostId` it recognises. */
  hostId: string;
  /** The document served at `GET /.well-known/openwop` (capabilities.schema.json). */
  capabilities(): Record<string, unknown>;
  /** Registered workflows found at start, and files refused (with their errors). */
  loaded: { fixtures: string[]; workflows: string[]; refused: Array<{ file: string; errors: unknown }> };
  /** Fork and replay (replay.md, RFC 0140): `fork` backs `POST /v1/runs/{runId}:fork`; `effectCount` the effect seam. */
  replay: {
    fork(
      sourceRunId: string,
      req: ForkRequest,
      caller: Caller,
      idempotencyKey?: string,
    ): Promise<{ fork: ForkResponse; created: boolean }>;
    /** Effects the conformance effect seam counted for `runId`. */
    effectCount(runId: string): number;
    /** The conformance `mock` provider's programs (`POST /v1/host/sample/test/mock-ai/program`, RFC 0041 §B). */
    mockAi: MockAiPrograms;
  };
  /** Halts every run actor (runs resume on the next start). */
  close(graceMs?: number): Promise<void>;
}

/**
 * Builds the OpenWOP host over the shared store: registers the core (and given) node types,
 * loads the runnable conformance fixtures and the example workflows, and resumes every run that
 * was not terminal when the previous process stopped.
 */
export async function createOpenwopHost(o: OpenwopHostOptions): Promise<OpenwopHost> {
  const store = new OpenwopStore(o.db, o.clock, o.onStoreOutage);
  if (o.newRunEra) store.newRunEra = o.newRunEra;
  // Issue 19: on a store several processes share, each drives only the runs whose lease it holds.
  const ownership =
    o.db.dialect === 'postgres'
      ? new RunOwnership(o.db, o.clock, {
          ...(o.runLeases ? { timing: o.runLeases } : {}),
          ...(o.onBackgroundError ? { onError: o.onBackgroundError } : {}),
        })
      : undefined;
  store.fence = ownership;
  // Issue 19: SSE streams and long polls here see the live events of runs other processes drive.
  const listen = ownership ? listenOf(o.db) : undefined;
  const relay =
    ownership && listen
      ? new RunEventRelay(store, listen, o.clock, {
          origin: ownership.owner,
          ...(o.onBackgroundError ? { onError: o.onBackgroundError } : {}),
        })
      : undefined;
  store.notifier = relay;
  // Issue 19: cancels, interrupt answers and variable writes of runs another process drives are stored for it.
  const requests =
    ownership && relay
      ? new RunRequests(o.db, o.clock, ownership.owner, {
          stored: (t, runId, id) => relay.requestStored(t, runId, id),
          settled: (t, runId, id) => relay.requestSettled(t, runId, id),
        })
      : undefined;
  store.requests = requests;
  await store.init();
  await relay?.start();
  const forks = new ForkStore(o.db, o.clock);
  await forks.init();
  // Replay suppression wraps every node last (outermost); a node is pure only when its module says so.
  const replay = new ReplayControl(
    store,
    forks,
    (typeId) => registry.has(typeId) && registry.get(typeId).pure === true,
  );
  const effects = new EffectSeam((runId) => replay.isReplay(runId), o.effectCounts);
  const mockAi = new MockAiPrograms();
  const effectRecords = new RunEffectRecords(o.db, o.clock);
  // The effect layer wraps inside the replay layer: a replay fork's side-effecting nodes never reach it.
  const families = [
    ...(o.families ?? []),
    effectsFamily(effectRecords, (runId) => replay.isReplay(runId)),
    replay.family(),
  ];
  const registry = new NodeRegistry().register(
    ...CORE_NODES,
    ...conformanceReplayNodes(effects),
    structuredOutputNode(mockAi),
    ...families.flatMap((f) => f.nodes ?? []),
    ...(o.nodes ?? []),
  );
  const catalog = new WorkflowCatalog(store, registry);
  catalog.recorder = o.recordWorkflow;
  const limits: HostLimits = {
    maxNodeExecutions: 1000,
    maxRequestBodyBytes: 1_048_576,
    maxRunDurationMs: DEFAULT_MAX_RUN_DURATION_MS,
    ...o.limits,
  };
  const runs = new RunManager({
    store,
    registry,
    catalog,
    clock: o.clock,
    maxNodeExecutions: limits.maxNodeExecutions,
    maxRunDurationMs: limits.maxRunDurationMs,
    ...(o.modelLimits ? { modelLimits: o.modelLimits } : {}),
    families,
    hostId: o.hostId ?? 'mhs-host',
    ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
    ...(ownership ? { ownership } : {}),
    ...(requests ? { requests } : {}),
  });
  if (relay && requests) {
    relay.onRequest = (runId) => runs.applyRequests(runId);
    relay.onSettled = (id) => requests.settled(id);
    relay.onAppended = (runId) => runs.appendedElsewhere(runId);
    relay.onHandedOver = (runId) => runs.handedOver(runId);
    // Issue 19: new runs are spread over the live processes (a run handed off is started by its new owner).
    if (ownership) ownership.handOff = (t, runId, to) => relay.handOff(t, runId, to);
  }
  // Deep merge, so a family may add to `limits` or replace `supportedEnvelopes` without dropping the engine's keys.
  const base = mergeCapabilities(
    baseCapabilities(limits),
    ...families.map((f) => f.capabilities()),
    o.capabilities ?? {},
  );
  const fixtures = runnableFixtures(registry, base);
  for (const f of fixtures) await store.putWorkflow(f, 'fixture');
  for (const f of families) for (const def of f.workflows?.() ?? []) await catalog.register(def, `family:${f.name}`);
  const wf =
    o.workflowsDir === false
      ? { loaded: [], refused: [] }
      : await catalog.loadDir(o.workflowsDir ?? join(REPO_ROOT, 'workflows'), 'workflows');
  await runs.recover();
  const fixtureIds = fixtures.map((f) => f.id);
  return {
    store,
    effects: effectRecords,
    registry,
    catalog,
    runs,
    ownership,
    limits,
    hostId: o.hostId ?? 'mhs-host',
    capabilities: () => ({ ...base, fixtures: fixtureIds }),
    loaded: { fixtures: fixtureIds, workflows: wf.loaded, refused: wf.refused },
    replay: {
      fork: (sourceRunId, req, caller, key) =>
        forkRun({ store, forks, runs, clock: o.clock }, sourceRunId, req, caller, key),
      effectCount: (runId) => effects.count(runId),
      mockAi,
    },
    close: async (graceMs) => {
      await runs.shutdown(graceMs);
      await relay?.close();
      for (const f of families) await f.close?.();
    },
  };
}
