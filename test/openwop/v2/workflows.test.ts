// Guarantees (OpenWOP v2 openapi `getWorkflow`, schemas/v2/workflow-definition.schema.json), over real HTTP against
// `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: every workflow the
// catalog holds (the seeded fixtures, the bundled examples, one registered through the API) is answered as a valid v2
// WorkflowDefinition; what v2 closes is carried, not dropped: a metadata key the v2 `WorkflowMetadata` does not
// declare is under `metadata.customProperties`, and every other field is the one /v1/ serves.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, v2Problems } from './v2-kit.js';

const AUTHORED = {
  id: 'authored-metadata',
  name: 'Authored metadata',
  version: '1.0',
  nodes: [{ id: 'a', typeId: 'core.noop', name: 'A', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: { tags: ['t'], owner: 'lab-3', customProperties: { shift: 'night' } },
  settings: {},
};

describe.each(BACKENDS)('GET /workflows/{workflowId} under major 2 on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  let operator: string;
  beforeAll(async () => {
    h = await backend.fresh();
    client = await makeToken(h.location, 'client');
    operator = await makeToken(h.location, 'operator', 'op');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('every catalog workflow is a valid v2 WorkflowDefinition, with what /v1/ serves', async () => {
    const list = await call(srv.url, 'GET', '/v1/workflows', { token: client });
    const ids = (list.body.workflows as any[]).map((w) => (typeof w === 'string' ? w : (w.id ?? w.workflowId)));
    expect(ids).toContain('conformance-subworkflow-input-mapping');
    let movedSomething = false;
    for (const id of ids) {
      const v2 = await call(srv.url, 'GET', `/workflows/${id}`, { token: client, version: '2' });
      expect(v2.status, id).toBe(200);
      expect(v2Problems('workflow-definition', v2.body), id).toEqual([]);
      const v1 = (await call(srv.url, 'GET', `/v1/workflows/${id}`, { token: client })).body;
      const { metadata: m2, ...rest2 } = v2.body;
      const { metadata: m1, ...rest1 } = v1;
      expect(rest2, id).toEqual(rest1);
      // Each v1 metadata key is either where it was or under customProperties.
      for (const [k, v] of Object.entries(m1 as Record<string, unknown>)) {
        if (k in m2 && k !== 'customProperties') expect(m2[k], `${id} ${k}`).toEqual(v);
        else if (k !== 'customProperties') {
          expect(m2.customProperties?.[k], `${id} ${k}`).toEqual(v);
          movedSomething = true;
        }
      }
    }
    expect(movedSomething).toBe(true);
  });

  it('a fixture that v2 would refuse as served by /v1/ (an undeclared metadata key) is carried under customProperties', async () => {
    const id = 'conformance-subworkflow-input-mapping';
    const v1 = (await call(srv.url, 'GET', `/v1/workflows/${id}`, { token: client })).body;
    expect(v2Problems('workflow-definition', v1)).not.toEqual([]);
    const v2 = (await call(srv.url, 'GET', `/workflows/${id}`, { token: client, version: '2' })).body;
    expect(v2.metadata.customProperties.requiresCapability).toBe(v1.metadata.requiresCapability);
    expect(v2.metadata).not.toHaveProperty('requiresCapability');
  });

  it('a workflow registered with its own metadata keeps its custom properties beside the moved keys', async () => {
    const reg = await call(srv.url, 'POST', '/v1/workflows', { token: operator, body: AUTHORED });
    expect(reg.status).toBe(201);
    const v2 = await call(srv.url, 'GET', `/workflows/${AUTHORED.id}`, { token: client, version: '2' });
    expect(v2Problems('workflow-definition', v2.body)).toEqual([]);
    expect(v2.body.metadata).toEqual({ tags: ['t'], customProperties: { owner: 'lab-3', shift: 'night' } });
  });
});
