// Guarantees (issue 21 item 5): a run decides again only the nodes a change can affect (RunSchedule), and this gives
// the same schedule, start for start and skip for skip in the same order, as deciding every node of the definition
// in repeated passes until a pass changes nothing (what the run actor did before). Random workflows: any trigger
// rules, disabled nodes, cycles with loop exits, conditional edges on a variable that completions flip, failures.
// Pure decisions on the real Graph: no store, no timers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../../src/openwop/graph.js';
import type { GraphState } from '../../src/openwop/graph.js';
import { RunSchedule } from '../../src/openwop/run-schedule.js';
import type { TriggerRule, WorkflowDefinition } from '../../src/openwop/types.js';

const RULES: TriggerRule[] = ['all_success', 'any_success', 'all_complete', 'none_failed', 'any_failed'];
const MAX_STEPS = 150;

interface Spec {
  nodes: Array<{ disabled: boolean }>;
  edges: Array<{ s: number; t: number; rule: number; conditional: boolean }>;
  /** Per (node, activation): 0 completes, 1 fails, 2 completes and flips `go`, 3 completes with exitLoop. */
  outcomes: number[];
}

function definition(spec: Spec): WorkflowDefinition {
  const n = spec.nodes.length;
  return {
    id: 'p',
    name: 'p',
    version: '1',
    nodes: spec.nodes.map((x, i) => ({
      id: `n${i}`,
      typeId: 'core.noop',
      name: `n${i}`,
      position: { x: 0, y: 0 },
      config: {},
      inputs: {},
      ...(x.disabled ? { disabled: true } : {}),
    })),
    edges: spec.edges.map((e, i) => ({
      id: `e${i}`,
      sourceNodeId: `n${e.s % n}`,
      targetNodeId: `n${e.t % n}`,
      triggerRule: RULES[e.rule % RULES.length]!,
      ...(e.conditional ? { condition: { type: 'truthy' as const, left: 'variables.go' } } : {}),
    })),
    triggers: [],
    variables: [],
    metadata: {},
    settings: {},
  };
}

/** Runs the workflow with nodes finishing one at a time (first started, first done); the log of decisions. */
function simulate(spec: Spec, incremental: boolean): string[] {
  const graph = new Graph(definition(spec));
  const s: GraphState = graph.initialState();
  const schedule = new RunSchedule(graph);
  schedule.markAll();
  let variables: Record<string, unknown> = { go: false };
  const running: string[] = [];
  const log: string[] = [];
  const apply = (id: string, d: 'start' | 'skip'): void => {
    log.push(`${d} ${id}`);
    if (d === 'skip') graph.markSkipped(s, id);
    else {
      graph.markStarted(s, id);
      running.push(id);
    }
    schedule.changed(id);
  };
  const advance = (): void => {
    if (incremental) {
      schedule.restart();
      for (let id = schedule.take(); id !== undefined && log.length < MAX_STEPS; id = schedule.take()) {
        const d = graph.decide(id, s, variables);
        if (d !== 'wait') apply(id, d);
      }
      return;
    }
    for (let changed = true; changed && log.length < MAX_STEPS;) {
      changed = false;
      for (const node of graph.def.nodes) {
        if (log.length >= MAX_STEPS) break;
        const d = graph.decide(node.id, s, variables);
        if (d === 'wait') continue;
        changed = true;
        apply(node.id, d);
      }
    }
  };
  advance();
  for (let k = 0; running.length && log.length < MAX_STEPS; k++) {
    const id = running.shift()!;
    const outcome = spec.outcomes[(k * 7 + Number(id.slice(1))) % spec.outcomes.length]!;
    log.push(`${outcome === 1 ? 'fail' : 'done'} ${id}`);
    if (outcome === 1) graph.markTerminal(s, id, 'failed', undefined, { code: 'x', message: 'x' });
    else graph.markTerminal(s, id, 'completed', { k });
    if (outcome === 3) graph.markLoopExit(s, id);
    schedule.changed(id);
    if (outcome === 2) {
      variables = { go: !variables.go };
      schedule.variablesChanged();
    }
    advance();
  }
  return log;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  nodes: fc.array(fc.record({ disabled: fc.nat(7).map((x) => x === 0) }), { minLength: 1, maxLength: 12 }),
  edges: fc.array(
    fc.record({ s: fc.nat(40), t: fc.nat(40), rule: fc.nat(10), conditional: fc.nat(3).map((x) => x === 0) }),
    {
      maxLength: 30,
    },
  ),
  outcomes: fc.array(fc.nat(3), { minLength: 1, maxLength: 20 }),
});

describe('RunSchedule', () => {
  it('decides as repeated full passes over the definition do, in the same order', () => {
    fc.assert(
      fc.property(spec, (sp) => {
        expect(simulate(sp, true)).toEqual(simulate(sp, false));
      }),
      { numRuns: 600 },
    );
  });

  it('decides a chain in a bounded number of decisions per node, however long', () => {
    const n = 2_000;
    const sp: Spec = {
      nodes: Array.from({ length: n }, () => ({ disabled: false })),
      edges: Array.from({ length: n - 1 }, (_, i) => ({ s: i, t: i + 1, rule: 0, conditional: false })),
      outcomes: [0],
    };
    const decide = Graph.prototype.decide;
    let calls = 0;
    Graph.prototype.decide = function (this: Graph, ...args) {
      calls++;
      return decide.apply(this, args);
    };
    try {
      const log = simulate({ ...sp }, true);
      expect(log.slice(0, 4)).toEqual(['start n0', 'done n0', 'start n1', 'done n1']);
    } finally {
      Graph.prototype.decide = decide;
    }
    // Every node once at the start, then a few per step. Full passes decide every node after each change: about
    // MAX_STEPS × n here.
    expect(calls).toBeLessThan(n + MAX_STEPS * 5);
  });
});
