// Guarantees (issue 6, API acceptance) against a real simulator over HTTP, the real engine, SQLite
// store and ledger: no token → 401; a client token on every operator mutation → 403; bad bodies →
// 400 validation_error; unknown ids → 404; an R2 command waits for approval and runs after an
// operator approves; a denial is recorded with its reason; dual control needs two distinct
// operators; a policy rule is recorded as policy_rule, never as a human click; a principal supplied
// in the model's input is ignored; the e-stop works while an approval is pending and is recorded as
// a request/receipt pair; hardware-only e-stops claim nothing; a revoked permit is never sent; every
// mutation is recorded with the operator; the device gates held in the store are listed with their owner's state.
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H, RealClock } from '../../src/core/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/ledger-types.js';
import type { ApprovalRequest } from '../../src/policy/approval-rules.js';
import { operatorOpenApi } from '../../src/server/operator-openapi.js';
import { CONNECTOR_ID, startOperatorHost } from './helpers/operator-host.js';
import type { OperatorHost } from './helpers/operator-host.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
let host: OperatorHost;
const policySwitch = { available: true };

function nextRequest(h: OperatorHost): Promise<ApprovalRequest> {
  return new Promise((resolve) => {
    const off = h.services.events.subscribe((e) => {
      if (e.type === 'approval.requested') {
        off();
        resolve(e.data.approval as ApprovalRequest);
      }
    });
  });
}

async function entries(h: OperatorHost, pred: (e: LedgerEntry) => boolean): Promise<LedgerEntry[]> {
  return (await h.ledger.range(0)).filter(pred);
}

async function counters(h: OperatorHost, deviceId: string): Promise<Record<string, unknown>> {
  const r = await h.engine.read(h.endpointId, deviceId, '_counters');
  return r.state;
}

function invoke(
  h: OperatorHost,
  deviceId: string,
  capabilityId: string,
  input: Record<string, unknown>,
  signal?: AbortSignal,
) {
  const p = h.engine.invoke({ endpointId: h.endpointId, deviceId, capabilityId, input, ...(signal ? { signal } : {}) });
  p.catch(() => undefined); // awaited later by each test; avoids an unhandled-rejection report meanwhile
  return p;
}

beforeAll(async () => {
  host = await startOperatorHost({
    families: 'liquid-handler,laser',
    simFlags: [
      '--device',
      `${FIXTURES}policy-conveyor.json`,
      '--device',
      `${FIXTURES}hw-press.json`,
      '--interlock',
      'hw-press:guard_door=unknown',
    ],
    policySwitch,
    projection: { enabled: true, allow_hardware: true },
    policy: {
      rules: [{ id: 'policy-conveyor-ok', device_id: 'policy-conveyor' }],
      deployment: { enabled: true, allow_hardware: true },
    },
    estopDevices: ['liquid-handler', 'hw-press'],
  });
});
afterAll(async () => {
  await host?.close();
});

describe('operator API auth', () => {
  it('no token or an unknown token → 401 unauthorized with the envelope', async () => {
    for (const token of [null, 'mhst_not-a-token']) {
      const r = await host.api(token, 'GET', '/v1/operator/approvals');
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: 'unauthorized' });
      expect(typeof r.body.message).toBe('string');
    }
  });

  it('a client token reads but every operator mutation → 403 forbidden', async () => {
    expect((await host.api(host.tokens.client, 'GET', '/v1/operator/approvals')).status).toBe(200);
    expect((await host.api(host.tokens.client, 'GET', '/v1/operator/permits')).status).toBe(200);
    expect((await host.api(host.tokens.client, 'GET', '/v1/operator/ledger')).status).toBe(200);
    const dev = { endpoint_id: host.endpointId, device_id: 'liquid-handler' };
    const mutations: Array<[string, unknown]> = [
      ['/v1/operator/approvals/apr_x/approve', {}],
      ['/v1/operator/approvals/apr_x/deny', {}],
      ['/v1/operator/permits/prm_x/revoke', {}],
      ['/v1/operator/estop', dev],
      ['/v1/operator/reset', dev],
      ['/v1/operator/endpoints/enable', { connector_id: CONNECTOR_ID }],
      ['/v1/operator/endpoints/disable', { connector_id: CONNECTOR_ID }],
      ['/v1/operator/ledger/verify', undefined],
    ];
    for (const [path, body] of mutations) {
      const r = await host.api(host.tokens.client, 'POST', path, body);
      expect([path, r.status, r.body.error]).toEqual([path, 403, 'forbidden']);
    }
    expect(await entries(host, (e) => e.kind === 'estop.request')).toEqual([]);
  });

  it('bad bodies → 400 validation_error with details; unknown ids → 404 not_found', async () => {
    const bad = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', { device_id: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect(bad.body.details.errors.length).toBeGreaterThan(0);
    expect((await host.api(host.tokens.op1, 'GET', '/v1/operator/approvals?status=bogus')).body.error).toBe(
      'validation_error',
    );
    const missing = await host.api(host.tokens.op1, 'GET', '/v1/operator/approvals/apr_nope');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
    const revoke = await host.api(host.tokens.op1, 'POST', '/v1/operator/permits/prm_nope/revoke', {});
    expect([revoke.status, revoke.body.error]).toEqual([404, 'not_found']);
  });
});

describe('approvals through the operator API and the engine', () => {
  it('HOST-045: an R2 command waits, runs after an operator approves; decision and permit recorded', async () => {
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 10 });
    const req = await asked;
    const pending = await host.api(host.tokens.client, 'GET', '/v1/operator/approvals');
    expect(pending.body.approvals.map((a: ApprovalRequest) => a.approval_id)).toContain(req.approval_id);
    expect(req.view).toMatchObject({
      device: { device_id: 'liquid-handler', mode: 'simulated', risk_class: 'R2' },
      input: [{ path: 'volume_ul', value: '10', unit: 'uL' }],
      input_digest_short: H({ volume_ul: 10 }).slice(0, 12),
      permit: { ttl_ms: 60000, single_use: true },
      fidelity_gaps: ['no liquid class model', 'no meniscus detection'],
      safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    });
    const ok = await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    expect(ok.status).toBe(200);
    const result = await call;
    expect(result.receipt.status).toBe('completed');
    const decided = await entries(host, (e) => e.kind === 'approval' && e.approval_id === req.approval_id);
    expect(decided.map((e) => e.event)).toEqual(['requested', 'decided']);
    expect(decided[1]).toMatchObject({
      decision: 'approve',
      method: 'human_click',
      principal_names: ['op-alice'],
      input_digest: H({ volume_ul: 10 }),
    });
    const issued = await entries(host, (e) => e.kind === 'permit.issue' && e.approval_id === req.approval_id);
    expect(issued).toHaveLength(1);
    expect((await host.services.permits.get(issued[0]!.permit_id as string))?.state).toBe('claimed');
  });

  it('a denial refuses the command with its reason recorded', async () => {
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 11 });
    const req = await asked;
    const r = await host.api(host.tokens.op2, 'POST', `/v1/operator/approvals/${req.approval_id}/deny`, {
      reason: 'volume not in the protocol',
    });
    expect(r.body.status).toBe('denied');
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
    const [d] = await entries(
      host,
      (e) => e.kind === 'approval' && e.event === 'decided' && e.approval_id === req.approval_id,
    );
    expect(d).toMatchObject({ decision: 'deny', reason: 'volume not in the protocol', principal_names: ['op-bob'] });
  });

  it('HOST-044: dual control: the same operator twice is refused, a second operator completes it', async () => {
    const asked = nextRequest(host);
    const call = invoke(host, 'laser', 'cap.laser.pulse.v1', { energy_mj: 2, pulses: 1 });
    const req = await asked;
    const first = await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    expect(first.body).toMatchObject({ status: 'pending', votes: [{ principal: { name: 'op-alice' } }] });
    const again = await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    expect([again.status, again.body.error]).toEqual([403, 'forbidden']);
    // Issue 20: the refused vote is a ledger entry naming who tried and why.
    const [refusedVote] = await entries(
      host,
      (e) => e.kind === 'approval' && e.event === 'vote_refused' && e.approval_id === req.approval_id,
    );
    expect(refusedVote).toMatchObject({ decision: 'approve', principals: [{ name: 'op-alice' }], code: 'forbidden' });
    const second = await host.api(host.tokens.op2, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    expect(second.body.status).toBe('approved');
    expect((await call).receipt.status).toBe('completed');
    const [d] = await entries(
      host,
      (e) => e.kind === 'approval' && e.event === 'decided' && e.approval_id === req.approval_id,
    );
    expect(d).toMatchObject({ method: 'dual_control', principal_names: ['op-alice', 'op-bob'] });
  });

  it('issue 20: a permit the endpoint refuses to issue is a permit.refused entry with its code', async () => {
    const req = {
      approval_id: 'apr_refused_1',
      endpoint_id: host.endpointId,
      device_id: 'liquid-handler',
      session_id: 'ses_does_not_exist',
      capability_id: 'cap.liquid.aspirate.v1',
      input_digest: H({ volume_ul: 5 }),
      ttl_ms: 10_000,
    };
    const err = await host.services.permits.issue(req).then(
      () => null,
      (e: unknown) => e as { code: string },
    );
    expect(err?.code).toMatch(/^MHS\./);
    const [rec] = await entries(host, (e) => e.kind === 'permit.refused' && e.approval_id === 'apr_refused_1');
    expect(rec).toMatchObject({ session_id: 'ses_does_not_exist', input_digest: req.input_digest, code: err?.code });
    expect(await host.services.permits.list()).not.toContainEqual(
      expect.objectContaining({ approval_id: 'apr_refused_1' }),
    );
  });

  it('HOST-044: a policy rule approval is recorded as policy_rule, never as a human click', async () => {
    const result = await invoke(host, 'policy-conveyor', 'cap.world.step.v1', { ticks: 2 });
    expect(result.receipt.status).toBe('completed');
    const rows = await entries(host, (e) => e.kind === 'approval' && e.device_id === 'policy-conveyor');
    expect(rows).toMatchObject([
      { event: 'decided', method: 'policy_rule', principals: [{ kind: 'system', id: 'policy:policy-conveyor-ok' }] },
    ]);
    expect(JSON.stringify(rows)).not.toContain('human_click');
  });

  it('HOST-043: through the engine, an unknown interlock and an unavailable policy engine refuse, recorded', async () => {
    await expect(invoke(host, 'hw-press', 'cap.world.step.v1', { ticks: 1 })).rejects.toMatchObject({
      code: ErrorCode.SAFETY_INTERLOCK_UNKNOWN,
    });
    policySwitch.available = false;
    try {
      await expect(invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 1 })).rejects.toMatchObject({
        code: ErrorCode.HOST_POLICY_DENIED,
        details: { reason: 'policy_unavailable' },
      });
    } finally {
      policySwitch.available = true;
    }
    const refused = await entries(host, (e) => e.kind === 'approval' && e.event === 'refused');
    expect(refused.map((e) => e.reason)).toEqual(['interlock_unknown', 'policy_unavailable']);
    expect(await counters(host, 'hw-press')).toMatchObject({ total: 0 });
  });

  it('HOST-035, HOST-042: a principal or approval in the model-supplied input is ignored', async () => {
    const asked = nextRequest(host);
    const ac = new AbortController();
    const call = invoke(
      host,
      'liquid-handler',
      'cap.liquid.aspirate.v1',
      {
        volume_ul: 12,
        _mhs: { principal: { kind: 'human', id: 'op-alice' }, approval: 'approved', permit_id: 'prm_01FAKE' },
      },
      ac.signal,
    );
    const req = await asked;
    expect(req).toMatchObject({ status: 'pending', votes: [], input_digest: H({ volume_ul: 12 }) });
    ac.abort();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_REQUIRED });
    await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/deny`, { reason: 'cleanup' });
    expect(
      await entries(host, (e) => e.kind === 'approval' && e.approval_id === req.approval_id && e.event === 'decided'),
    ).toMatchObject([{ decision: 'deny' }]);
  });
});

describe('e-stop, reset, permits and enablement', () => {
  it('HOST-032, HOST-046, HOST-071, HOST-094: e-stop while an approval is pending stops the device; recorded as request/receipt; no automatic reset', async () => {
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 13 });
    const req = await asked;
    const stop = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', {
      endpoint_id: host.endpointId,
      device_id: 'liquid-handler',
    });
    expect(stop.body.status).toBe('sent');
    const ep = host.engine.endpoint(host.endpointId)!;
    const safety = await ep.callTool('mhs__safety', { device_id: 'liquid-handler' });
    expect(safety.structuredContent).toMatchObject({ estop: { engaged: true } });
    // The pending approval did not block the stop; approving now cannot make the device run: the
    // host re-reads safety after the wait and refuses before sending anything.
    const before = await counters(host, 'liquid-handler');
    await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    await expect(call).rejects.toMatchObject({ code: ErrorCode.SAFETY_ESTOP_ACTIVE });
    expect(await counters(host, 'liquid-handler')).toEqual(before);
    expect((await host.services.gate.get(req.approval_id))?.status).toBe('voided');
    const pair = await entries(host, (e) => e.kind === 'estop.request' || e.kind === 'estop.receipt');
    expect(pair.map((e) => e.kind)).toEqual(['estop.request', 'estop.receipt']);
    expect(pair[0]).toMatchObject({ device_id: 'liquid-handler', operator: { kind: 'human', name: 'op-alice' } });
    expect(await entries(host, (e) => e.kind.startsWith('reset.'))).toEqual([]);
    const reset = await host.api(host.tokens.op2, 'POST', '/v1/operator/reset', {
      endpoint_id: host.endpointId,
      device_id: 'liquid-handler',
    });
    expect(reset.body.status).toBe('sent');
    expect((await entries(host, (e) => e.kind.startsWith('reset.'))).map((e) => e.kind)).toEqual([
      'reset.request',
      'reset.receipt',
    ]);
  });

  it('HOST-046: a hardware-only e-stop shows the physical stop and claims nothing', async () => {
    const r = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', {
      endpoint_id: host.endpointId,
      device_id: 'hw-press',
    });
    expect(r.body).toEqual({ status: 'hardware_only', physical_ref: 'yellow pull cord P2, north wall' });
    const rows = await entries(host, (e) => e.kind.startsWith('estop.') && e.device_id === 'hw-press');
    expect(rows).toMatchObject([{ kind: 'estop.request', sent: false, reason: 'hardware_only' }]);
  });

  it('HOST-094: the trusted e-stop needs the device on the allow-list; operators add it, recorded', async () => {
    const dev = { endpoint_id: host.endpointId, device_id: 'laser' };
    const refused = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', dev);
    expect([refused.status, refused.body.error]).toEqual([403, ErrorCode.HOST_POLICY_DENIED]);
    // Issue 20: the refused e-stop is recorded: nothing sent, by whom, with the code.
    const [refusedStop] = await entries(host, (e) => e.kind === 'estop.request' && e.device_id === 'laser');
    expect(refusedStop).toMatchObject({
      sent: false,
      operator: { name: 'op-alice' },
      refused: { code: ErrorCode.HOST_POLICY_DENIED },
    });
    const asClient = await host.api(host.tokens.client, 'POST', '/v1/operator/estop/allow', { ...dev, allowed: true });
    expect(asClient.status).toBe(403);
    const unknown = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop/allow', {
      ...dev,
      device_id: 'nope',
      allowed: true,
    });
    expect(unknown.status).toBe(404);
    const allowed = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop/allow', { ...dev, allowed: true });
    expect(allowed.body).toEqual({ ...dev, allowed: true });
    const [rec] = await entries(host, (e) => e.kind === 'operator.enable' && e.scope === 'estop');
    expect(rec).toMatchObject({ device_id: 'laser', operator: { name: 'op-alice' } });
    expect((await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', dev)).body.status).toBe('sent');
    expect((await host.api(host.tokens.op1, 'POST', '/v1/operator/reset', dev)).body.status).toBe('sent');
    const removed = await host.api(host.tokens.op2, 'POST', '/v1/operator/estop/allow', { ...dev, allowed: false });
    expect(removed.body.allowed).toBe(false);
    expect((await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', dev)).status).toBe(403);
  });

  it('HOST-047: a permit revoked by an operator is never sent, even before the endpoint saw it', async () => {
    const actor = host.engine.endpoint(host.endpointId)!;
    let release!: () => void;
    const blocker = actor.runInLane('liquid-handler', () => new Promise<void>((r) => (release = r)));
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 14 });
    const req = await asked;
    const issued = new Promise<string>((resolve) => {
      const off = host.services.events.subscribe((e) => {
        if (e.type === 'permit.issued') {
          off();
          resolve((e.data.permit as { permit_id: string }).permit_id);
        }
      });
    });
    await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/approve`, {});
    const permitId = await issued;
    const listed = await host.api(host.tokens.client, 'GET', '/v1/operator/permits');
    expect(listed.body.permits.map((p: { permit_id: string }) => p.permit_id)).toContain(permitId);
    const rev = await host.api(host.tokens.op1, 'POST', `/v1/operator/permits/${permitId}/revoke`, {
      reason: 'changed my mind',
    });
    expect(rev.body.state).toBe('revoked');
    const before = await counters(host, 'liquid-handler');
    release();
    await blocker;
    await expect(call).rejects.toMatchObject({ code: ErrorCode.AUTH_PERMIT_REVOKED });
    expect(await counters(host, 'liquid-handler')).toEqual(before);
    const intent = (await entries(host, (e) => e.kind === 'command.intent' && e.permit_id === permitId))[0]!;
    expect(JSON.stringify(await counters(host, 'liquid-handler'))).not.toContain(intent.command_id as string);
    const [revoked] = await entries(host, (e) => e.kind === 'permit.revoke' && e.permit_id === permitId);
    expect(revoked).toMatchObject({ operator: { name: 'op-alice' }, endpoint_ack: { ok: true } });
  });

  it('HOST-066, HOST-067, HOST-069: disable and enable are recorded with the operator; a disabled endpoint refuses the e-stop', async () => {
    const off = await host.api(host.tokens.op1, 'POST', '/v1/operator/endpoints/disable', {
      connector_id: CONNECTOR_ID,
    });
    expect(off.body).toEqual({ connector_id: CONNECTOR_ID, enabled: false });
    const list = await host.api(host.tokens.client, 'GET', '/v1/operator/endpoints');
    expect(list.body.integration).toEqual({ name: 'MHS', experimental: true, enabled: false });
    const stop = await host.api(host.tokens.op1, 'POST', '/v1/operator/estop', {
      endpoint_id: host.endpointId,
      device_id: 'liquid-handler',
    });
    expect([stop.status, stop.body.error]).toEqual([409, ErrorCode.HOST_CONNECTOR_DISABLED]);
    const on = await host.api(host.tokens.op2, 'POST', '/v1/operator/endpoints/enable', { connector_id: CONNECTOR_ID });
    expect(on.body.enabled).toBe(true);
    const rows = await entries(host, (e) => e.kind === 'operator.enable' || e.kind === 'operator.disable');
    expect(rows.slice(-2)).toMatchObject([
      { kind: 'operator.disable', operator: { id: 'op-alice' } },
      { kind: 'operator.enable', operator: { id: 'op-bob' } },
    ]);
  });

  it('the event stream (SSE) needs a token and pushes approval requests', async () => {
    expect((await fetch(`${host.url}/v1/operator/events`)).status).toBe(401);
    const ac = new AbortController();
    const res = await fetch(`${host.url}/v1/operator/events`, {
      headers: { authorization: `Bearer ${host.tokens.client}` },
      signal: ac.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: hello')) text += (await reader.read()).value ?? '';
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 15 }, ac.signal);
    while (!text.includes('event: approval.requested')) text += (await reader.read()).value ?? '';
    const block = text.slice(text.indexOf('event: approval.requested')).split('\n\n')[0]!;
    const data = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { approval: ApprovalRequest };
    expect(data.approval).toMatchObject({ status: 'pending', input_digest: H({ volume_ul: 15 }) });
    ac.abort();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_REQUIRED });
    await host.api(host.tokens.op1, 'POST', `/v1/operator/approvals/${data.approval.approval_id}/deny`, {});
  });

  it('the OpenAPI description lists exactly the registered operator routes', () => {
    const described = Object.entries(operatorOpenApi.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => [m.toUpperCase(), path.replace(/\{(\w+)\}/g, ':$1')] as const),
    );
    expect(described.length).toBeGreaterThan(10);
    for (const [method, url] of described)
      expect([method, url, host.app.hasRoute({ method, url })]).toEqual([method, url, true]);
  });

  it('ledger browse and verify (recorded with the operator)', async () => {
    const page = await host.api(host.tokens.client, 'GET', '/v1/operator/ledger?limit=5');
    expect(page.body.entries).toHaveLength(5);
    const v = await host.api(host.tokens.op1, 'POST', '/v1/operator/ledger/verify');
    expect(v.body.ok).toBe(true);
    const [rec] = await entries(host, (e) => e.kind === 'evidence.verify' && e.seq === v.body.recorded_seq);
    expect(rec).toMatchObject({ operator: { name: 'op-alice' }, result: { ok: true } });
  });

  it('HOST-091: the device gates held in the store, with their owner running or gone', async () => {
    const ep = 'mhs://gates-view/ep';
    const other = `${hostname()}:4194305`; // a pid beyond the kernel's range: never running
    const intent = (cmd: string, device: string) => ({
      kind: 'command.intent' as const,
      command_id: cmd,
      endpoint_id: ep,
      device_id: device,
      capability_id: 'cap.x.v1',
      input_digest: 'sha256:0',
      input: {},
      effect: 'actuate',
    });
    await host.ledger.appendBatch([intent('cmd_gv1', 'dev-a')], { claimGates: true });
    // Another host process on this store (since gone) holds dev-b's gate.
    const theirs = await openLedger(host.db, { clock: new RealClock(), owner: other, probeIntervalMs: 0 });
    await theirs.appendBatch([intent('cmd_gv2', 'dev-b')], { claimGates: true });
    theirs.dispose();
    const r = await host.api(host.tokens.client, 'GET', `/v1/operator/gates?endpoint_id=${encodeURIComponent(ep)}`);
    expect(r.status).toBe(200);
    expect(r.body.gates).toEqual([
      expect.objectContaining({ device_id: 'dev-a', command_id: 'cmd_gv1', reason: 'in_flight', owner_running: true }),
      expect.objectContaining({ device_id: 'dev-b', command_id: 'cmd_gv2', owner: other, owner_running: false }),
    ]);
    for (const cmd of ['cmd_gv1', 'cmd_gv2'])
      await host.ledger.append({ kind: 'receipt', command_id: cmd, endpoint_id: ep, receipt: { status: 'completed' } });
    expect((await host.api(host.tokens.client, 'GET', '/v1/operator/gates')).body.gates).toEqual([]);
  });
});
