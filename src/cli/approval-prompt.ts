import type { ApprovalRequest, ApprovalView, OperatorEvent } from '../policy/index.js';

/** Readable lines of one approval request, from the host's own HOST-040 view (never model text). */
export function describeApproval(a: ApprovalRequest): string[] {
  const v = a.view as unknown as Partial<ApprovalView>;
  const who = a.principals_needed === 2 ? 'two distinct operators (dual control)' : 'one operator';
  const permit = a.permit_required
    ? `permit required (single use, ttl ${Math.round((v.permit?.ttl_ms ?? 0) / 1000)} s)`
    : 'no permit';
  const input = (v.input ?? []).map((l) => `${l.path} = ${l.value}${l.unit ? ` ${l.unit}` : ''}`).join(', ');
  const lines = [
    `  endpoint    ${a.endpoint_id}`,
    `  device      ${a.device_id}${v.device ? ` (${v.device.display_name}, ${v.device.mode}, ${v.device.risk_class})` : ''}`,
    `  capability  ${a.capability_id}${v.capability ? `: ${v.capability.summary} [${v.capability.effect}]` : ''}`,
    `  risk        ${a.risk_class}; ${a.method} by ${who}; ${permit}`,
    `  input       ${input || '{}'}`,
    `  digest      ${a.input_digest}`,
  ];
  if (v.expected_revision !== null && v.expected_revision !== undefined)
    lines.push(`  revision    expected ${v.expected_revision}`);
  if (v.fidelity_gaps?.length) lines.push(`  fidelity    gaps: ${v.fidelity_gaps.join('; ')}`);
  if (v.estop) lines.push(`  e-stop      ${v.estop.statement}`);
  lines.push(`  notice      ${v.safety_notice ?? 'MHS.SAFETY.NOT_CERTIFIED'}`);
  return lines;
}

/**
 * An operator event listener that tells the person at the terminal about each approval the command waits
 * for: its id, what is being approved, and how to decide it (`mhs-host approvals ...` or the console), then
 * when it is granted. Writes with `err` (stderr: stdout stays the receipt).
 */
export function approvalPrinter(
  err: (line: string) => void,
  opts: { dbHint: string; timeoutMs: number },
): (e: OperatorEvent) => void {
  return (e) => {
    const a = e.data.approval as ApprovalRequest | undefined;
    if (!a) return;
    if (e.type === 'approval.requested') {
      err(`approval needed ${a.approval_id}: ${a.capability_id} on ${a.device_id} at ${a.endpoint_id}`);
      for (const l of describeApproval(a)) err(l);
      err(`  approve:    mhs-host approvals approve ${a.approval_id} --operator <your id>${opts.dbHint}`);
      err(`  deny:       mhs-host approvals deny ${a.approval_id} --operator <your id>${opts.dbHint} [--reason TEXT]`);
      err(`  (or in the console of a \`mhs-host serve\` on the same store)`);
      err(`waiting up to ${Math.round(opts.timeoutMs / 1000)} s for the decision (--approval-timeout) …`);
    } else if (e.type === 'approval.updated' && a.status === 'consumed') {
      const by = a.votes.map((x) => x.principal.name || x.principal.id).join(' and ');
      err(`approval ${a.approval_id} granted${by ? ` by ${by}` : ''} (${a.method}); sending the command`);
    }
  };
}
