// The newest ledger entries and the chain check (HOST-092, 093).
import { useState } from 'preact/hooks';
import { api, refusal } from './api.js';
import { Table } from './record-tables.js';
import type { LedgerEntry } from './types.js';

interface Verify {
  ok: boolean;
  count?: number;
  broken_at?: number;
  reason?: string;
}

export function LedgerPanel({ entries, onVerified }: { entries: LedgerEntry[]; onVerified: () => void }) {
  const [result, setResult] = useState<{ text: string; ok: boolean } | null>(null);
  const verify = async () => {
    try {
      const r = await api<Verify>('POST', '/ledger/verify');
      setResult(
        r.ok
          ? { text: `Chain verified: ${r.count} entries`, ok: true }
          : { text: `Chain BROKEN at seq ${r.broken_at} (${r.reason})`, ok: false },
      );
    } catch (e) {
      setResult({ text: `Verify refused (${refusal(e)})`, ok: false });
    }
    onVerified();
  };
  return (
    <>
      <button type="button" id="verify" onClick={verify}>
        Verify ledger
      </button>{' '}
      <span id="verify-result" role="status" class={result ? (result.ok ? 'ok' : 'error') : ''}>
        {result?.text ?? ''}
      </span>
      <Table id="ledger" head={['Seq', 'Time', 'Kind', 'Details']}>
        {entries.map((e) => {
          const { seq, ts, kind, digest: _d, prev_digest: _p, ...rest } = e;
          return (
            <tr key={seq} data-seq={seq} data-kind={kind}>
              <td>{seq}</td>
              <td class="time">{ts}</td>
              <td>{kind}</td>
              <td>
                <code>{JSON.stringify(rest).slice(0, 400)}</code>
              </td>
            </tr>
          );
        })}
      </Table>
    </>
  );
}
