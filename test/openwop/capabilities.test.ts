// Guarantees (issue 7 §5): the discovery document validates against capabilities.schema.json, keeps its
// families at the root, and advertises only what works: every family it lists has a behaviour check
// below that exercises it on a real host (SQLite file), and a family without a check fails the test.
// `fixtures[]` is computed from the vendored fixtures whose node types are all registered.
// multiPartyConversation: the council fixtures run over REST (roster refusals included).
import { mkdtempSync, readFileSync } from 'node:fs';
/* eslint-disable @typescript-eslint/no-explicit-any -- the discovery document is read loosely in checks */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { openwopDir, openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { waitForEvent } from './service-test-kit.js';

let db: Db;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;
const clock = new RealClock();

beforeAll(async () => {
  db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-caps-')), 'host.db'));
  host = await createOpenwopHost({
    db,
    clock,
    workflowsDir: false,
    limits: { maxNodeExecutions: 4, maxRequestBodyBytes: 4096 },
  });
  const tokens = createTokenStore(db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('caps', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock, testSeams: true }));
});

afterAll(async () => {
  await app.close();
  await host.close();
  await db.close();
});

const chain = (id: string, n: number): WorkflowDefinition => ({
  id,
  name: id,
  version: '1',
  nodes: Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    typeId: 'core.noop',
    name: `n${i}`,
    position: { x: i, y: 0 },
    config: {},
    inputs: {},
  })),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ id: `e${i}`, sourceNodeId: `n${i}`, targetNodeId: `n${i + 1}` })),
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
});

async function run(workflowId: string, key?: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    headers: { ...auth, ...(key ? { 'idempotency-key': key } : {}) },
    payload: { workflowId },
  });
  const runId = (res.json() as { runId: string }).runId;
  await host.runs.waitTerminal(runId);
  return { res, runId, snap: await host.runs.snapshot(runId), events: await host.store.events(runId) };
}

/** One behaviour check per advertised family. */
const CHECKS: Record<string, (doc: Record<string, any>) => Promise<void>> = {
  protocolVersion: async (doc) => expect(doc.protocolVersion).toBe('1.0'),
  // The majors served (both by default): each one listed answers under its own major, and a major not listed is
  // refused naming exactly this list.
  protocolVersions: async (doc) => {
    expect(doc.protocolVersions).toEqual(['1.0', '2.0']);
    for (const v of doc.protocolVersions as string[]) {
      const r = await app.inject({ method: 'GET', url: '/.well-known/openwop', headers: { 'openwop-version': v } });
      expect([r.statusCode, r.headers['openwop-version']]).toEqual([200, v]);
    }
    const three = await app.inject({ method: 'GET', url: '/.well-known/openwop', headers: { 'openwop-version': '3' } });
    expect(three.statusCode).toBe(406);
    expect(three.json().details.protocolVersions).toEqual(doc.protocolVersions);
  },
  // Through the overlap the host prefers major 1, and a header-less request is served under it.
  preferredVersion: async (doc) => {
    expect(doc.preferredVersion).toBe(doc.protocolVersion);
    const plain = await app.inject({ method: 'GET', url: '/.well-known/openwop' });
    expect(plain.headers['openwop-version']).toBe(doc.preferredVersion);
  },
  // With the test seams: X-Force-Engine-Version inside the range runs, outside it is refused.
  testing: async (doc) => {
    const { min, max } = doc.testing.forceEngineVersionRange as { min: number; max: number };
    const post = (v: number) =>
      app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: { ...auth, 'content-type': 'application/json', 'x-force-engine-version': String(v) },
        payload: { workflowId: 'conformance-noop' },
      });
    expect((await post(max)).statusCode).toBe(201);
    expect((await post(min)).statusCode).toBe(201);
    expect((await post(max + 1)).json().error).toBe('unsupported_force_engine_version');
  },
  // Nothing here emits AI envelopes: the catalog is empty and the versions map too.
  supportedEnvelopes: async (doc) => expect(doc.supportedEnvelopes).toEqual([]),
  schemaVersions: async (doc) => expect(doc.schemaVersions).toEqual({}),
  limits: async (doc) => {
    expect(doc.limits).toMatchObject({ clarificationRounds: 0, schemaRounds: 0, envelopesPerTurn: 0 });
    // maxNodeExecutions is enforced: a 6-node chain under a limit of 4 fails with cap.breached.
    await host.catalog.register(chain('caps-chain', doc.limits.maxNodeExecutions + 2));
    const r = await run('caps-chain');
    expect(r.snap.status).toBe('failed');
    expect(r.snap.error?.code).toBe('recursion_limit_exceeded');
    expect(r.events.find((e) => e.type === 'cap.breached')?.payload).toMatchObject({
      kind: 'node-executions',
      limit: doc.limits.maxNodeExecutions,
    });
    // maxRequestBodyBytes is enforced: a bigger body is refused with the envelope.
    const big = await app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ workflowId: 'x'.repeat(doc.limits.maxRequestBodyBytes) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: 'validation_error' });
  },
  implementation: async (doc) => expect(doc.implementation.name).toBe('mhs-host'),
  engineVersion: async (doc) => {
    const r = await run('conformance-noop');
    expect(r.events.every((e) => e.engineVersion === String(doc.engineVersion))).toBe(true);
  },
  eventLogSchemaVersion: async (doc) => {
    const r = await run('conformance-noop');
    expect(r.snap.eventLogSchemaVersion).toBe(doc.eventLogSchemaVersion);
  },
  supportedTransports: async (doc) => {
    expect(doc.supportedTransports).toEqual(['rest']);
    const r = await run('conformance-noop');
    expect(r.res.statusCode).toBe(201);
  },
  subWorkflow: async (doc) => {
    expect(doc.subWorkflow).toEqual({ inputMapping: true });
    // inputMapping seeds the child's variable over its own default (RFC 0022 §B).
    await host.catalog.register({
      ...chain('caps-parent', 1),
      variables: [{ name: 'currentPrdId', type: 'string', defaultValue: 'prd-1' }],
      nodes: [
        {
          id: 'call',
          typeId: 'core.subWorkflow',
          name: 'call',
          position: { x: 0, y: 0 },
          inputs: {},
          config: {
            workflowId: 'conformance-subworkflow-input-mapping-child',
            inputMapping: { receivedPrdId: 'currentPrdId' },
            outputMapping: { echoed: 'receivedPrdId' },
          },
        },
      ],
    });
    const r = await run('caps-parent');
    expect(r.snap.status).toBe('completed');
    expect(r.snap.variables.echoed).toBe('prd-1');
    const child = await host.runs.snapshot((r.snap.nodeStates.call!.outputs as { childRunId: string }).childRunId);
    expect(child).toMatchObject({ parentRunId: r.runId, parentNodeId: 'call', variables: { receivedPrdId: 'prd-1' } });
  },
  idempotency: async (doc) => {
    expect(doc.idempotency).toEqual({ crossRegion: 'single-region' });
    const a = await run('conformance-noop', 'caps-key');
    const b = await run('conformance-noop', 'caps-key');
    expect(b.runId).toBe(a.runId);
    expect(b.res.statusCode).toBe(200);
  },
  replay: async (doc) => {
    // replay.md RFC 0140: a replay fork over REST fires no effect at the counted seam (full coverage: replay-*.test.ts).
    expect(doc.replay).toMatchObject({
      supported: true,
      modes: ['replay', 'branch'],
      sideEffectSuppression: 'recorded-outcome',
    });
    const count = async (runId: string) =>
      (
        await app.inject({ method: 'GET', url: `/v1/host/sample/replay/effect-count?runId=${runId}`, headers: auth })
      ).json().effectCount as number;
    const src = await run('conformance-replay-effect');
    expect(src.snap.status).toBe('completed');
    expect(await count(src.runId)).toBe(1);
    const fork = await app.inject({
      method: 'POST',
      url: `/v1/runs/${src.runId}:fork`,
      headers: auth,
      payload: { fromSeq: 0, mode: 'replay' },
    });
    expect(fork.statusCode).toBe(201);
    const forkId = (fork.json() as { runId: string }).runId;
    expect(await host.runs.waitTerminal(forkId)).toBe('completed');
    expect([await count(forkId), await count(src.runId)]).toEqual([0, 1]);
  },
  // RFC 0101/0239: a non-member's turn is refused unconsumed; a roster over maxParticipants refuses run creation.
  multiPartyConversation: async (doc) => {
    expect(doc.multiPartyConversation).toMatchObject({ supported: true });
    expect(doc.multiPartyConversation.maxParticipants).toBeLessThan(64);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: auth,
      payload: { workflowId: 'conformance-multi-party-council' },
    });
    const runId = (created.json() as { runId: string }).runId;
    await waitForEvent(host, runId, (e) => e.type === 'interrupt.requested');
    const opened = (await host.store.events(runId)).find((e) => e.type === 'conversation.opened');
    expect(opened?.payload.participants).toHaveLength(3);
    const url = `/v1/runs/${runId}/interrupts/convo`;
    const intruder = { resumeValue: { role: 'agent', speakerId: 'host:intruder', content: 'x' } };
    const refused = await app.inject({ method: 'POST', url, headers: auth, payload: intruder });
    expect([refused.statusCode, refused.json().error]).toEqual([422, 'conversation_speaker_not_participant']);
    expect((await host.runs.snapshot(runId)).status).toBe('waiting-input');
    // A member's turn is taken; the conversation closes after it (one turn by default).
    const member = { resumeValue: { role: 'agent', speakerId: 'host:conformance-council-b', content: 'caps' } };
    expect((await app.inject({ method: 'POST', url, headers: auth, payload: member })).statusCode).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const types = (await host.store.events(runId)).map((e) => e.type).filter((t) => t.startsWith('conversation.'));
    expect(types).toEqual(['conversation.opened', 'conversation.exchanged', 'conversation.closed']);
    const oversize = await app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: auth,
      payload: { workflowId: 'conformance-multi-party-council-oversize' },
    });
    expect(oversize.statusCode).toBe(422);
    expect(oversize.json()).toMatchObject({
      error: 'conversation_roster_exceeded',
      details: { maxParticipants: doc.multiPartyConversation.maxParticipants },
    });
  },
  fixtures: async (doc) => {
    const dir = join(openwopDir(), 'fixtures');
    for (const id of doc.fixtures as string[]) {
      const def = JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as WorkflowDefinition;
      for (const n of def.nodes) expect(host.registry.has(n.typeId)).toBe(true);
      expect(await host.catalog.get(id)).toBeDefined();
    }
    // A fixture whose node types are not all registered is not listed.
    expect(doc.fixtures).not.toContain('conformance-dispatch-loop');
    expect(doc.fixtures).toContain('conformance-noop');
    // Every listed fixture that needs no interaction runs to a terminal state.
    for (const id of ['conformance-noop', 'conformance-subworkflow-parent', 'conformance-subworkflow-input-mapping']) {
      expect((await run(id)).snap.status).toBe('completed');
    }
  },
};

describe('capabilities document', () => {
  it('validates against capabilities.schema.json (families at the root)', async () => {
    const res = await app.inject({ method: 'GET', url: '/.well-known/openwop' });
    expect(res.statusCode).toBe(200);
    expect(openwopSchemas().check(schemaId('capabilities'), res.json())).toEqual([]);
  });

  it('advertises only families that have a behaviour check, and each check passes', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/.well-known/openwop' })).json() as Record<string, any>;
    const unchecked = Object.keys(doc).filter((k) => !(k in CHECKS));
    expect(unchecked).toEqual([]);
    for (const family of Object.keys(doc)) await CHECKS[family]!(doc);
  });

  it('serves the OpenAPI document', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.json()).toMatchObject({ openapi: '3.1.0' });
    expect(Object.keys((res.json() as { paths: object }).paths)).toEqual(
      expect.arrayContaining(['/v1/runs', '/v1/runs/{runId}/events']),
    );
  });
});
