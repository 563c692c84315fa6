/**
 * The wire-contract walk (mhs-wire.md §2-§9) as a reusable suite: `defineContractSuite(transport,
 * family)` registers one describe block that checks every MUST against the devices of one family
 * through a real MCP client, over stdio (sim in a child process) or HTTP (sim in a child process).
 * Sample inputs are data; everything else is derived from the manifest the sim serves.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { H, isId, jcs, verifyChain, type ChainEntry } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import {
  FIXED_TOOLS,
  OPERATOR_TOOLS,
  type CapabilityBinding,
  type DeviceProfile,
  type Manifest,
} from '../../src/mhs/wire-types.js';
import {
  callMhs,
  connectMcpClient,
  simStdioCommand,
  startSimHttp,
  type MhsResult,
  type SimHttp,
} from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000 });

/** Two distinct valid inputs per capability (the second proves idempotency conflicts). */
export const SAMPLE_INPUTS: Record<string, [Record<string, unknown>, Record<string, unknown>]> = {
  'cap.world.step.v1': [{ ticks: 2 }, { ticks: 3 }],
  'cap.thermal.setpoint.v1': [{ setpoint_c: 24 }, { setpoint_c: 26 }],
  'cap.thermal.read.v1': [{}, {}],
  'cap.liquid.aspirate.v1': [{ volume_ul: 10 }, { volume_ul: 20 }],
  'cap.liquid.dispense.v1': [{ volume_ul: 1 }, { volume_ul: 2 }],
  'cap.laser.pulse.v1': [
    { energy_mj: 1, pulses: 1 },
    { energy_mj: 2, pulses: 1 },
  ],
};

/** Inputs that pass the schema but leave the device's limits: receipt rejected MHS.LIMIT.RANGE. */
export const RANGE_VIOLATIONS: Record<string, Record<string, unknown>> = {
  'cap.liquid.aspirate.v1': { volume_ul: 500 },
};

/** Flags every contract sim runs with (thermostat approaches quickly so `running` settles fast). */
export const CONTRACT_FLAGS = ['--operator-tools', '--time-scale', '20'];

/** The i-th sample input of a capability (throws for a capability missing from the table). */
function sample(capabilityId: string, i: 0 | 1): Record<string, unknown> {
  const pair = SAMPLE_INPUTS[capabilityId];
  if (!pair) throw new Error(`no sample input for ${capabilityId}`);
  return pair[i];
}

const FINAL = new Set(['completed', 'rejected', 'failed']);

function strip(r: Record<string, unknown>): Record<string, unknown> {
  const { evidence: _e, replayed: _r, ...rest } = r;
  return rest;
}

/** Registers the §2-§9 walk over one transport for a sim hosting `family` (one or a comma list). */
export function defineContractSuite(
  transport: 'stdio' | 'http',
  family: string,
  /** An HTTP sim already starting (lets a file start several in parallel); default: started here. */
  started?: Promise<SimHttp>,
): void {
  describe(`wire contract §2-§9: ${family} over ${transport}`, () => {
    let sim: SimHttp | undefined;
    let client: Client;
    let manifest: Manifest;
    let seq = 0;
    const cmd = (): string => `cmd_test_${transport}_${family}_${++seq}`;
    const call = (name: string, args: Record<string, unknown> = {}): Promise<MhsResult> => callMhs(client, name, args);

    beforeAll(async () => {
      if (transport === 'http') {
        sim = await (started ?? startSimHttp(family, CONTRACT_FLAGS));
        client = await connectMcpClient({ mcpUrl: sim.mcpUrl });
      } else {
        client = await connectMcpClient(simStdioCommand(family, CONTRACT_FLAGS));
      }
      manifest = (await call('mhs__inspect')).body as unknown as Manifest;
    });
    afterAll(async () => {
      await client?.close();
      await sim?.stop();
    });

    const devices = (): DeviceProfile[] => manifest.devices;
    const primary = (d: DeviceProfile): CapabilityBinding =>
      d.capabilities.find((c) => c.effect !== 'read') ?? (d.capabilities[0] as CapabilityBinding);

    async function openSession(d: DeviceProfile, extra: Record<string, unknown> = {}): Promise<string> {
      const s = await call('mhs__session', {
        action: 'open',
        device_id: d.device_id,
        capabilities: d.capabilities.map((c) => c.capability_id),
        ttl_ms: 60_000,
        principal: { kind: 'agent', id: 'host:contract' },
        mode: 'live',
        ...extra,
      });
      expect(s.isError).toBe(false);
      return s.body['session_id'] as string;
    }

    /** Invokes a capability, issuing the permit first when the binding needs one. */
    async function invoke(
      d: DeviceProfile,
      b: CapabilityBinding,
      input: Record<string, unknown>,
      control: Record<string, unknown>,
    ): Promise<MhsResult> {
      const ctl = { ...control };
      if (b.permit.required && ctl['permit_id'] === undefined) {
        const p = await call('mhs__permit', {
          action: 'issue',
          session_id: ctl['session_id'],
          capability_id: b.capability_id,
          input_digest: H(input),
          ttl_ms: 60_000,
          approval_ref: 'apr_contract',
        });
        expect(p.isError).toBe(false);
        ctl['permit_id'] = p.body['permit_id'];
      }
      return call(capabilityToolName(d.device_id, b.capability_id), { ...input, _mhs: ctl });
    }

    async function settle(r: MhsResult): Promise<Record<string, unknown>> {
      let body = r.body;
      for (let i = 0; i < 200 && !FINAL.has(body['status'] as string); i++) {
        await new Promise((res) => setTimeout(res, 25));
        body = (await call('mhs__operations', { operation_id: body['operation_id'] })).body;
      }
      return body;
    }

    it('§2: serves the negotiated MCP revision; HTTP descriptor digest equals the manifest digest', async () => {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getDiscoverResult()).toBeDefined();
      if (sim) {
        const d = (await (await fetch(`${sim.url}/.well-known/mhs.json`)).json()) as Record<string, unknown>;
        expect(d).toMatchObject({ mhs_version: '0.9', endpoint_id: sim.endpointId, auth: { scheme: 'none' } });
        expect(d['manifest_digest']).toBe(manifest.manifest_digest);
        expect(d['transports']).toEqual(expect.arrayContaining([{ kind: 'mcp-http', url: sim.mcpUrl }]));
      }
    });

    it('§3: manifest fields, manifest_digest = H(manifest without digest), resource mhs://manifest', async () => {
      const { manifest_digest, ...rest } = manifest;
      expect(manifest_digest).toBe(H(rest));
      expect(manifest).toMatchObject({ mhs_version: '0.9', safety_notice: 'MHS.SAFETY.NOT_CERTIFIED' });
      expect(manifest.limits.max_frame_bytes).toBe(4 * 1024 * 1024);
      const res = await client.readResource({ uri: 'mhs://manifest' });
      const text = (res.contents[0] as { text: string }).text;
      expect(JSON.parse(text)).toEqual(manifest);
      for (const d of devices()) {
        expect(['simulated', 'hybrid', 'hardware']).toContain(d.mode);
        if (d.mode !== 'hardware') expect(Array.isArray(d.fidelity?.gaps)).toBe(true);
        if (d.estop.kind !== 'software') expect(d.estop.physical_ref).toEqual(expect.any(String));
        for (const b of d.capabilities) {
          const props = (b.input_schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
          for (const p of Object.values(props))
            if (p['type'] === 'number' || p['type'] === 'integer') expect(p['x-unit']).toBeTruthy();
        }
      }
    });

    it('§4 (HOST-062): fixed tools, one tool per capability, operator tools only with --operator-tools, no generic tool', async () => {
      const tools = (await client.listTools()).tools;
      const names = tools.map((t) => t.name).sort();
      const expected = [
        ...FIXED_TOOLS,
        ...OPERATOR_TOOLS,
        ...devices().flatMap((d) => d.capabilities.map((c) => capabilityToolName(d.device_id, c.capability_id))),
      ].sort();
      expect(names).toEqual(expected);
      for (const d of devices()) {
        for (const b of d.capabilities) {
          const t = tools.find((x) => x.name === capabilityToolName(d.device_id, b.capability_id));
          const { _mhs, ...props } = (t?.inputSchema.properties ?? {}) as Record<string, unknown>;
          expect(props).toEqual(b.input_schema['properties'] ?? {});
          expect(_mhs).toBeDefined();
        }
      }
    });

    it('§4: a plain MCP call without _mhs uses the implicit session; result = structuredContent + JCS text', async () => {
      for (const d of devices()) {
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        const r = await call(capabilityToolName(d.device_id, b.capability_id), input);
        expect(r.isError).toBe(false);
        expect(JSON.parse(r.text)).toEqual(r.body);
        expect(r.text).toBe(jcs(r.body));
        expect(isId('command', r.body['command_id'])).toBe(true);
        expect(isId('session', r.body['session_id'])).toBe(true);
        expect(r.body['input_digest']).toBe(H(input));
        if (b.permit.required) {
          expect(r.body['status']).toBe('rejected');
          expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.AUTH.PERMIT_REQUIRED');
        } else {
          expect(['completed', 'running']).toContain(r.body['status']);
        }
      }
    });

    it('§5: open, heartbeat extends expires_at, close; closed session is MHS.SESSION.UNKNOWN', async () => {
      for (const d of devices()) {
        const open = await call('mhs__session', {
          action: 'open',
          device_id: d.device_id,
          capabilities: [primary(d).capability_id],
          ttl_ms: 30_000,
          principal: { kind: 'human', id: 'op:alice' },
          mode: 'live',
        });
        expect(open.body).toMatchObject({
          device_id: d.device_id,
          state: 'open',
          mode: 'live',
          principal: { kind: 'human' },
        });
        expect(open.body['heartbeat_interval_ms']).toEqual(expect.any(Number));
        const id = open.body['session_id'] as string;
        await new Promise((res) => setTimeout(res, 5));
        const hb = await call('mhs__session', { action: 'heartbeat', session_id: id });
        expect(Date.parse(hb.body['expires_at'] as string)).toBeGreaterThan(
          Date.parse(open.body['expires_at'] as string),
        );
        expect((await call('mhs__session', { action: 'close', session_id: id })).body['state']).toBe('closed');
        const after = await call('mhs__session', { action: 'heartbeat', session_id: id });
        expect(after.isError).toBe(true);
        expect((after.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SESSION.UNKNOWN');
      }
    });

    it('§5: after expires_at any call in the session is MHS.SESSION.EXPIRED (isError)', async () => {
      const d = devices()[0] as DeviceProfile;
      const id = await openSession(d, { ttl_ms: 150 });
      let code = '';
      for (let i = 0; i < 100 && code !== 'MHS.SESSION.EXPIRED'; i++) {
        await new Promise((res) => setTimeout(res, 50));
        const b = primary(d);
        const r = await call(capabilityToolName(d.device_id, b.capability_id), {
          ...sample(b.capability_id, 0),
          _mhs: { session_id: id, command_id: cmd() },
        });
        if (r.isError) code = (r.body['error'] as Record<string, unknown>)['mhs_code'] as string;
      }
      expect(code).toBe('MHS.SESSION.EXPIRED');
    });

    it('§5: a capability outside the session is MHS.SESSION.SCOPE; a never-opened session is UNKNOWN', async () => {
      for (const d of devices()) {
        const b = primary(d);
        const other = d.capabilities.find((c) => c !== b);
        const s = await call('mhs__session', {
          action: 'open',
          device_id: d.device_id,
          capabilities: other ? [other.capability_id] : [],
          ttl_ms: 60_000,
        });
        const input = sample(b.capability_id, 0);
        const r = await call(capabilityToolName(d.device_id, b.capability_id), {
          ...input,
          _mhs: { session_id: s.body['session_id'] },
        });
        expect(r.isError).toBe(true);
        expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SESSION.SCOPE');
        const u = await call(capabilityToolName(d.device_id, b.capability_id), {
          ...input,
          _mhs: { session_id: 'ses_never' },
        });
        expect((u.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SESSION.UNKNOWN');
      }
    });

    it('§6 + §9: receipt fields, revisions, state_hash, evidence link equals its chain entry', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        const before = (await call('mhs__read', { device_id: d.device_id })).body;
        const r = await invoke(d, b, input, { session_id: sid, command_id: cmd(), deadline_ms: 20_000 });
        expect(r.isError).toBe(false);
        const rc = r.body;
        expect(rc).toMatchObject({
          mhs_version: '0.9',
          endpoint_id: manifest.endpoint_id,
          device_id: d.device_id,
          capability_id: b.capability_id,
          mode: d.mode,
          status: 'completed',
          session_id: sid,
          input_digest: H(input),
          replayed: false,
          error: null,
        });
        expect(isId('receipt', rc['receipt_id'])).toBe(true);
        const rev = rc['revisions'] as { before: number; after: number };
        expect(rev.before).toBe(before['revision']);
        expect(rev.after).toBeGreaterThan(rev.before);
        const now = (await call('mhs__read', { device_id: d.device_id })).body;
        expect(now['revision']).toBe(rev.after);
        expect(now['state_hash']).toBe(rc['state_hash']);
        expect(Array.isArray(rc['effects'])).toBe(true);
        const bundle = (await call('mhs__evidence', { action: 'export' })).body;
        const ev = rc['evidence'] as { seq: number; prev_digest: string; digest: string };
        const entry = (bundle['entries'] as Array<Record<string, unknown>>).find((e) => e['seq'] === ev.seq) as Record<
          string,
          unknown
        >;
        expect({ seq: entry['seq'], prev_digest: entry['prev_digest'], digest: entry['digest'] }).toEqual(ev);
        expect(entry['kind']).toBe('receipt');
        expect(entry['body']).toEqual(strip(rc));
      }
    });

    it('§6: a same-id retry returns the retained receipt with replayed:true and never executes twice', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        const id = cmd();
        const first = await invoke(d, b, input, { session_id: sid, command_id: id });
        const again = await call(capabilityToolName(d.device_id, b.capability_id), {
          ...input,
          _mhs: { session_id: sid, command_id: id },
        });
        expect(again.isError).toBe(false);
        expect(again.body['replayed']).toBe(true);
        expect(again.body['evidence']).toEqual(first.body['evidence']);
        expect(strip(again.body)).toEqual(strip(first.body));
        const counters = (await call('mhs__read', { device_id: d.device_id, resource: '_counters' })).body;
        expect((counters['state'] as { executions: Record<string, number> }).executions[id]).toBe(1);
      }
    });

    it('§6: same command_id with another input digest is MHS.IDEMPOTENCY.CONFLICT (isError)', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const [a, other] = [sample(b.capability_id, 0), sample(b.capability_id, 1)];
        const id = cmd();
        await invoke(d, b, a, { session_id: sid, command_id: id });
        const r = await call(capabilityToolName(d.device_id, b.capability_id), {
          ...other,
          _mhs: { session_id: sid, command_id: id },
        });
        expect(r.isError).toBe(true);
        expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.IDEMPOTENCY.CONFLICT');
      }
    });

    it('§6: expected_revision mismatch is a rejected receipt MHS.STATE.STALE_REVISION (isError false)', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        const rev = (await call('mhs__read', { device_id: d.device_id })).body['revision'] as number;
        const r = await invoke(d, b, input, { session_id: sid, command_id: cmd(), expected_revision: rev + 7 });
        expect(r.isError).toBe(false);
        expect(r.body['status']).toBe('rejected');
        expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.STATE.STALE_REVISION');
        expect((r.body['error'] as Record<string, unknown>)['remediation']).toMatch(/\S/); // HOST-072
      }
    });

    it('§6 (CORE-100): a call longer than deadline_ms answers running + operation_id; mhs__operations settles it', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 1);
        const id = cmd();
        const r = await invoke(d, b, input, { session_id: sid, command_id: id, deadline_ms: 1 });
        expect(r.body['status']).toBe('running');
        expect(isId('operation', r.body['operation_id'])).toBe(true);
        const final = await settle(r);
        expect(final['status']).toBe('completed');
        expect(final['command_id']).toBe(id);
        const byCmd = (await call('mhs__operations', { command_id: id })).body;
        expect(byCmd).toEqual(final);
      }
    });

    it('§7: read and safety shapes; _counters resource', async () => {
      for (const d of devices()) {
        const r = (await call('mhs__read', { device_id: d.device_id })).body;
        expect(r).toMatchObject({ device_id: d.device_id, revision: expect.any(Number), state: expect.any(Object) });
        expect(r['state_hash']).toMatch(/^[0-9a-f]{64}$/);
        const s = (await call('mhs__safety', { device_id: d.device_id })).body;
        expect(s).toEqual({
          device_id: d.device_id,
          estop: { kind: d.estop.kind, engaged: false, physical_ref: d.estop.physical_ref },
          interlocks: d.interlocks,
          notice: 'MHS.SAFETY.NOT_CERTIFIED',
        });
      }
    });

    it('§7: permits: required, digest mismatch, consumed, revoked (receipts rejected, isError false)', async () => {
      for (const d of devices()) {
        const b = d.capabilities.find((c) => c.permit.required);
        if (!b) continue;
        const sid = await openSession(d);
        const [input, other] = [sample(b.capability_id, 0), sample(b.capability_id, 1)];
        const tool = capabilityToolName(d.device_id, b.capability_id);
        const code = (r: MhsResult): unknown => {
          expect(r.isError).toBe(false);
          expect(r.body['status']).toBe('rejected');
          expect((r.body['error'] as Record<string, unknown>)['remediation']).toMatch(/\S/); // HOST-072
          return (r.body['error'] as Record<string, unknown>)['mhs_code'];
        };
        expect(code(await call(tool, { ...input, _mhs: { session_id: sid, command_id: cmd() } }))).toBe(
          'MHS.AUTH.PERMIT_REQUIRED',
        );
        const issue = async (i: Record<string, unknown>): Promise<string> =>
          (
            await call('mhs__permit', {
              action: 'issue',
              session_id: sid,
              capability_id: b.capability_id,
              input_digest: H(i),
              ttl_ms: 60_000,
              approval_ref: ['apr_a', 'apr_b'],
            })
          ).body['permit_id'] as string;
        const p1 = await issue(other);
        expect(code(await call(tool, { ...input, _mhs: { session_id: sid, command_id: cmd(), permit_id: p1 } }))).toBe(
          'MHS.AUTH.PERMIT_DIGEST_MISMATCH',
        );
        const p2 = await issue(input);
        const ok = await call(tool, { ...input, _mhs: { session_id: sid, command_id: cmd(), permit_id: p2 } });
        expect(ok.body['status']).toBe('completed');
        expect(code(await call(tool, { ...input, _mhs: { session_id: sid, command_id: cmd(), permit_id: p2 } }))).toBe(
          'MHS.AUTH.PERMIT_CONSUMED',
        );
        const p3 = await issue(input);
        const rv = await call('mhs__permit', { action: 'revoke', permit_id: p3 });
        expect(rv.body['state']).toBe('revoked');
        expect(code(await call(tool, { ...input, _mhs: { session_id: sid, command_id: cmd(), permit_id: p3 } }))).toBe(
          'MHS.AUTH.PERMIT_REVOKED',
        );
      }
    });

    it('§7: a device limit gives a rejected receipt MHS.LIMIT.RANGE and changes nothing', async () => {
      for (const d of devices()) {
        for (const b of d.capabilities) {
          const bad = RANGE_VIOLATIONS[b.capability_id];
          if (!bad) continue;
          const sid = await openSession(d);
          const before = (await call('mhs__read', { device_id: d.device_id })).body;
          const r = await invoke(d, b, bad, { session_id: sid, command_id: cmd() });
          expect(r.isError).toBe(false);
          expect(r.body['status']).toBe('rejected');
          expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.LIMIT.RANGE');
          expect((await call('mhs__read', { device_id: d.device_id })).body['state_hash']).toBe(before['state_hash']);
        }
      }
    });

    it('§7: e-stop engages (receipt), later calls are rejected ESTOP_ACTIVE until the operator reset', async () => {
      for (const d of devices()) {
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        const stop = await call('mhs__estop', { device_id: d.device_id });
        expect(stop.isError).toBe(false);
        expect(stop.body['status']).toBe('completed');
        expect((await call('mhs__safety', { device_id: d.device_id })).body['estop']).toMatchObject({ engaged: true });
        const r = await invoke(d, b, input, { session_id: sid, command_id: cmd() });
        expect(r.isError).toBe(false);
        expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SAFETY.ESTOP_ACTIVE');
        await call('mhs__reset', { device_id: d.device_id });
        expect((await invoke(d, b, input, { session_id: sid, command_id: cmd() })).body['status']).toBe('completed');
      }
    });

    it('§7: an open interlock refuses with MHS.SAFETY.INTERLOCK_OPEN; closing it restores service', async () => {
      for (const d of devices()) {
        const lock = d.interlocks[0];
        if (!lock) continue;
        const sid = await openSession(d);
        const b = primary(d);
        const input = sample(b.capability_id, 0);
        await call('mhs__reset', { device_id: d.device_id, interlocks: { [lock.id]: 'open' } });
        const r = await invoke(d, b, input, { session_id: sid, command_id: cmd() });
        expect((r.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SAFETY.INTERLOCK_OPEN');
        await call('mhs__reset', { device_id: d.device_id, interlocks: { [lock.id]: 'unknown' } });
        const u = await invoke(d, b, input, { session_id: sid, command_id: cmd() });
        expect((u.body['error'] as Record<string, unknown>)['mhs_code']).toBe('MHS.SAFETY.INTERLOCK_UNKNOWN');
        // HOST-072: a refusal says what to do about it.
        for (const x of [r, u]) expect((x.body['error'] as Record<string, unknown>)['remediation']).toMatch(/\S/);
        await call('mhs__reset', { device_id: d.device_id, interlocks: { [lock.id]: 'closed' } });
        expect((await invoke(d, b, input, { session_id: sid, command_id: cmd() })).body['status']).toBe('completed');
      }
    });

    it('§8: every fault carries {mhs_code, message, remediation}', async () => {
      const r = await call('mhs__read', { device_id: 'no-such-device' });
      expect(r.isError).toBe(true);
      const e = r.body['error'] as Record<string, unknown>;
      expect(e).toMatchObject({
        mhs_code: 'MHS.SCHEMA.INVALID_INPUT',
        message: expect.any(String),
        remediation: expect.any(String),
      });
    });

    it('§9: export recomputes with the §1 chain link; verify says ok; entry kinds are the contract kinds', async () => {
      const bundle = (await call('mhs__evidence', { action: 'export' })).body;
      const entries = bundle['entries'] as ChainEntry[];
      expect(entries[0]).toMatchObject({ seq: 0, kind: 'genesis', prev_digest: '0'.repeat(64) });
      expect(bundle['genesis_digest']).toBe(entries[0]?.digest);
      expect(bundle['head_digest']).toBe(entries[entries.length - 1]?.digest);
      const vc = verifyChain(entries);
      expect(vc).toMatchObject({ ok: true });
      const kinds = new Set(entries.map((e) => e['kind']));
      for (const k of ['genesis', 'session.open', 'session.heartbeat', 'session.close', 'receipt', 'estop', 'reset'])
        expect(kinds).toContain(k);
      if (devices().some((d) => d.capabilities.some((c) => c.permit.required))) {
        for (const k of ['permit.issue', 'permit.revoke', 'permit.consume']) expect(kinds).toContain(k);
      }
      expect((await call('mhs__evidence', { action: 'verify' })).body).toEqual({ ok: true });
    });
  });
}
