// Runs: the newest runs (status, workflow, started, what each waits on), start one, open one (issue 18 item 2).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, runApi } from './api.js';
import { useConsole } from './context.js';
import { RunDetail } from './run-detail.js';
import type { RunSummary, WorkflowSummary } from './run-types.js';
import { Table } from './record-tables.js';

const WAITING: Record<string, string> = {
  'waiting-approval': 'an approval',
  'waiting-input': 'an answer',
  'waiting-external': 'an external event',
  paused: 'a resume',
};

export function RunsPanel({ tick }: { tick: number }) {
  const { act } = useConsole();
  const [runs, setRuns] = useState<RunSummary[]>([]);
  const [workflows, setWorkflows] = useState<WorkflowSummary[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const wf = useRef<HTMLSelectElement>(null);
  const inputs = useRef<HTMLTextAreaElement>(null);
  const reload = useCallback(() => {
    void runApi<{ runs: RunSummary[] }>('GET', '/runs?limit=20')
      .then((r) => setRuns(r.runs))
      .catch(() => undefined);
  }, []);
  useEffect(() => {
    void runApi<{ workflows: WorkflowSummary[] }>('GET', '/workflows')
      .then((r) => setWorkflows(r.workflows))
      .catch(() => undefined);
  }, [tick]);
  useEffect(reload, [tick, reload]);

  const start = () =>
    act('Start run', async () => {
      let parsed: unknown = {};
      const text = inputs.current?.value.trim() ?? '';
      try {
        parsed = text ? JSON.parse(text) : {};
      } catch {
        throw new ApiError('inputs are not JSON', 400, 'validation_error');
      }
      const snap = await runApi<{ runId: string }>('POST', '/runs', { workflowId: wf.current?.value, inputs: parsed });
      setOpen(snap.runId);
      reload();
    });

  return (
    <>
      <form
        id="start-run"
        aria-label="Start a run"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label for="run-workflow">Workflow</label>{' '}
        <select id="run-workflow" ref={wf}>
          {workflows.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name ? `${w.name} (${w.id})` : w.id}
            </option>
          ))}
        </select>{' '}
        <label for="run-inputs">Inputs (JSON)</label>{' '}
        <textarea id="run-inputs" ref={inputs} rows={1} cols={30} placeholder="{}" />{' '}
        <button type="submit" disabled={!workflows.length}>
          Start run
        </button>
      </form>
      {runs.length ? null : <p id="no-runs">No run yet.</p>}
      <Table id="runs" head={['Run', 'Workflow', 'Status', 'Started', 'Waiting on', '']}>
        {runs.map((r) => (
          <tr key={r.runId} data-run-id={r.runId} data-status={r.status} class={r.runId === open ? 'selected' : ''}>
            <td class="id">{r.runId}</td>
            <td>{r.workflowId}</td>
            <td class="status">{r.status}</td>
            <td class="time">{r.startedAt ?? r.createdAt}</td>
            <td>{WAITING[r.status] ?? ''}</td>
            <td>
              <button type="button" aria-label={`Open run ${r.runId}`} onClick={() => setOpen(r.runId)}>
                Open
              </button>
            </td>
          </tr>
        ))}
      </Table>
      {open ? <RunDetail key={open} runId={open} onChanged={reload} /> : null}
    </>
  );
}
