// The `updates` row of the stream-mode table (v1 stream-modes.md §Mode-to-event mapping, v2 events.md §The events
// channel), restated from the spec for the stream tests (not imported from the code under test).
const UPDATE_NODE_TYPES = [
  'node.completed',
  'node.failed',
  'node.skipped',
  'node.cancelled',
  'node.suspended',
  'node.dispatched',
  'artifact.created',
  'workspace.updated',
];

/** Whether an event of `type` belongs to the `updates` mode. */
export function updatesTier(type: string): boolean {
  return /^(run|interrupt|approval|clarification|eval|deployment)\./.test(type) || UPDATE_NODE_TYPES.includes(type);
}
