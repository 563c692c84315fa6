// Guarantee (issue 20 item 1): registering or replacing a workflow is an operator action. Against a real `serve` on
// SQLite and PostgreSQL: a client (or viewer, or agent) token's `POST /v1/workflows` is 403 and writes nothing (no
// version, no ledger entry, the current definition unchanged); an operator's registration is stored as a version
// with its digest and recorded in the host ledger as `workflow.registered` with the principal, the same definition
// again makes no new version; a run started before a replacement keeps executing the definition it started with
// (`workflowDigest` pinned) while a run started after it runs the new one; the host's start-up upserts of its fixtures
// make no new version on a restart.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { workflowDigest } from '../../src/openwop/workflow-versions.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

/** `gate` (an approval interrupt) then `next`: the replacement differs only in the node after the gate. */
function gated(id: string, next: string): WorkflowDefinition {
  return {
    id,
    name: id,
    version: '1.0',
    nodes: [
      {
        id: 'gate',
        typeId: 'core.approvalGate',
        name: 'Gate',
        position: { x: 0, y: 0 },
        config: { title: 'Hold', actions: ['accept', 'reject'] },
        inputs: {},
      },
      { id: next, typeId: 'core.noop', name: next, position: { x: 1, y: 0 }, config: {}, inputs: {} },
    ],
    edges: [{ id: 'e1', sourceNodeId: 'gate', targetNodeId: next }],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  } as unknown as WorkflowDefinition;
}

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

describe.each(BACKENDS)('workflow registration on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  const t: Record<string, string> = {};
  const api = (role: string) => client(srv.url, t[role]!);

  /** The stored versions of `id`, read from the store itself. */
  async function versions(id: string): Promise<Array<{ seq: number; digest: string; principal: string | null }>> {
    const db = await openDb(h.location);
    try {
      return (
        await db.all<{ seq: number | string; digest: string; principal: string | null }>(
          'SELECT seq, digest, principal FROM openwop_workflow_versions WHERE workflow_id = ? ORDER BY seq',
          [id],
        )
      ).map((r) => ({ ...r, seq: Number(r.seq) }));
    } finally {
      await db.close();
    }
  }
  async function registered(): Promise<any[]> {
    const res = await api('operator').get('/v1/operator/ledger?kind=workflow.registered&limit=500');
    expect(res.status).toBe(200);
    return res.body.entries as any[];
  }

  beforeAll(async () => {
    h = await backend.fresh();
    for (const role of ['client', 'operator', 'viewer', 'agent'])
      t[role] = await makeToken(h.location, role as 'client', `wf-${role}`);
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('a client, viewer or agent token cannot register a workflow: 403 and nothing written', async () => {
    const before = await registered();
    for (const role of ['client', 'viewer', 'agent']) {
      const res = await api(role).post('/v1/workflows', gated('not-by-clients', 'after'));
      expect([role, res.status, res.body.error]).toEqual([role, 403, 'forbidden']);
    }
    expect(await versions('not-by-clients')).toEqual([]);
    expect((await api('client').get('/v1/workflows/not-by-clients')).status).toBe(404);
    expect(await registered()).toEqual(before);
  });

  it('nor replace one the host registered: the fixture stays as it was', async () => {
    const list = (await api('client').get('/v1/workflows')).body.workflows as Array<{ id: string }>;
    const fixture = list[0]!.id;
    const was = (await api('client').get(`/v1/workflows/${fixture}`)).body;
    const vs = await versions(fixture);
    const res = await api('client').post('/v1/workflows', gated(fixture, 'hijacked'));
    expect(res.status).toBe(403);
    expect((await api('client').get(`/v1/workflows/${fixture}`)).body).toEqual(was);
    expect(await versions(fixture)).toEqual(vs);
  });

  it('an operator registers and replaces: versions with digests, each recorded with the principal', async () => {
    const v1 = gated('pinned', 'after-v1');
    const v2 = gated('pinned', 'after-v2');
    const first = await api('operator').post('/v1/workflows', v1);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ workflowId: 'pinned', digest: workflowDigest(v1), revision: 1 });
    // The same definition again is no new version and no new entry.
    expect((await api('operator').post('/v1/workflows', v1)).body).toMatchObject({ revision: 1 });
    let entries = (await registered()).filter((e) => e.workflow_id === 'pinned');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      workflow_seq: 1,
      workflow_digest: workflowDigest(v1),
      replaced_digest: null,
      source: 'api',
      principal: { name: 'wf-operator', role: 'operator' },
    });

    // A run started on v1 waits at its gate while the operator replaces the workflow.
    const run = await api('client').post('/v1/runs', { workflowId: 'pinned' });
    expect(run.status).toBe(201);
    const runId = run.body.runId as string;
    await api('client').until(runId, (s) => s.status === 'waiting-approval');
    const second = await api('operator').post('/v1/workflows', v2);
    expect(second.body).toMatchObject({ digest: workflowDigest(v2), revision: 2 });
    entries = (await registered()).filter((e) => e.workflow_id === 'pinned');
    expect(entries.map((e) => [e.workflow_seq, e.workflow_digest, e.replaced_digest])).toEqual([
      [1, workflowDigest(v1), null],
      [2, workflowDigest(v2), workflowDigest(v1)],
    ]);
    const stored = await versions('pinned');
    expect(stored.map((v) => [v.seq, v.digest])).toEqual([
      [1, workflowDigest(v1)],
      [2, workflowDigest(v2)],
    ]);
    expect(stored.every((v) => v.principal === entries[0].principal.id)).toBe(true);

    // The run keeps the definition it started with; a run started now runs the replacement.
    const resolved = await api('operator').post(`/v1/runs/${runId}/interrupts/gate`, {
      resumeValue: { action: 'accept' },
    });
    expect(resolved.status).toBe(200);
    const done = await api('client').until(runId, terminal);
    expect(done.status).toBe('completed');
    expect(done.workflowDigest).toBe(workflowDigest(v1));
    expect(Object.keys(done.nodeStates).sort()).toEqual(['after-v1', 'gate']);
    const later = await api('client').post('/v1/runs', { workflowId: 'pinned' });
    expect(later.body.workflowDigest).toBe(workflowDigest(v2));
    expect(Object.keys(later.body.nodeStates)).not.toContain('after-v1');
    await api('client').post(`/v1/runs/${later.body.runId as string}/cancel`, {});
  });

  it('the fixtures registered at start-up make no new version on a restart', async () => {
    const list = (await api('client').get('/v1/workflows')).body.workflows as Array<{ id: string; source: string }>;
    const fixtures = list.filter((w) => w.source !== 'api').map((w) => w.id);
    expect(fixtures.length).toBeGreaterThan(0);
    const before = await Promise.all(fixtures.map((id) => versions(id)));
    expect(before.every((v) => v.length === 1 && v[0]!.principal === null)).toBe(true);
    expect(await srv.stop()).toBe(0);
    srv = await serve(h.location);
    expect(await Promise.all(fixtures.map((id) => versions(id)))).toEqual(before);
    // Start-up registrations are the host's own: no ledger entry names them.
    const named = (await registered()).map((e) => e.workflow_id);
    expect(named.filter((id) => fixtures.includes(id))).toEqual([]);
  });
});
