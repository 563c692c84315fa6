// Guarantees: the pure policy decision is deny-by-default (every HOST-043 case refuses), caps policy
// auto-approval below R2 at CL3+ (HOST-032), needs humans for R3 and two distinct humans for dual
// (HOST-035, 044), and the pure vote rules refuse the same operator twice and non-human principals.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { applyVote } from '../../src/policy/approval-rules.js';
import type { ApprovalRequest } from '../../src/policy/approval-rules.js';
import { autoApproveCeiling, decideCall } from '../../src/policy/decide.js';
import { DEFAULT_POLICY, loadPolicyFile, parsePolicyConfig } from '../../src/policy/policy-config.js';
import type { PolicyConfig } from '../../src/policy/policy-config.js';
import { makeCtx } from './helpers/ctx.js';

const NOW = Date.UTC(2026, 0, 1);
const cfg = (over: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...DEFAULT_POLICY, ...over });

describe('decideCall', () => {
  it('HOST-043: an unavailable policy engine refuses', () => {
    const r = decideCall(makeCtx('conveyor', { ticks: 1 }, NOW), null, NOW);
    expect(r).toMatchObject({ kind: 'refuse', code: ErrorCode.HOST_POLICY_DENIED, reason: 'policy_unavailable' });
  });

  it('HOST-043: an expired session refuses (by state and by time)', () => {
    const byState = makeCtx('conveyor', { ticks: 1 }, NOW, {
      session: { sessionId: 's', state: 'expired', expiresAt: NOW + 1 },
    });
    expect(decideCall(byState, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.SESSION_EXPIRED });
    const byTime = makeCtx('conveyor', { ticks: 1 }, NOW, {
      session: { sessionId: 's', state: 'open', expiresAt: NOW },
    });
    expect(decideCall(byTime, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.SESSION_EXPIRED });
  });

  it('HOST-043: an unknown interlock refuses, from the manifest or a fresher safety read', () => {
    const base = makeCtx('laser', { energy_mj: 1, pulses: 1 }, NOW);
    const manifest = {
      ...base,
      device: { ...base.device, interlocks: [{ id: 'enclosure_door', state: 'unknown' as const }] },
    };
    expect(decideCall(manifest, cfg(), NOW)).toMatchObject({
      kind: 'refuse',
      code: ErrorCode.SAFETY_INTERLOCK_UNKNOWN,
    });
    const safety = {
      ...base,
      safety: {
        device_id: 'laser',
        estop: { kind: 'both' as const, engaged: false, physical_ref: 'x' },
        interlocks: [{ id: 'enclosure_door', state: 'unknown' as const }],
        notice: 'MHS.SAFETY.NOT_CERTIFIED' as const,
      },
    };
    expect(decideCall(safety, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.SAFETY_INTERLOCK_UNKNOWN });
  });

  it('an open interlock and an engaged e-stop refuse an actuation', () => {
    const base = makeCtx('laser', { energy_mj: 1, pulses: 1 }, NOW);
    const open = {
      ...base,
      device: { ...base.device, interlocks: [{ id: 'enclosure_door', state: 'open' as const }] },
    };
    expect(decideCall(open, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.SAFETY_INTERLOCK_OPEN });
    const stopped = {
      ...base,
      safety: {
        device_id: 'laser',
        estop: { kind: 'both' as const, engaged: true, physical_ref: 'x' },
        interlocks: [],
        notice: 'MHS.SAFETY.NOT_CERTIFIED' as const,
      },
    };
    expect(decideCall(stopped, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.SAFETY_ESTOP_ACTIVE });
  });

  it('HOST-043: an unknown risk class (device or binding) refuses; so does an unknown mode', () => {
    const base = makeCtx('conveyor', { ticks: 1 }, NOW);
    const dev = { ...base, device: { ...base.device, risk_class: 'R9' as 'R1' } };
    expect(decideCall(dev, cfg(), NOW)).toMatchObject({ kind: 'refuse', reason: 'unknown_risk_class' });
    const bind = { ...base, binding: { ...base.binding, risk_class: undefined as unknown as 'R1' } };
    expect(decideCall(bind, cfg(), NOW)).toMatchObject({ kind: 'refuse', reason: 'unknown_risk_class' });
    const mode = { ...base, device: { ...base.device, mode: 'virtual' as 'simulated' } };
    expect(decideCall(mode, cfg(), NOW)).toMatchObject({ kind: 'refuse', reason: 'unknown_mode' });
  });

  it('a disabled connector refuses', () => {
    const ctx = makeCtx('conveyor', { ticks: 1 }, NOW, { connectorEnabled: false });
    expect(decideCall(ctx, cfg(), NOW)).toMatchObject({ kind: 'refuse', code: ErrorCode.HOST_CONNECTOR_DISABLED });
  });

  it('below the approval threshold without a permit, the call is allowed without approval', () => {
    expect(decideCall(makeCtx('conveyor', { ticks: 1 }, NOW), cfg(), NOW)).toEqual({ kind: 'allow', risk: 'R1' });
  });

  it('R2 with human approval asks one human; R3 dual asks two', () => {
    expect(decideCall(makeCtx('liquid-handler', { volume_ul: 5 }, NOW), cfg(), NOW)).toMatchObject({
      kind: 'ask_human',
      method: 'human_click',
      principalsNeeded: 1,
      permitRequired: true,
    });
    expect(decideCall(makeCtx('laser', { energy_mj: 1, pulses: 1 }, NOW), cfg(), NOW)).toMatchObject({
      kind: 'ask_human',
      method: 'dual_control',
      principalsNeeded: 2,
    });
  });

  it('HOST-032: a policy rule approves up to the ceiling, never R2+ at CL3 or above', () => {
    expect(autoApproveCeiling(cfg({ autoApproveUpTo: 'R3', conformance: 'CL3' }))).toBe('R1');
    expect(autoApproveCeiling(cfg({ autoApproveUpTo: 'R3', conformance: 'CL5' }))).toBe('R1');
    expect(autoApproveCeiling(cfg({ autoApproveUpTo: 'R2', conformance: 'CL2' }))).toBe('R2');
    expect(autoApproveCeiling(cfg({ autoApproveUpTo: null }))).toBeNull();
    const rules = [{ id: 'allow-all' }];
    const lh = makeCtx('liquid-handler', { volume_ul: 5 }, NOW);
    const policyLh = {
      ...lh,
      binding: { ...lh.binding, permit: { ...lh.binding.permit, approval: 'policy' as const } },
    };
    expect(decideCall(policyLh, cfg({ autoApproveUpTo: 'R3', rules }), NOW)).toMatchObject({ kind: 'ask_human' });
    expect(decideCall(policyLh, cfg({ autoApproveUpTo: 'R2', conformance: 'CL2', rules }), NOW)).toMatchObject({
      kind: 'policy_approve',
      rule: { id: 'allow-all' },
    });
    const conv = makeCtx('conveyor', { ticks: 1 }, NOW);
    const policyConv = {
      ...conv,
      binding: { ...conv.binding, permit: { required: true, ttl_ms: 1000, approval: 'policy' as const } },
    };
    expect(decideCall(policyConv, cfg({ rules }), NOW)).toMatchObject({ kind: 'policy_approve' });
    // No matching rule: deny-by-default escalates to a human, never approves.
    expect(decideCall(policyConv, cfg({ rules: [{ id: 'other', device_id: 'nope' }] }), NOW)).toMatchObject({
      kind: 'ask_human',
    });
  });

  it('HOST-035: R3 always needs a human, even when policy allows R3 below CL3', () => {
    const laser = makeCtx('laser', { energy_mj: 1, pulses: 1 }, NOW);
    const policyLaser = {
      ...laser,
      binding: { ...laser.binding, permit: { ...laser.binding.permit, approval: 'policy' as const } },
    };
    const r = decideCall(policyLaser, cfg({ autoApproveUpTo: 'R3', conformance: 'CL1', rules: [{ id: 'all' }] }), NOW);
    expect(r).toMatchObject({ kind: 'ask_human', method: 'human_click' });
  });

  it('loadPolicyFile reads a trusted file and refuses an unreadable or invalid one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhs-policy-file-'));
    writeFileSync(join(dir, 'ok.json'), JSON.stringify({ rules: [{ id: 'r1' }] }));
    writeFileSync(join(dir, 'bad.json'), '{"rules": [');
    expect(loadPolicyFile(join(dir, 'ok.json'))).toMatchObject({ rules: [{ id: 'r1' }], autoApproveUpTo: 'R1' });
    for (const f of ['bad.json', 'missing.json']) {
      expect(() => loadPolicyFile(join(dir, f))).toThrow(
        expect.objectContaining({ code: ErrorCode.HOST_CONFIG_INVALID }),
      );
    }
  });

  it('parsePolicyConfig validates with details and fills defaults', () => {
    expect(parsePolicyConfig({ autoApproveUpTo: 'R0' })).toMatchObject({ autoApproveUpTo: 'R0', conformance: 'CL5' });
    expect(() => parsePolicyConfig({ autoApproveUpTo: 'R7' })).toThrow(
      expect.objectContaining({ code: ErrorCode.HOST_CONFIG_INVALID }),
    );
  });
});

describe('applyVote', () => {
  const req: ApprovalRequest = {
    approval_id: 'apr_1',
    request_key: null,
    status: 'pending',
    method: 'dual_control',
    principals_needed: 2,
    votes: [],
    input_digest: 'a'.repeat(64),
    endpoint_id: 'e',
    device_id: 'd',
    capability_id: 'c',
    session_id: 's',
    risk_class: 'R3',
    permit_required: true,
    run_id: null,
    node_id: null,
    created_at: '',
    decided_at: null,
    reason: null,
    view: {},
  };
  const alice = { kind: 'human' as const, id: 'tok_a', name: 'alice' };
  const bob = { kind: 'human' as const, id: 'tok_b', name: 'bob' };

  it('HOST-044: dual control needs two distinct humans; the same one twice is refused', () => {
    const one = applyVote(req, { principal: alice, decision: 'approve' }, NOW);
    expect(one).toMatchObject({ ok: true, partial: true, final: null });
    if (!one.ok) throw new Error('unreachable');
    expect(applyVote(one.next, { principal: alice, decision: 'approve' }, NOW)).toMatchObject({
      ok: false,
      code: ErrorCode.FORBIDDEN,
    });
    const two = applyVote(one.next, { principal: bob, decision: 'approve' }, NOW);
    expect(two).toMatchObject({
      ok: true,
      final: {
        decision: 'approve',
        method: 'dual_control',
        principals: [
          { kind: 'human', id: 'tok_a' },
          { kind: 'human', id: 'tok_b' },
        ],
      },
    });
  });

  it('a deny settles; a non-human or decided request is refused', () => {
    const d = applyVote(req, { principal: bob, decision: 'deny', reason: 'no' }, NOW);
    expect(d).toMatchObject({ ok: true, final: { decision: 'deny', reason: 'no', principals: [{ id: 'tok_b' }] } });
    if (!d.ok) throw new Error('unreachable');
    expect(applyVote(d.next, { principal: alice, decision: 'approve' }, NOW)).toMatchObject({
      ok: false,
      code: ErrorCode.CONFLICT,
    });
    const sys = { kind: 'system', id: 'x', name: 'x' } as unknown as typeof alice;
    expect(applyVote(req, { principal: sys, decision: 'approve' }, NOW)).toMatchObject({
      ok: false,
      code: ErrorCode.FORBIDDEN,
    });
  });
});
