// One device, live: disclosure, e-stop state and control, interlocks, gate, reset (issue 18 item 1), and its
// plots: numeric outputs and commands over time (item 5).
import { api } from './api.js';
import { useState } from 'preact/hooks';
import { useConsole } from './context.js';
import { DeviceCommands } from './device-commands.js';
import { DevicePlot } from './device-plot.js';
import { AllowEstop, EstopButton } from './estop-controls.js';
import type { DeviceProfile, LiveDevice } from './types.js';

function SafetyState({ live }: { live: LiveDevice | undefined }) {
  const s = live?.safety;
  if (!s)
    return (
      <span class="state unknown" data-estop="unknown">
        E-stop state: not read (endpoint not connected)
      </span>
    );
  if ('error' in s)
    return (
      <span class="state unknown" data-estop="unknown">
        E-stop state: unreadable ({s.error})
      </span>
    );
  return (
    <>
      {s.estop.engaged ? (
        <strong class="state bad" data-estop="engaged">
          ■ E-stop ENGAGED: the device is stopped until an operator resets it
        </strong>
      ) : (
        <span class="state good" data-estop="released">
          ○ E-stop released
        </span>
      )}
      {s.interlocks.length ? (
        <ul class="interlocks" aria-label="Interlocks">
          {s.interlocks.map((i) => (
            <li key={i.id} data-interlock-id={i.id} data-state={i.state} class={i.state === 'closed' ? 'good' : 'bad'}>
              {i.state === 'closed' ? '○' : '■'} Interlock {i.id}: {i.state}
            </li>
          ))}
        </ul>
      ) : (
        <span class="muted"> No interlocks declared.</span>
      )}
    </>
  );
}

function GateState({ live }: { live: LiveDevice | undefined }) {
  const g = live?.gate;
  if (!g) return null;
  if (g.status === 'open')
    return (
      <span class="gate" data-gate="open">
        Gate open: takes a command
      </span>
    );
  const what =
    g.reason === 'unknown'
      ? `unknown outcome of ${g.command_id}, awaiting reconciliation`
      : g.reason === 'running'
        ? `command ${g.command_id} running`
        : `command ${g.command_id} in flight`;
  return (
    <strong class="gate bad" data-gate="shut" data-gate-reason={g.reason} data-command-id={g.command_id}>
      ■ Gate shut: {what} (since {g.since})
    </strong>
  );
}

export function DeviceRow(p: {
  endpointId: string;
  enabled: boolean;
  device: DeviceProfile;
  live: LiveDevice | undefined;
}) {
  const { act, isOperator } = useConsole();
  const [plot, setPlot] = useState(false);
  const [commands, setCommands] = useState(false);
  const d = p.device;
  const allowed = p.live?.estop_allowed ?? d.estop_allowed ?? false;
  let stop;
  if (!p.enabled) stop = <span>(endpoint disabled: no e-stop path) </span>;
  else if (d.estop?.kind === 'hardware')
    stop = <EstopButton endpointId={p.endpointId} deviceId={d.device_id} name={d.display_name} estop={d.estop} />;
  else if (allowed)
    stop = (
      <>
        <EstopButton endpointId={p.endpointId} deviceId={d.device_id} name={d.display_name} estop={d.estop} />{' '}
        <AllowEstop endpointId={p.endpointId} deviceId={d.device_id} name={d.display_name} allowed />
      </>
    );
  else stop = <AllowEstop endpointId={p.endpointId} deviceId={d.device_id} name={d.display_name} allowed={false} />;
  return (
    <li class="device" data-device-id={d.device_id}>
      <h4>
        {d.display_name} ({d.device_id})
      </h4>
      <p class="disclosure">
        Mode <strong>{d.mode}</strong> · risk class <strong>{d.risk_class}</strong> · e-stop{' '}
        {d.estop?.kind ?? 'unknown'}
        {d.mode !== 'hardware' ? ' · simulated, not hardware' : ''}
      </p>
      <p class="live">
        <SafetyState live={p.live} /> <GateState live={p.live} />
      </p>
      <p class="actions">
        {stop}{' '}
        <button
          type="button"
          disabled={!isOperator || !p.enabled}
          aria-label={`Reset ${d.display_name}`}
          onClick={() =>
            act(`Reset ${d.device_id}`, () =>
              api('POST', '/reset', { endpoint_id: p.endpointId, device_id: d.device_id }),
            )
          }
        >
          Reset
        </button>{' '}
        <button
          type="button"
          aria-expanded={plot}
          aria-label={`Plot outputs of ${d.display_name}`}
          onClick={() => setPlot(!plot)}
        >
          {plot ? 'Hide plot' : 'Plot outputs'}
        </button>{' '}
        <button
          type="button"
          aria-expanded={commands}
          aria-label={`Commands timeline of ${d.display_name}`}
          onClick={() => setCommands(!commands)}
        >
          {commands ? 'Hide commands' : 'Commands timeline'}
        </button>
      </p>
      {plot ? <DevicePlot endpointId={p.endpointId} deviceId={d.device_id} /> : null}
      {commands ? <DeviceCommands endpointId={p.endpointId} deviceId={d.device_id} /> : null}
    </li>
  );
}
