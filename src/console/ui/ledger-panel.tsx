// The ledger browser (issue 18 item 4): the newest entries live, or filtered by kind, endpoint, device, command,
// run and time with paging back; each entry expands to its full record; a command id follows that command from
// intent to receipt; Verify recomputes the chain (HOST-092, 093); Export downloads the filtered view as JSONL.
import { useEffect, useState } from 'preact/hooks';
import { api, refusal } from './api.js';
import { ExportButton, PackageButton } from './ledger-export.js';
import { FILTERS, filterError, ledgerPath } from './ledger-query.js';
import type { Filters, LedgerPage } from './ledger-query.js';
import { Table } from './record-tables.js';
import type { LedgerEntry } from './types.js';

interface Verify {
  ok: boolean;
  count?: number;
  broken_at?: number;
  reason?: string;
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
  const [error, setError] = useState<string | null>(null);
  const active = Object.values(filters).some(Boolean) || before !== null;
  useEffect(() => {
    if (!active) {
      setError(null);
      return setPage(null);
    }
    let live = true;
    void api<LedgerPage>('GET', ledgerPath(filters, before))
      .then((r) => {
        if (!live) return;
        setError(null);
        setPage({ entries: r.entries.slice().reverse(), next: r.next_before });
      })
      .catch((e: unknown) => {
        if (!live) return;
        // A refused filter shows no entries rather than the unfiltered ones under a filter that does not apply.
        setError(filterError(e));
        setPage({ entries: [], next: null });
      });
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
        {FILTERS.map(([k, label, example]) => (
          <span key={k} class="filter">
            <label for={`lf-${k}`}>{label}</label>{' '}
            <input
              id={`lf-${k}`}
              type="text"
              size={example ? 20 : 14}
              placeholder={example}
              {...(example ? { 'aria-describedby': 'lf-time-hint' } : {})}
              value={draft[k] ?? ''}
              onInput={(e) => setDraft({ ...draft, [k]: e.currentTarget.value.trim() })}
            />{' '}
          </span>
        ))}
        <span id="lf-time-hint" class="muted">
          Since and Until: RFC 3339 date-times with a zone (Since inclusive, Until exclusive).
        </span>{' '}
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
      <p>
        <ExportButton filters={filters} />
      </p>
      <p>
        <PackageButton />
      </p>
      {error ? (
        <p id="ledger-error" class="alert" role="alert">
          {error}
        </p>
      ) : null}
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
