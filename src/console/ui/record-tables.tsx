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

export function Decisions({ list }: { list: Approval[] }) {
  return (
    <Table id="decisions" head={['Approval', 'Device', 'Capability', 'Digest', 'Status', 'Method', 'By']}>
      {list.map((a) => (
        <tr key={a.approval_id} data-approval-id={a.approval_id} data-status={a.status}>
          <td class="id">{a.approval_id}</td>
          <td>{a.device_id}</td>
          <td>{a.capability_id}</td>
          <td class="digest" title={a.input_digest}>
            {short(a.input_digest)}
          </td>
          <td class="status">{a.status}</td>
          <td>{a.method}</td>
          <td>{a.votes.map((x) => x.principal.name).join(', ') || (a.method === 'policy_rule' ? 'policy' : '')}</td>
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
            <td>{r.capability_id}</td>
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
