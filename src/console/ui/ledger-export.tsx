// "Export": the ledger browser's filtered view downloaded as JSON Lines, one entry per line as the operator API
// answered it, oldest first (issue 18 item 4), with the count read so far while it pages.
import { useState } from 'preact/hooks';
import { allMatching, filterError } from './ledger-query.js';
import type { Filters } from './ledger-query.js';

/** Offers `text` as a download named `name` (a blob URL: nothing leaves the page, CSP allows it). */
function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function ExportButton({ filters }: { filters: Filters }) {
  const [state, setState] = useState<{ text: string; kind: string; busy: boolean }>({
    text: '',
    kind: '',
    busy: false,
  });
  const run = async () => {
    setState({ text: 'Exporting: reading entries…', kind: '', busy: true });
    try {
      const entries = await allMatching(filters, (n) =>
        setState({ text: `Exporting: ${n} entries read…`, kind: '', busy: true }),
      );
      const first = entries[0]?.seq;
      const last = entries[entries.length - 1]?.seq;
      const name = entries.length ? `mhs-ledger-seq${first}-${last}.jsonl` : 'mhs-ledger-empty.jsonl';
      download(name, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      setState({ text: `Exported ${entries.length} entries as ${name}`, kind: 'ok', busy: false });
    } catch (e) {
      setState({ text: `Export failed. ${filterError(e)}`, kind: 'error', busy: false });
    }
  };
  const active = Object.values(filters).some(Boolean);
  return (
    <>
      <button type="button" id="ledger-export" disabled={state.busy} onClick={() => void run()}>
        {active ? 'Export filtered entries (JSONL)' : 'Export whole ledger (JSONL)'}
      </button>{' '}
      <span id="export-status" role="status" class={state.kind}>
        {state.text}
      </span>
    </>
  );
}
