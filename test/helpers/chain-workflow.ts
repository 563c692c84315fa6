// A linear OpenWOP workflow definition for tests and benches: nodes run one after another (edge i joins node i to
// node i + 1), started by a manual trigger.

export interface ChainNode {
  id: string;
  typeId: string;
  name: string;
  position: { x: number; y: number };
  config: Record<string, unknown>;
  inputs: Record<string, unknown>;
}

/** One node at column `x` (a no-op unless `typeId` says otherwise). */
export const chainNode = (
  id: string,
  x: number,
  typeId = 'core.noop',
  config: Record<string, unknown> = {},
): ChainNode => ({ id, typeId, name: id, position: { x, y: 0 }, config, inputs: {} });

/** The workflow `id` running `nodes` in order. */
export const chainWorkflow = (id: string, nodes: readonly ChainNode[], variables: unknown[] = []) => ({
  id,
  name: id,
  version: '1',
  nodes: [...nodes],
  edges: nodes.slice(1).map((n, i) => ({ id: `e${i + 1}`, sourceNodeId: nodes[i]!.id, targetNodeId: n.id })),
  triggers: [{ id: 'manual', type: 'manual' }],
  variables,
  metadata: {},
  settings: {},
});

/** noop, delay, noop, delay, noop: five nodes with two waits of `delayMs` (the scale-out tests' run shape). */
export const delayChain = (id: string, delayMs: number, names = ['first', 'wait1', 'mid', 'wait2', 'last']) =>
  chainWorkflow(id, [
    chainNode(names[0]!, 0),
    chainNode(names[1]!, 1, 'core.delay', { durationMs: delayMs }),
    chainNode(names[2]!, 2),
    chainNode(names[3]!, 3, 'core.delay', { durationMs: delayMs }),
    chainNode(names[4]!, 4),
  ]);
