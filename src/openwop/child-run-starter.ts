import { ErrorCode, HostError } from '../core/index.js';
import type { ChildRuns } from './node-registry.js';
import { variableDefaults } from './prepared-run.js';
import { inheritedSampling } from './run-options.js';
import { inheritedMock } from './services/mock-providers.js';
import type { ParentLink, PreparedRun } from './prepared-run.js';
import type { OpenwopStore, StoredRun } from './store.js';
import type { RunStatus } from './types.js';
import type { WorkflowCatalog } from './workflows.js';

/** What {@link childRunsOf} needs from the run manager. */
export interface ChildRunDeps {
  store: OpenwopStore;
  catalog: WorkflowCatalog;
  /** Inserts and starts a run (idempotent on its key). */
  insert(a: PreparedRun & { parent: ParentLink }): Promise<{ run: StoredRun }>;
  waitTerminal(runId: string): Promise<RunStatus>;
}

/**
 * The child runs a node of `parent` starts (subworkflow, dispatch): each keyed on the node's key, so a resumed node
 * finds the child it started before; variables are the child's defaults overlaid with what the node passes.
 */
export function childRunsOf(parent: StoredRun, d: ChildRunDeps): ChildRuns {
  return {
    start: async (opts) => {
      const def = await d.catalog.get(opts.workflowId);
      if (!def)
        throw new HostError(ErrorCode.NOT_FOUND, `workflow ${opts.workflowId} is not registered`, {
          workflowId: opts.workflowId,
        });
      const { run } = await d.insert({
        def,
        inputs: opts.variables,
        variables: { ...variableDefaults(def), ...opts.variables },
        principal: parent.principal,
        idempotencyKey: `child:${opts.key}`,
        requestDigest: null,
        tags: [],
        metadata: opts.metadata ?? {},
        // A mocked run's children are mocked too: the mock answers ALL its AI calls (run-options.md); they keep its
        // sampling settings.
        configurable: { ...inheritedMock(parent.configurable), ...inheritedSampling(parent.configurable) },
        parent: {
          runId: opts.parentRunId,
          nodeId: opts.parentNodeId,
          traceparent: opts.traceparent ?? parent.traceparent,
        },
      });
      return { runId: run.runId };
    },
    settled: async (runId) => {
      await d.waitTerminal(runId);
      const r = (await d.store.getRun(runId))!;
      return { status: r.status, variables: r.variables, error: r.error };
    },
  };
}
