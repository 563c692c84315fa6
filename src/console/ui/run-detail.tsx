// One run: its status, its node graph and the nodes' states, the live event timeline, cancel, and its pending interrupts
// (an approval gate answered Accept / Reject, a clarification's questions answered) answered here (issue 18 item 2).
import { useEffect, useState } from 'preact/hooks';
import { runApi } from './api.js';
import { useConsole } from './context.js';
import { Table } from './record-tables.js';
import { RunGraph } from './run-graph.js';
import { InterruptForm } from './interrupt-form.js';
import { TERMINAL } from './run-types.js';
import type { RunSnapshot } from './run-types.js';
import { useRunTimeline } from './use-run-timeline.js';

export function RunDetail({ runId, onChanged }: { runId: string; onChanged: () => void }) {
  const { act } = useConsole();
  const events = useRunTimeline(runId);
  const [snap, setSnap] = useState<RunSnapshot | null>(null);
  // The snapshot follows the timeline: each new event re-reads it (status, node states, interrupts).
  useEffect(() => {
    let live = true;
    void runApi<RunSnapshot>('GET', `/runs/${runId}`)
      .then((s) => live && setSnap(s))
      .catch(() => undefined);
    if (events.length) onChanged();
    return () => {
      live = false;
    };
  }, [runId, events.length, onChanged]);
  if (!snap) return <p>Loading run {runId}…</p>;
  const done = TERMINAL.has(snap.status);
  return (
    <div id="run-detail" data-run-id={runId} data-status={snap.status}>
      <h3>
        Run {runId} · {snap.workflowId} · <span class="run-status">{snap.status}</span>
      </h3>
      {snap.error ? (
        <p class="error">
          {snap.error.code}: {snap.error.message}
        </p>
      ) : null}
      <p>
        <button
          type="button"
          class="deny"
          disabled={done || snap.status === 'cancelling'}
          onClick={() => void act(`Cancel ${runId}`, () => runApi('POST', `/runs/${runId}/cancel`, {}))}
        >
          Cancel run
        </button>
      </p>
      {snap.pendingInterrupts.map((i) => (
        <InterruptForm key={i.interruptId} runId={runId} i={i} />
      ))}
      <h4>Node graph</h4>
      <RunGraph snap={snap} />
      <Table id="run-nodes" label="Nodes" head={['Node', 'Type', 'Status', 'Runs']}>
        {Object.entries(snap.nodeStates).map(([id, n]) => (
          <tr key={id} data-node-id={id} data-status={n.status}>
            <td>{id}</td>
            <td>{n.typeId}</td>
            <td class="status">{n.status}</td>
            <td>{n.executions ?? 0}</td>
          </tr>
        ))}
      </Table>
      <h4>Event timeline</h4>
      <Table id="run-timeline" label="Event timeline" head={['Seq', 'Time', 'Event', 'Node', 'Details']}>
        {events.map((e) => (
          <tr key={e.sequence} data-sequence={e.sequence} data-type={e.type}>
            <td>{e.sequence}</td>
            <td class="time">{e.timestamp}</td>
            <td>{e.type}</td>
            <td>{e.nodeId ?? ''}</td>
            <td>
              <code>{JSON.stringify(e.payload).slice(0, 300)}</code>
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
