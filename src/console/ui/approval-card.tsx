// One pending approval with everything HOST-040 lists, rendered from the host's records (never model text).
import { useRef } from 'preact/hooks';
import { api } from './api.js';
import { useConsole } from './context.js';
import { AllowEstop, EstopButton } from './estop-controls.js';
import { fieldSchema, headline, outOfRange, rangeOf, rangeText, remainingText } from './approval-context.js';
import type { ApprovalWithContext } from './approval-context.js';
import type { LiveDevice } from './types.js';

function methodText(a: ApprovalWithContext): string {
  if (a.method !== 'dual_control') return 'one operator (human click)';
  const so = a.votes.length ? ` (so far: ${a.votes.map((x) => x.principal.name).join(', ')})` : '';
  return `dual control: ${a.votes.length} of ${a.principals_needed ?? 2} distinct operators${so}`;
}

/** When the request stops waiting: the host's wait limit when this server knows it, else a plain statement. */
function expiryText(a: ApprovalWithContext): string {
  const w = a.wait_limit;
  if (!w) {
    return 'none known to this server: approvals carry no expiry in the store and no wait limit (policy approvalTimeoutMs) is known here; the caller that asked may apply its own';
  }
  return `${w.expires_at} (${remainingText(w.remaining_ms)} at the last refresh; wait limit ${Math.round(w.timeout_ms / 1000)} s from this host's policy)`;
}

export function ApprovalCard({ a, live }: { a: ApprovalWithContext; live?: LiveDevice | undefined }) {
  const { act, isOperator } = useConsole();
  const reason = useRef<HTMLInputElement>(null);
  const v = a.view ?? {};
  const dev = v.device ?? {};
  const cap = v.capability ?? {};
  const id = a.approval_id;
  const decide = (d: 'approve' | 'deny', label: string) =>
    act(`${label} ${id}`, () => {
      const r = reason.current?.value ?? '';
      return api('POST', `/approvals/${id}/${d}`, r ? { reason: r } : {});
    });
  const rows: Array<[string, string]> = [
    ['Device', `${dev.display_name} (${dev.device_id})`],
    ['Endpoint', v.endpoint_id ?? ''],
    ['Mode', dev.mode ?? ''],
    ['Risk class', `${dev.risk_class} (capability ${cap.risk_class})`],
    ['Capability', `${cap.capability_id}: ${cap.summary}`],
    ['Semantic tags', (cap.semantic_tags ?? []).join(', ') || '(none)'],
  ];
  return (
    <article class="approval" data-approval-id={id} aria-labelledby={`h-${id}`}>
      <h3 id={`h-${id}`} class="headline">
        {headline(a)} <span class="digest">#{v.input_digest_short}</span>
      </h3>
      <p class="subhead">
        {cap.capability_id} on {dev.display_name}; the approval binds input digest {v.input_digest_short}
      </p>
      <dl>
        {rows.map(([k, val]) => [<dt key={`t${k}`}>{k}</dt>, <dd key={`d${k}`}>{val}</dd>])}
        <dt>Input</dt>
        <dd>
          <div class="table-wrap">
            <table class="input" aria-label="Exact input">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Value</th>
                  <th scope="col">Unit</th>
                  <th scope="col">Meaning</th>
                  <th scope="col">Allowed (manifest)</th>
                  <th scope="col">Check</th>
                </tr>
              </thead>
              <tbody>
                {(v.input ?? []).map((l) => {
                  const range = rangeOf(fieldSchema(a.input_schema, l.path));
                  const problem = outOfRange(l, range);
                  return (
                    <tr key={l.path} data-path={l.path}>
                      <td>{l.path}</td>
                      <td class="value">{l.value}</td>
                      <td class="unit">{l.unit ?? ''}</td>
                      <td>{l.description ?? ''}</td>
                      <td class="allowed">{a.input_schema ? rangeText(range) : 'manifest not available'}</td>
                      <td class={problem ? 'range-check out-of-range' : 'range-check'}>
                        {problem ? `⚠ Out of range: ${problem}` : range ? '✓ within range' : ''}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </dd>
        <dt>Input digest</dt>
        <dd>
          <span class="digest" title={v.input_digest} data-digest={v.input_digest}>
            {v.input_digest_short}
          </span>
        </dd>
        <dt>Resource</dt>
        <dd>{v.resource ?? '(none)'}</dd>
        <dt>Expected revision</dt>
        <dd>{v.expected_revision ?? '(none)'}</dd>
        <dt>Permit</dt>
        <dd class="permit">
          {`${v.permit?.required ? 'required' : 'not required'}; TTL ${Math.round((v.permit?.ttl_ms ?? 0) / 1000)} s; single use`}
        </dd>
        {v.fidelity_gaps ? (
          <>
            <dt>Fidelity gaps</dt>
            <dd class="gaps">
              {`${dev.mode} device, not hardware. Gaps: ${v.fidelity_gaps.length ? v.fidelity_gaps.join('; ') : 'none declared'}`}
            </dd>
          </>
        ) : null}
        <dt>Safety</dt>
        <dd class="safety">{`${v.safety_notice}: MHS is not a safety channel.`}</dd>
        <dt>E-stop</dt>
        <dd class="estop-statement">{v.estop?.statement ?? ''}</dd>
        {a.requested_by ? (
          <>
            <dt>Requested by</dt>
            <dd class="requested-by">{`${a.requested_by.kind} ${a.requested_by.name ?? a.requested_by.id}`}</dd>
          </>
        ) : null}
        <dt>Asked</dt>
        <dd class="asked">
          {a.created_at ?? ''}
          {a.run_id ? ` by run ${a.run_id}${a.node_id ? ` node ${a.node_id}` : ''}` : ''}
        </dd>
        <dt>Approval</dt>
        <dd class="method">{methodText(a)}</dd>
        <dt>Expires</dt>
        <dd class="expires">{expiryText(a)}</dd>
      </dl>
      {live?.gate.status === 'shut' ? (
        <p class="alert gate-warning" role="alert">
          ■ The device's gate is shut: command {live.gate.command_id} ({live.gate.reason}) is not settled; this command
          is refused until it is (HOST-091).
        </p>
      ) : null}
      {live?.safety && 'estop' in live.safety && live.safety.estop.engaged ? (
        <p class="alert estop-warning" role="alert">
          ■ The device's e-stop is engaged: approving cannot make it run until an operator resets it.
        </p>
      ) : null}
      <p>
        <label for={`reason-${id}`}>Reason (optional) </label>
        <input id={`reason-${id}`} ref={reason} type="text" maxLength={500} />
      </p>
      <p>
        <button type="button" class="approve" disabled={!isOperator} onClick={() => decide('approve', 'Approve')}>
          Approve
        </button>
        <button type="button" class="deny" disabled={!isOperator} onClick={() => decide('deny', 'Deny')}>
          Deny
        </button>
        {a.estop_allowed || v.estop?.kind === 'hardware' ? (
          <EstopButton
            endpointId={a.endpoint_id}
            deviceId={a.device_id}
            name={dev.display_name ?? a.device_id}
            estop={v.estop}
          />
        ) : (
          <AllowEstop
            endpointId={a.endpoint_id}
            deviceId={a.device_id}
            name={dev.display_name ?? a.device_id}
            allowed={false}
          />
        )}
      </p>
    </article>
  );
}
