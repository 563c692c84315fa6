// "Export": the ledger browser's filtered view downloaded as JSON Lines, one entry per line as the operator API
// answered it, oldest first (issue 18 item 4), with the count read so far while it pages; and the evidence package
// of `mhs-host ledger export` (operator role), with the bytes received so far and the package's own status.
import { useState } from 'preact/hooks';
import { ApiError, getToken } from './api.js';
import { useConsole } from './context.js';
import { allMatching, filterError } from './ledger-query.js';
import type { Filters } from './ledger-query.js';

/** Offers `data` as a download named `name` (a blob URL: nothing leaves the page, CSP allows it). */
function download(name: string, data: BlobPart[], type = 'application/x-ndjson'): void {
  const url = URL.createObjectURL(new Blob(data, { type }));
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
      download(name, [entries.map((e) => `${JSON.stringify(e)}\n`).join('')]);
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

/** Bytes in words: "812 B", "45.6 kB", "3.2 MB". */
export function size(n: number): string {
  if (n < 1000) return `${n} B`;
  return n < 1_000_000 ? `${(n / 1000).toFixed(1)} kB` : `${(n / 1_000_000).toFixed(1)} MB`;
}

type Progress = (text: string) => void;

/** `POST /ledger/export`, read chunk by chunk so the bytes received (of the announced length) can be shown. */
async function fetchPackage(
  progress: Progress,
): Promise<{ name: string; chunks: BlobPart[]; bytes: number; res: Response }> {
  const res = await fetch('/v1/operator/ledger/export', {
    method: 'POST',
    headers: { authorization: `Bearer ${getToken()}` },
  });
  if (!res.ok || !res.body) {
    const e = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
    throw new ApiError(e?.message ?? res.statusText, res.status, e?.error);
  }
  const total = Number(res.headers.get('content-length') ?? NaN);
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'mhs-evidence.tar';
  const chunks: BlobPart[] = [];
  let bytes = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value as Uint8Array<ArrayBuffer>); // a fetch body's own buffer, never shared
    bytes += value.byteLength;
    progress(`Evidence package: ${size(bytes)}${Number.isFinite(total) ? ` of ${size(total)}` : ''} received…`);
  }
  return { name, chunks, bytes, res };
}

/** "Export evidence package": the package `mhs-host ledger export` writes, as one tar (operator tokens only). */
export function PackageButton() {
  const { isOperator } = useConsole();
  const [state, setState] = useState<{ text: string; kind: string; busy: boolean }>({
    text: '',
    kind: '',
    busy: false,
  });
  if (!isOperator) return null;
  const run = async () => {
    const progress: Progress = (text) => setState({ text, kind: '', busy: true });
    progress('Evidence package: the host is writing it…');
    try {
      const { name, chunks, bytes, res } = await fetchPackage(progress);
      download(name, chunks, 'application/x-tar');
      const status = res.headers.get('x-mhs-package-status') ?? 'unknown';
      const brk = res.headers.get('x-mhs-package-break');
      const sha = res.headers.get('x-mhs-manifest-sha256') ?? '';
      setState({
        text:
          `Exported ${name} (${size(bytes)}): ${status === 'verified' ? '✓ verified' : `⚠ ${status}`}` +
          `${brk ? `, ${brk}` : ''}; manifest sha256 ${sha.slice(0, 12)}… (check it offline: mhs-host ledger verify)`,
        kind: status === 'verified' ? 'ok' : 'error',
        busy: false,
      });
    } catch (e) {
      const why = e instanceof ApiError ? `${e.code ?? e.status}: ${e.message}` : String(e);
      setState({ text: `Evidence package failed. ${why}`, kind: 'error', busy: false });
    }
  };
  return (
    <>
      <button type="button" id="package-export" disabled={state.busy} onClick={() => void run()}>
        Export evidence package
      </button>{' '}
      <span id="package-status" role="status" class={state.kind}>
        {state.text}
      </span>
    </>
  );
}
