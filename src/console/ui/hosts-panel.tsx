// Hosts: the host processes of this store, from `GET /v1/operator/hosts` (issue 19 item 4): each process, running
// or not, its host lease, the runs it drives and the endpoints it attaches, with their fencing tokens. Re-read with the console's other records.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Table } from './record-tables.js';

/** One process as the hosts route lists it (src/server/hosts-route.ts). */
export interface HostProcess {
  owner: string;
  self: boolean;
  running: boolean | null;
  host_lease: { started_at: string; renewed_at: string; expires_at: string; ended_at: string | null } | null;
  runs: Array<{ run_id: string; token: number; expires_at: string }>;
  /** Endpoint leases (issue 19): the connectors this process attaches; absent from an older host. */
  endpoints?: Array<{ connector_id: string; endpoint_id: string | null; token: number; expires_at: string }>;
}

/** Said in words and a symbol, never by colour alone (issue 18 item 7). */
function stateOf(p: HostProcess): [state: string, text: string] {
  if (p.running === null) return ['unknown', '? unknown'];
  return p.running ? ['running', '● running'] : ['gone', '✖ gone'];
}

function lease(l: HostProcess['host_lease']) {
  if (!l) return <span class="muted">no host lease</span>;
  if (l.ended_at) return <>ended {l.ended_at}</>;
  return (
    <>
      until {l.expires_at}
      <br />
      <span class="muted">
        since {l.started_at}, renewed {l.renewed_at}
      </span>
    </>
  );
}

export function HostsPanel({ tick }: { tick: number }) {
  const [list, setList] = useState<HostProcess[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    void api<{ processes: HostProcess[] }>('GET', '/hosts')
      .then((r) => {
        setList(r.processes);
        setFailed(null);
      })
      .catch((e: Error) => setFailed(e.message));
  }, [tick]);
  const running = list?.filter((p) => p.running).length ?? 0;
  return (
    <>
      <p id="hosts-summary">
        {failed
          ? `Host processes could not be read: ${failed}`
          : list
            ? `${list.length} host process${list.length === 1 ? '' : 'es'} on this store, ${running} running.`
            : 'Reading host processes…'}
      </p>
      <Table
        id="hosts"
        head={['Process', 'State', 'Host lease', 'Runs driven (fencing token)', 'Endpoints attached (fencing token)']}
      >
        {(list ?? []).map((p) => {
          const [state, text] = stateOf(p);
          return (
            <tr
              key={p.owner}
              data-owner={p.owner}
              data-running={state}
              data-runs={p.runs.length}
              data-endpoints={p.endpoints?.length ?? 0}
            >
              <td class="id">
                {p.owner}
                {p.self ? (
                  <>
                    <br />
                    <span class="muted">this console's process</span>
                  </>
                ) : null}
              </td>
              <td class={`host-state ${state}`}>{text}</td>
              <td class="lease">{lease(p.host_lease)}</td>
              <td class="runs">
                {p.runs.length ? (
                  <ul>
                    {p.runs.map((r) => (
                      <li key={r.run_id} data-run-id={r.run_id} data-token={r.token}>
                        <span class="id">{r.run_id}</span> token {r.token}
                        <br />
                        <span class="muted">lease until {r.expires_at}</span>
                      </li>
                    ))}
                  </ul>
                ) : (
                  <span class="muted">no run lease</span>
                )}
              </td>
              <td class="endpoints">
                {p.endpoints?.length ? (
                  <ul>
                    {p.endpoints.map((e) => (
                      <li key={e.connector_id} data-connector-id={e.connector_id} data-token={e.token}>
                        <span class="id">{e.endpoint_id ?? e.connector_id}</span> token {e.token}
                        <br />
                        <span class="muted">
                          connector {e.connector_id}, lease until {e.expires_at}
                        </span>
                      </li>
                    ))}
                  </ul>
                ) : (
                  <span class="muted">no endpoint lease</span>
                )}
              </td>
            </tr>
          );
        })}
      </Table>
    </>
  );
}
