// Guarantees (issue 17 item 2: the v1 test seams the public conformance suite drives), over HTTP against a real
// `mhs-host serve --enable-test-seams` with the aiEnvelope family installed (SQLite file; PostgreSQL too when
// MHS_TEST_PG_URL is set):
// - capability-toggle (`lib/host-toggle.ts`): `{name, value}` sets an overlay entry, `{name, value: null}` removes it,
//   `{reset: true}` clears them, each answering the overlay; a missing name or a non-boolean value is 400
//   invalid_argument;
// - runtime workflow registration `POST /v1/host/sample/workflows`: the scenarios' short form registers (201) and runs
//   like any workflow; a non-empty subWorkflow or dispatch mapping is refused 400 validation_error with
//   `details.requiredCapability` while its capability is toggled off (RFC 0022 §C), and registers after a reset;
// - envelope/accept (RFC 0021 §A, ai-envelope.md §Primitive): the four universal kinds with valid payloads are
//   accepted whatever the node's accepts; a malformed universal payload is invalid with details; a kind outside the
//   host catalog is gated before the node gate, a kind outside the node's accepts is gated listing universals plus
//   accepts; a configured kind is checked against its schema; with host.aiEnvelope.supported toggled off every
//   envelope is invalid / capability_required, and toggled on the contract gates run again; no envelope is 400;
// - X-Force-Engine-Version (fixtures.md conformance-version-fold): discovery advertises
//   testing.forceEngineVersionRange; a run of conformance-version-fold forced to each version of [min, current, max]
//   completes with a readable snapshot and a non-empty log; a version outside the range is 400
//   unsupported_force_engine_version.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);
const meta = { source: 'ai-generation', ts: '2026-05-18T10:00:00Z' };
const UNIVERSALS = ['clarification.request', 'schema.request', 'schema.response', 'error'];

function envelope(type: string, payload: unknown, id = type): Record<string, unknown> {
  return { type, schemaVersion: 1, envelopeId: `env-${id}`, correlationId: `r:n:0:${id}`, payload, meta };
}

describe.each(BACKENDS)('v1 conformance seams ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'client');
    const dir = mkdtempSync(join(tmpdir(), 'mhs-seams-'));
    writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ final: 'unused' }] }));
    writeFileSync(
      join(dir, 'envelopes.json'),
      JSON.stringify({
        'vendor.mhs.note': { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      }),
    );
    srv = await serve(h.location, [
      '--no-workflows',
      '--no-mhs',
      '--enable-test-seams',
      '--ai-script',
      join(dir, 'script.json'),
      '--envelopes',
      join(dir, 'envelopes.json'),
    ]);
    api = client(srv.url, token);
  }, 120_000);

  afterEach(async () => {
    await api.post('/v1/host/sample/test/capability-toggle', { reset: true });
  });

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  const toggle = (body: unknown) => api.post('/v1/host/sample/test/capability-toggle', body);
  const accept = (env: unknown, opts: Record<string, unknown> = {}) =>
    api.post('/v1/host/sample/envelope/accept', { envelope: env, ...opts });

  it('capability-toggle sets, removes and resets overlay entries; a bad body is 400 invalid_argument', async () => {
    const probe = await toggle({ name: '__probe__', value: null });
    expect([probe.status, probe.body.overlay]).toEqual([200, {}]);
    const off = await toggle({ name: 'agents.dispatchMapping', value: false });
    expect(off.body).toEqual({
      overlay: { 'agents.dispatchMapping': false },
      set: { name: 'agents.dispatchMapping', value: false },
    });
    await toggle({ name: 'subWorkflow.inputMapping', value: true });
    const removed = await toggle({ name: 'agents.dispatchMapping', value: null });
    expect(removed.body.overlay).toEqual({ 'subWorkflow.inputMapping': true });
    const reset = await toggle({ reset: true });
    expect([reset.status, reset.body]).toEqual([200, { overlay: {}, reset: true }]);
    for (const bad of [{}, { name: '', value: true }, { name: 'x', value: 'no' }]) {
      const res = await toggle(bad);
      expect([res.status, res.body.error], JSON.stringify(bad)).toEqual([400, 'invalid_argument']);
    }
  });

  it('POST /v1/host/sample/workflows registers the short form, which then runs', async () => {
    const reg = await api.post('/v1/host/sample/workflows', {
      workflowId: `seam-noop-${backend.name}`,
      nodes: [{ nodeId: 'only', typeId: 'core.noop' }],
    });
    expect(reg.status).toBe(201);
    expect(reg.body.workflowId).toBe(`seam-noop-${backend.name}`);
    const run = await api.post('/v1/runs', { workflowId: `seam-noop-${backend.name}` });
    expect(run.status).toBe(201);
    const snap = await api.until(run.body.runId, terminal);
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.only.status).toBe('completed');
    const bad = await api.post('/v1/host/sample/workflows', {
      workflowId: 'seam-bad',
      nodes: [{ nodeId: 'x', typeId: 'no.such.type' }],
    });
    expect([bad.status, bad.body.error]).toEqual([400, 'validation_error']);
  });

  it('a mapping is refused at registration while its capability is toggled off (RFC 0022 §C)', async () => {
    const sub = {
      workflowId: `seam-sub-${backend.name}`,
      nodes: [
        {
          nodeId: 'subwf-1',
          typeId: 'core.subWorkflow',
          config: {
            workflowId: 'conformance-subworkflow-input-mapping-child',
            inputMapping: { receivedPrdId: 'currentPrdId' },
          },
        },
      ],
      variables: [{ name: 'currentPrdId', type: 'string', defaultValue: 'prd-7' }],
    };
    const dispatch = {
      workflowId: `seam-dispatch-${backend.name}`,
      nodes: [{ nodeId: 'dispatch-1', typeId: 'core.dispatch', config: { inputMapping: { childInput: 'parentVar' } } }],
    };
    await toggle({ name: 'subWorkflow.inputMapping', value: false });
    await toggle({ name: 'agents.dispatchMapping', value: false });
    const refusedSub = await api.post('/v1/host/sample/workflows', sub);
    expect([refusedSub.status, refusedSub.body.error]).toEqual([400, 'validation_error']);
    expect(refusedSub.body.details).toEqual({ nodeId: 'subwf-1', requiredCapability: 'subWorkflow.inputMapping' });
    const refusedDispatch = await api.post('/v1/host/sample/workflows', dispatch);
    expect([refusedDispatch.status, refusedDispatch.body.details?.requiredCapability]).toEqual([
      400,
      'agents.dispatchMapping',
    ]);
    expect((await api.get(`/v1/workflows/${sub.workflowId}`)).status).toBe(404);
    await toggle({ reset: true });
    const registered = await api.post('/v1/host/sample/workflows', sub);
    expect(registered.status).toBe(201);
    const run = await api.post('/v1/runs', { workflowId: sub.workflowId });
    const snap = await api.until(run.body.runId, terminal);
    expect(snap.status).toBe('completed');
    const child = snap.childRuns?.[0]?.runId as string;
    expect((await api.get(`/v1/runs/${child}`)).body.variables.receivedPrdId).toBe('prd-7');
  });

  it('envelope/accept: universals with valid payloads are accepted regardless of the node accepts', async () => {
    const payloads: Record<string, unknown> = {
      'clarification.request': { questions: [{ id: 'q1', question: 'Which provider?' }] },
      'schema.request': { envelopeType: 'vendor.mhs.note' },
      'schema.response': { envelopeType: 'vendor.mhs.note', ack: true },
      error: { code: 'validation_failed', message: 'cannot produce JSON for that schema' },
    };
    for (const kind of UNIVERSALS) {
      const r = await accept(envelope(kind, payloads[kind]), { nodeAllowedKinds: ['vendor.x.foo.create'] });
      expect([r.status, r.body.status], kind).toEqual([200, 'accepted']);
      expect(r.body.envelopeId).toBe(`env-${kind}`);
    }
    const bad = await accept(envelope('clarification.request', { contextType: 'form-field' }));
    expect(bad.body.status).toBe('invalid');
    expect(Array.isArray(bad.body.details) && bad.body.details.length > 0).toBe(true);
    const noMeta = await accept({ type: 'error', envelopeId: 'e', correlationId: 'c', payload: {} });
    expect(noMeta.body.status).toBe('invalid');
  });

  it('envelope/accept: the host gate fires before the node gate; gated lists universals plus accepts', async () => {
    const nodeGated = await accept(envelope('vendor.x.bar.create', {}), {
      hostSupportedEnvelopes: ['vendor.x.bar.create', 'vendor.x.foo.create'],
      nodeAllowedKinds: ['vendor.x.foo.create'],
    });
    expect(nodeGated.body).toMatchObject({ status: 'gated', reason: 'envelope_contract_violation' });
    expect(nodeGated.body.allowedKinds).toEqual(expect.arrayContaining([...UNIVERSALS, 'vendor.x.foo.create']));
    expect(nodeGated.body.gate).toEqual({
      refusedType: 'vendor.x.bar.create',
      acceptedTypes: nodeGated.body.allowedKinds,
      refusalMode: 'fail-node',
    });
    const hostGated = await accept(envelope('vendor.unadvertised.kind', {}), {
      hostSupportedEnvelopes: ['vendor.advertised.only'],
      nodeAllowedKinds: ['vendor.unadvertised.kind'],
      projectTo: { runId: 'r', refusalMode: 'discard-and-warn' },
    });
    expect(hostGated.body.status).toBe('gated');
    expect(hostGated.body.gate.refusalMode).toBe('discard-and-warn');
    // Without hostSupportedEnvelopes the advertised catalog is the host gate, and its schemas check payloads.
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.supportedEnvelopes).toContain('vendor.mhs.note');
    expect((await accept(envelope('vendor.mhs.note', { text: 'hi' }))).body.status).toBe('accepted');
    expect((await accept(envelope('vendor.mhs.note', { text: 3 }))).body.status).toBe('invalid');
    expect((await accept(envelope('vendor.other.kind', {}))).body.status).toBe('gated');
    const missing = await api.post('/v1/host/sample/envelope/accept', { hostSupportedEnvelopes: [] });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_argument']);
  });

  it('envelope/accept: host.aiEnvelope.supported toggled off refuses first with capability_required', async () => {
    const env = envelope('vendor.advertised.kind', {}, 'capstack');
    const opts = { hostSupportedEnvelopes: ['vendor.advertised.kind'], nodeAllowedKinds: ['vendor.advertised.kind'] };
    expect((await accept(env, opts)).body.status).toBe('accepted');
    await toggle({ name: 'host.aiEnvelope.supported', value: false });
    const refused = await accept(env, opts);
    expect([refused.status, refused.body.status, refused.body.reason]).toEqual([200, 'invalid', 'capability_required']);
    await toggle({ name: 'host.aiEnvelope.supported', value: true });
    const through = await accept(envelope('vendor.unadvertised.kind', {}), {
      hostSupportedEnvelopes: ['vendor.advertised.only'],
      nodeAllowedKinds: ['vendor.unadvertised.kind'],
    });
    expect(through.body.status).toBe('gated');
    expect(through.body.reason).not.toBe('capability_required');
  });

  it('conformance-version-fold under X-Force-Engine-Version across the advertised range', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    const range = doc.testing?.forceEngineVersionRange as { min: number; max: number };
    expect(Number.isInteger(range.min) && range.min <= range.max).toBe(true);
    expect(doc.fixtures).toContain('conformance-version-fold');
    for (const v of new Set([range.min, doc.engineVersion as number, range.max])) {
      const create = await api.post(
        '/v1/runs',
        { workflowId: 'conformance-version-fold' },
        { 'x-force-engine-version': String(v) },
      );
      expect(create.status, String(v)).toBe(201);
      expect((await api.until(create.body.runId, terminal)).status).toBe('completed');
      const poll = await api.get(`/v1/runs/${create.body.runId}/events/poll?lastSequence=0&timeout=1`);
      expect(poll.status).toBe(200);
      expect(poll.body.events.length).toBeGreaterThan(0);
    }
    const out = await api.post(
      '/v1/runs',
      { workflowId: 'conformance-version-fold' },
      { 'x-force-engine-version': String(range.max + 1) },
    );
    expect([out.status, out.body.error]).toEqual([400, 'unsupported_force_engine_version']);
    expect(out.body.details).toMatchObject({ min: range.min, max: range.max });
  });
});
