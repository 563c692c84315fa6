import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openwopDir } from '../schemas.js';
import type { WorkflowDefinition } from '../types.js';

let declared: ReadonlySet<string> | undefined;

/** The `WorkflowMetadata` keys the v2 schema declares (read from the vendored schema, not transcribed). */
function metadataKeys(): ReadonlySet<string> {
  if (!declared) {
    const schema = JSON.parse(
      readFileSync(join(openwopDir(), 'schemas/v2/workflow-definition.schema.json'), 'utf8'),
    ) as { $defs: { WorkflowMetadata: { properties: Record<string, unknown> } } };
    declared = new Set(Object.keys(schema.$defs.WorkflowMetadata.properties));
  }
  return declared;
}

/**
 * A catalog definition as the v2 `WorkflowDefinition` (`schemas/v2/workflow-definition.schema.json`, served by
 * `getWorkflow`). The v1 shape carries over field for field except `metadata`, which v2 closes: a key the v2
 * `WorkflowMetadata` does not declare (a fixture's `requiresCapability`, an author's own key) moves under
 * `metadata.customProperties`, the v2 seat for author metadata, beside any custom properties already there.
 */
export function projectWorkflow(def: WorkflowDefinition): Record<string, unknown> {
  const keys = metadataKeys();
  const metadata: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((def.metadata ?? {}) as Record<string, unknown>)) {
    if (k === 'customProperties') continue;
    (keys.has(k) ? metadata : custom)[k] = v;
  }
  const own = (def.metadata as { customProperties?: unknown } | undefined)?.customProperties;
  const merged = { ...custom, ...(own && typeof own === 'object' ? (own as Record<string, unknown>) : {}) };
  if (Object.keys(merged).length) metadata.customProperties = merged;
  return { ...(def as unknown as Record<string, unknown>), metadata };
}
