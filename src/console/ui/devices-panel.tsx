// Every endpoint with its connection and devices, live from the host's `devices` events (issue 18 item 1).
import { api } from './api.js';
import { useConsole } from './context.js';
import { DeviceRow } from './device-row.js';
import type { Attachment, EndpointRow, EndpointsAnswer, LiveEndpoint } from './types.js';

function connectionText(c: LiveEndpoint['connection'] | undefined, a: Attachment | undefined): string {
  const why = c?.code || c?.reason ? ` ${c.code ?? ''}${c.code && c.reason ? ': ' : ''}${c.reason ?? ''}` : '';
  const at = c?.at ? ` (at ${c.at})` : '';
  switch (c?.state) {
    case 'connected':
      return '● Connected';
    case 'recovering':
      return '◐ Reconnected: reconciling unsettled commands before new ones';
    case 'reconnecting':
      return `◌ Disconnected, reconnecting.${why}${at}`;
    case 'connecting':
      return '◌ Connecting';
    case 'disabled':
      return '○ Not attached: the endpoint is disabled';
    case 'not_attached': {
      const next = c.next_attempt_at ? ` Next attempt at ${c.next_attempt_at}.` : '';
      const n = c.attempts ? ` (${c.attempts} failed attempts)` : '';
      return `■ Not attached${n}.${why}${at}.${next}`;
    }
    default:
      if (a && a.state !== 'attached') return `Not attached: ${a.state} (${a.attempts} failed attempts).`;
      return c?.reason ? `Connection state unknown: ${c.reason}` : 'Connection state unknown';
  }
}

function EndpointCard({ e, live }: { e: EndpointRow; live: LiveEndpoint | undefined }) {
  const { act, isOperator } = useConsole();
  const toggle = (action: 'Enable' | 'Disable', disabled: boolean) => (
    <button
      type="button"
      disabled={disabled}
      onClick={() =>
        act(`${action} ${e.connector_id}`, () =>
          api('POST', `/endpoints/${action.toLowerCase()}`, { connector_id: e.connector_id }),
        )
      }
    >
      {action}
    </button>
  );
  const state = live?.connection.state ?? (e.enabled ? 'unknown' : 'disabled');
  return (
    <article
      class="endpoint"
      data-connector-id={e.connector_id}
      data-connection={state}
      aria-label={`Endpoint ${e.display_name}`}
    >
      <h3>
        {e.display_name} ({e.endpoint_id})
      </h3>
      <p class={`connection ${state === 'connected' ? 'good' : state === 'unknown' ? '' : 'bad'}`} role="status">
        {connectionText(live?.connection, e.attachment)}
      </p>
      <p>
        Connector {e.connector_id} · {e.transport ?? ''} · conformance {e.conformance ?? 'no claim'} (
        {e.trust ?? 'no claim'}) · <strong class="enabled-state">{e.enabled ? 'enabled' : 'disabled'}</strong> ·
        experimental
      </p>
      <p>
        {toggle('Enable', !isOperator || e.enabled)} {toggle('Disable', !isOperator || !e.enabled)}
      </p>
      <ul class="devices">
        {e.devices.map((d) => (
          <DeviceRow
            key={d.device_id}
            endpointId={e.endpoint_id}
            enabled={e.enabled}
            device={d}
            live={live?.devices.find((x) => x.device_id === d.device_id)}
          />
        ))}
      </ul>
    </article>
  );
}

export function DevicesPanel({ data, live }: { data: EndpointsAnswer | null; live: Map<string, LiveEndpoint> }) {
  if (!data) return null;
  return (
    <>
      <p id="integration" class="notice">
        {data.integration.enabled
          ? 'MHS integration (experimental): enabled for the endpoints marked enabled below.'
          : 'MHS integration (experimental) is disabled: no endpoint is enabled and no endpoint connection exists. An operator enables an endpoint below; the action is recorded in the ledger.'}
      </p>
      <p class="notice">
        <strong>MHS.SAFETY.NOT_CERTIFIED</strong>: the states below are what the endpoints report; the physical stops
        and interlocks of the installation decide.
      </p>
      <div id="endpoints">
        {data.endpoints.map((e) => (
          <EndpointCard key={e.connector_id} e={e} live={live.get(e.connector_id)} />
        ))}
      </div>
    </>
  );
}
