// The ledger browser (issue 18 item 4): the newest entries live, or filtered by kind, endpoint, device and
// command with paging back; each entry expands to its full record; a command id follows that command from
// intent to receipt; Verify recomputes the chain (HOST-092, 093).
import { useEffect, useState } from 'preact/hooks';
import { api, refusal } from './api.js';
import { Table } from './record-tables.js';
import type { LedgerEntry } from './types.js';

interface Verify {
  ok: boolean;
  count?: number;
  broken_at?: number;
  reason?: string;
}

const FILTERS = [
  ['kind', 'Kind'],
  ['endpoint_id', 'Endpoint'],
  ['device_id', 'Device'],
  ['command_id', 'Command'],
] as const;
type Filters = Partial<Record<(typeof FILTERS)[number][0], string>>;

function query(f: Filters, before: number | null): string {
  const p = new URLSearchParams({ limit: '50' });
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  // Paging and the id filters use the scan (`before`); a kind alone pages the same way.
  p.set('before', String(before ?? Number.MAX_SAFE_INTEGER));
  return `/ledger?${p.toString()}`;
}

function VerifyButton({ onVerified }: { onVerified: () => void }) {
  const [result, setResult] = useState<{ text: string; ok: boolean } | null>(null);
  const verify = async () => {
    try {
      const r = await api<Verify>('POST', '/ledger/verify');
      setResult(
        r.ok
          ? { text: `Chain verified: ${r.count} entries`, ok: true }
          : { text: `MHS.EVIDENCE.CHAIN_BROKEN: chain BROKEN at seq ${r.broken_at} (${r.reason})`, ok: false },
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
      <span
        id="verify-result"
        role="status"
        class={result ? (result.ok ? 'ok' : 'error') : ''}
        data-result={result ? (result.ok ? 'verified' : 'broken') : ''}
      >
        {result ? `${result.ok ? '✔' : '✖'} ${result.text}` : ''}
      </span>
    </>
  );
}

export function LedgerPanel({ entries, onVerified }: { entries: LedgerEntry[]; onVerified: () => void }) {
  const [filters, setFilters] = useState<Filters>({});
  const [draft, setDraft] = useState<Filters>({});
  const [page, setPage] = useState<{ entries: LedgerEntry[]; next: number | null } | null>(null);
  const [before, setBefore] = useState<number | null>(null);
  const active = Object.values(filters).some(Boolean) || before !== null;
  useEffect(() => {
    if (!active) return setPage(null);
    let live = true;
    void api<{ entries: LedgerEntry[]; next_before: number | null }>('GET', query(filters, before))
      .then((r) => live && setPage({ entries: r.entries.slice().reverse(), next: r.next_before }))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [filters, before, active, entries]);
  const apply = (f: Filters) => {
    setDraft(f);
    setFilters(f);
    setBefore(null);
  };
  const shown = page?.entries ?? entries;
  return (
    <>
      <VerifyButton onVerified={onVerified} />
      <form
        id="ledger-filters"
        aria-label="Filter the ledger"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        {FILTERS.map(([k, label]) => (
          <span key={k} class="filter">
            <label for={`lf-${k}`}>{label}</label>{' '}
            <input
              id={`lf-${k}`}
              type="text"
              size={14}
              value={draft[k] ?? ''}
              onInput={(e) => setDraft({ ...draft, [k]: e.currentTarget.value.trim() })}
            />{' '}
          </span>
        ))}
        <button type="submit">Filter</button>{' '}
        <button type="button" onClick={() => apply({})}>
          Clear
        </button>{' '}
        {page?.next != null ? (
          <button type="button" onClick={() => setBefore(page.next)}>
            Older entries
          </button>
        ) : null}{' '}
        {before !== null ? (
          <button type="button" onClick={() => setBefore(null)}>
            Newest entries
          </button>
        ) : null}
      </form>
      <Table id="ledger" head={['Seq', 'Time', 'Kind', 'Command', 'Details']}>
        {shown.map((e) => {
          const { seq, ts, kind, digest: _d, prev_digest: _p, ...rest } = e;
          const cmd = typeof e.command_id === 'string' ? e.command_id : null;
          return (
            <tr key={seq} data-seq={seq} data-kind={kind}>
              <td>{seq}</td>
              <td class="time">{ts}</td>
              <td>{kind}</td>
              <td class="id">
                {cmd ? (
                  <button
                    type="button"
                    class="link"
                    aria-label={`Follow command ${cmd}`}
                    onClick={() => apply({ command_id: cmd })}
                  >
                    {cmd}
                  </button>
                ) : null}
              </td>
              <td>
                <details>
                  <summary>
                    <code>{JSON.stringify(rest).slice(0, 160)}</code>
                  </summary>
                  <pre>{JSON.stringify(e, null, 2)}</pre>
                </details>
              </td>
            </tr>
          );
        })}
      </Table>
    </>
  );
}
