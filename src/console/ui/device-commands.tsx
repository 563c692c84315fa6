// A device's commands over time (issue 18 item 5): one bar per command from its intent to the entry that settled
// it, a lane per capability, coloured by outcome, drawn on uPlot's time axis; the same commands as a list in words.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { commandSpans, OUTCOME_STYLE } from './command-spans.js';
import type { CommandSpan, Outcome } from './command-spans.js';
import { allMatching } from './ledger-query.js';

const BAR_PX = 14;

function timeline(el: HTMLElement, spans: CommandSpan[], lanes: string[], asOf: number): uPlot {
  const ends = spans.map((s) => s.end ?? asOf);
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...ends);
  const pad = Math.max((t1 - t0) * 0.05, 50);
  const draw = (u: uPlot) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    for (const s of spans) {
      const x0 = u.valToPos(s.start / 1000, 'x', true);
      const x1 = u.valToPos((s.end ?? asOf) / 1000, 'x', true);
      const y = u.valToPos(lanes.indexOf(s.capability_id), 'y', true);
      const h = BAR_PX * devicePixelRatio;
      ctx.fillStyle = OUTCOME_STYLE[s.outcome].colour;
      ctx.fillRect(x0, y - h / 2, Math.max(3 * devicePixelRatio, x1 - x0), h);
    }
    ctx.restore();
  };
  return new uPlot(
    {
      width: Math.min(720, el.clientWidth || 720),
      height: 70 + lanes.length * 36,
      legend: { show: false },
      scales: {
        x: { time: true, range: [(t0 - pad) / 1000, (t1 + pad) / 1000] },
        y: { auto: false, range: [-0.6, lanes.length - 0.4] },
      },
      axes: [
        {},
        {
          size: 150,
          splits: () => lanes.map((_, i) => i),
          values: (_u, splits) => splits.map((i) => (lanes[i] ?? '').replace(/^cap\./, '')),
        },
      ],
      series: [{}, { label: 'commands', stroke: 'transparent', points: { show: false } }],
      hooks: { draw: [draw] },
    },
    [
      [(t0 - pad) / 1000, (t1 + pad) / 1000],
      [null, null],
    ],
    el,
  );
}

export function DeviceCommands({ endpointId, deviceId }: { endpointId: string; deviceId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [spans, setSpans] = useState<CommandSpan[] | null>(null);
  // Unsettled commands are drawn up to the newest entry read (the ledger as of this read).
  const [asOf, setAsOf] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void allMatching({ endpoint_id: endpointId, device_id: deviceId }, () => undefined)
      .then((entries) => {
        if (!live) return;
        setAsOf(Math.max(0, ...entries.map((e) => Date.parse(e.ts))));
        setSpans(commandSpans(entries));
      })
      .catch((e: unknown) => {
        if (!live) return;
        setError((e as Error).message);
        setSpans([]);
      });
    return () => {
      live = false;
    };
  }, [endpointId, deviceId]);
  const lanes = [...new Set((spans ?? []).map((s) => s.capability_id))];
  useEffect(() => {
    if (!spans?.length || !box.current) return;
    const plot = timeline(box.current, spans, lanes, asOf);
    return () => plot.destroy();
  }, [spans]); // lanes follow spans
  if (!spans) return <p>Reading the device's commands from the ledger…</p>;
  const counts = new Map<Outcome, number>();
  for (const s of spans) counts.set(s.outcome, (counts.get(s.outcome) ?? 0) + 1);
  const summary = [...counts].map(([o, n]) => `${n} ${OUTCOME_STYLE[o].text}`).join(', ');
  return (
    <figure class="plot commands" data-commands={spans.length} aria-label={`Commands of ${deviceId} over time`}>
      {spans.length ? <div ref={box} /> : null}
      <figcaption>
        {error
          ? `The ledger could not be read: ${error}`
          : spans.length
            ? `${spans.length} commands from the ledger, intent to outcome, one lane per capability: ${summary}. Colours: ${(
                Object.keys(OUTCOME_STYLE) as Outcome[]
              )
                .filter((o) => counts.has(o))
                .map((o) => `${OUTCOME_STYLE[o].symbol} ${OUTCOME_STYLE[o].text}`)
                .join(' · ')}.`
            : 'The ledger holds no command for this device yet.'}
      </figcaption>
      {spans.length ? (
        <details>
          <summary>The commands in words</summary>
          <ol class="command-list">
            {spans.map((s) => {
              const st = OUTCOME_STYLE[s.outcome];
              const took = s.end === null ? 'not settled' : `${s.end - s.start} ms`;
              return (
                <li key={s.command_id} data-command-id={s.command_id} data-outcome={s.outcome}>
                  {`${st.symbol} ${st.text}: ${s.capability_id}, ${s.command_id}, ${new Date(s.start).toISOString()} (${took})`}
                </li>
              );
            })}
          </ol>
        </details>
      ) : null}
    </figure>
  );
}
