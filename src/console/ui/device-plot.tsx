// A device's numeric outputs over time, from its receipts in the ledger, drawn with uPlot (issue 18 item 5).
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api } from './api.js';
import type { LedgerEntry } from './types.js';

interface Series {
  times: number[];
  values: Record<string, Array<number | null>>;
}

/** Every numeric field of the device's completed receipts' outputs, by finish time (seconds). */
export function seriesOf(entries: LedgerEntry[]): Series {
  const rows: Array<{ t: number; out: Record<string, unknown> }> = [];
  for (const e of entries) {
    const r = e.receipt as { status?: string; output?: unknown; finished_at?: string } | undefined;
    if (!r || r.status !== 'completed' || !r.output || typeof r.output !== 'object') continue;
    rows.push({ t: Date.parse(r.finished_at ?? e.ts) / 1000, out: r.output as Record<string, unknown> });
  }
  rows.sort((a, b) => a.t - b.t);
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.out).filter((k) => typeof r.out[k] === 'number')))];
  const values: Series['values'] = {};
  for (const k of keys) values[k] = rows.map((r) => (typeof r.out[k] === 'number' ? (r.out[k] as number) : null));
  return { times: rows.map((r) => r.t), values };
}

export function DevicePlot({ endpointId, deviceId }: { endpointId: string; deviceId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [series, setSeries] = useState<Series | null>(null);
  useEffect(() => {
    const q = new URLSearchParams({ kind: 'receipt', endpoint_id: endpointId, device_id: deviceId, limit: '500' });
    q.set('before', String(Number.MAX_SAFE_INTEGER));
    void api<{ entries: LedgerEntry[] }>('GET', `/ledger?${q.toString()}`)
      .then((r) => setSeries(seriesOf(r.entries)))
      .catch(() => setSeries({ times: [], values: {} }));
  }, [endpointId, deviceId]);
  useEffect(() => {
    if (!series || !box.current || !series.times.length) return;
    const keys = Object.keys(series.values);
    const plot = new uPlot(
      {
        width: Math.min(640, box.current.clientWidth || 640),
        height: 200,
        series: [
          {},
          ...keys.map((k, i) => ({
            label: k,
            stroke: ['#1a4fb0', '#a04000', '#1d6b2a'][i % 3]!,
            dash: i ? [6, 4] : [],
          })),
        ],
        axes: [{}, {}],
      },
      [series.times, ...keys.map((k) => series.values[k]!)],
      box.current,
    );
    return () => plot.destroy();
  }, [series]);
  if (!series) return <p>Reading receipts…</p>;
  const points = series.times.length;
  return (
    <figure class="plot" data-points={points} aria-label={`Outputs of ${deviceId} over time`}>
      {points ? <div ref={box} /> : null}
      <figcaption>
        {points
          ? `${points} completed receipts: ${Object.keys(series.values).join(', ')} over time (lines differ by dash, not only colour)`
          : 'No completed receipt with a numeric output yet.'}
      </figcaption>
    </figure>
  );
}
