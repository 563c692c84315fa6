// Recent decisions, recent receipts and outstanding permits: the host's records, newest first.
import type { ComponentChildren } from 'preact';
import { api } from './api.js';
import { short, useConsole } from './context.js';
import type { Approval, LedgerEntry, PermitRow } from './types.js';

/** A table that wraps its cells instead of running off a narrow screen (issue 18: 800 px). */
export function Table(p: { id: string; label?: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table id={p.id} aria-label={p.label}>
        <thead>
          <tr>
            {p.head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{p.children}</tbody>
      </table>
    </div>
  );
}

/** Who decided an approval: the names on its `decided` ledger entry, else its votes (or the policy). */
function decidedBy(a: Approval, entries: LedgerEntry[]): string {
  const e = entries.find((x) => x.approval_id === a.approval_id && x.event === 'decided');
  const names = Array.isArray(e?.principal_names) ? (e.principal_names as string[]) : [];
  if (names.length) return names.join(', ');
  return a.votes.map((x) => x.principal.name).join(', ') || (a.method === 'policy_rule' ? 'policy' : '');
}

/** Why an approval was voided, in words (the reason code stays in its own column). */
const VOIDED_BECAUSE: Record<string, string> = {
  run_cancelled: 'its run or node was cancelled',
  input_changed: 'the input changed',
  withdrawn_by_caller: 'withdrawn by its caller',
};

function statusText(a: Approval): string {
  if (a.status !== 'voided') return a.status;
  const why = a.reason ? (VOIDED_BECAUSE[a.reason] ?? a.reason) : '';
  return why ? `voided: ${why}` : 'voided';
}

export function Decisions({ list, entries }: { list: Approval[]; entries: LedgerEntry[] }) {
  return (
    <Table
      id="decisions"
      head={['Approval', 'Decided', 'Device, endpoint', 'Capability', 'Digest', 'Status', 'By', 'Reason']}
    >
      {list.map((a) => (
        <tr key={a.approval_id} data-approval-id={a.approval_id} data-status={a.status}>
          <td class="id">{a.approval_id}</td>
          <td class="time">{a.decided_at ?? ''}</td>
          <td class="id">
            {a.device_id}
            <br />
            <span class="muted">{a.endpoint_id}</span>
          </td>
          <td class="id">{a.capability_id}</td>
          <td class="digest" title={a.input_digest}>
            {short(a.input_digest)}
          </td>
          <td class="status">{statusText(a)}</td>
          <td class="by">
            {decidedBy(a, entries)}
            <br />
            <span class="muted">{a.method}</span>
          </td>
          <td class="reason">{a.reason ?? ''}</td>
        </tr>
      ))}
    </Table>
  );
}

interface Receipt {
  command_id?: string;
  device_id?: string;
  capability_id?: string;
  status?: string;
  error?: { mhs_code?: string };
  output?: unknown;
}

export function Receipts({ entries }: { entries: LedgerEntry[] }) {
  return (
    <Table id="receipts" head={['Seq', 'Command', 'Device', 'Capability', 'Status', 'Error', 'Output']}>
      {entries.map((e) => {
        const r = (e.receipt ?? {}) as Receipt;
        return (
          <tr key={e.seq} data-command-id={r.command_id} data-status={r.status}>
            <td>{e.seq}</td>
            <td class="id">{r.command_id}</td>
            <td>{r.device_id}</td>
            <td class="id">{r.capability_id}</td>
            <td class="status">{r.status}</td>
            <td>{r.error?.mhs_code ?? ''}</td>
            <td>
              <code>{JSON.stringify(r.output)}</code>
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

export function Permits({ list }: { list: PermitRow[] }) {
  const { act, isOperator } = useConsole();
  return (
    <>
      {list.length ? null : <p id="no-permits">No outstanding permit.</p>}
      <Table id="permits" head={['Permit', 'Device', 'Capability', 'Digest', 'Expires', 'Action']}>
        {list.map((p) => (
          <tr key={p.permit_id} data-permit-id={p.permit_id}>
            <td class="id">{p.permit_id}</td>
            <td>{p.device_id}</td>
            <td>{p.capability_id}</td>
            <td class="digest" title={p.input_digest}>
              {short(p.input_digest)}
            </td>
            <td>{p.expires_at}</td>
            <td>
              <button
                type="button"
                disabled={!isOperator}
                aria-label={`Revoke ${p.permit_id}`}
                onClick={() => act(`Revoke ${p.permit_id}`, () => api('POST', `/permits/${p.permit_id}/revoke`, {}))}
              >
                Revoke
              </button>
            </td>
          </tr>
        ))}
      </Table>
    </>
  );
}
