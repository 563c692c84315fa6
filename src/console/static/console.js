// mhs-host operator console. Everything shown comes from the host's operator API (its own records:
// manifests, validated inputs, the ledger); text is set with textContent only, never parsed as HTML.
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem('mhs-token') || '', who: null, abort: null, timer: null };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity))
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/v1/operator${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok)
    throw Object.assign(new Error(data?.message || res.statusText), {
      status: res.status,
      code: data?.error,
      details: data?.details,
    });
  return data;
}

function say(text, kind = '') {
  const s = $('status');
  s.textContent = text;
  s.className = kind;
}

const isOperator = () => state.who?.role === 'operator';
const short = (d) => (typeof d === 'string' ? d.slice(0, 12) : '');

async function act(label, fn) {
  try {
    const r = await fn();
    await refresh();
    say(`${label}: done`, 'ok');
    return r;
  } catch (e) {
    say(`${label}: refused (${e.code || e.status}): ${e.message}`, 'error');
    await refresh();
    return null;
  }
}

function estopControl(endpointId, deviceId, name, estop) {
  if (!estop) return el('span', { text: 'E-stop kind unknown: this host cannot stop the device.' });
  if (estop.kind === 'hardware') {
    return el(
      'p',
      { class: 'physical', 'data-physical-ref': estop.physical_ref || '' },
      `Hardware e-stop only. This host cannot stop this device. Physical stop: ${estop.physical_ref || 'unknown location'}`,
    );
  }
  const btn = el(
    'button',
    {
      type: 'button',
      class: 'estop',
      disabled: !isOperator(),
      'aria-label': `E-stop ${name}`,
      onclick: () =>
        act(`E-stop ${deviceId}`, async () => {
          const out = await api('POST', '/estop', { endpoint_id: endpointId, device_id: deviceId });
          if (out.status === 'hardware_only') {
            throw Object.assign(new Error(`hardware e-stop only: use the physical stop at ${out.physical_ref}`), {
              code: 'MHS.SAFETY.HARDWARE_ESTOP_ONLY',
            });
          }
          if (out.status === 'error') throw Object.assign(new Error(out.error.message), { code: out.error.mhs_code });
          return out;
        }),
    },
    'E-STOP',
  );
  const wrap = el('span', {}, btn);
  if (estop.kind === 'both' && estop.physical_ref)
    wrap.append(el('span', { class: 'physical' }, ` Physical stop: ${estop.physical_ref}`));
  return wrap;
}

function allowControl(endpointId, deviceId, name, allowed) {
  const label = allowed ? 'Remove e-stop allowance' : 'Allow trusted e-stop';
  return el(
    'span',
    {},
    allowed ? '' : el('span', { class: 'error', text: 'Trusted e-stop not allowed for this device. ' }),
    el(
      'button',
      {
        type: 'button',
        disabled: !isOperator(),
        'aria-label': `${label}: ${name}`,
        onclick: () =>
          act(`${label} ${deviceId}`, () =>
            api('POST', '/estop/allow', { endpoint_id: endpointId, device_id: deviceId, allowed: !allowed }),
          ),
      },
      label,
    ),
  );
}

function approvalCard(a) {
  const v = a.view || {};
  const dev = v.device || {};
  const cap = v.capability || {};
  const id = a.approval_id;
  const reason = el('input', { id: `reason-${id}`, type: 'text', maxlength: 500 });
  const rows = [
    ['Device', `${dev.display_name} (${dev.device_id})`],
    ['Endpoint', v.endpoint_id],
    ['Mode', dev.mode],
    ['Risk class', `${dev.risk_class} (capability ${cap.risk_class})`],
    ['Capability', `${cap.capability_id}: ${cap.summary}`],
    ['Semantic tags', (cap.semantic_tags || []).join(', ') || '(none)'],
  ];
  const inputTable = el(
    'table',
    { class: 'input', 'aria-label': 'Exact input' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', text: 'Field' }),
        el('th', { scope: 'col', text: 'Value' }),
        el('th', { scope: 'col', text: 'Unit' }),
        el('th', { scope: 'col', text: 'Meaning' }),
      ),
    ),
    el(
      'tbody',
      {},
      (v.input || []).map((l) =>
        el(
          'tr',
          {},
          el('td', { text: l.path }),
          el('td', { class: 'value', text: l.value }),
          el('td', { class: 'unit', text: l.unit || '' }),
          el('td', { text: l.description || '' }),
        ),
      ),
    ),
  );
  const dl = el(
    'dl',
    {},
    rows.map(([k, val]) => [el('dt', { text: k }), el('dd', { text: String(val ?? '') })]),
    el('dt', { text: 'Input' }),
    el('dd', {}, inputTable),
    el('dt', { text: 'Input digest' }),
    el(
      'dd',
      {},
      el('span', { class: 'digest', title: v.input_digest, 'data-digest': v.input_digest }, v.input_digest_short),
    ),
    el('dt', { text: 'Resource' }),
    el('dd', { text: v.resource ?? '(none)' }),
    el('dt', { text: 'Expected revision' }),
    el('dd', { text: v.expected_revision ?? '(none)' }),
    el('dt', { text: 'Permit' }),
    el('dd', {
      class: 'permit',
      text: `${v.permit?.required ? 'required' : 'not required'}; TTL ${Math.round((v.permit?.ttl_ms || 0) / 1000)} s; single use`,
    }),
    v.fidelity_gaps
      ? [
          el('dt', { text: 'Fidelity gaps' }),
          el('dd', {
            class: 'gaps',
            text: `${dev.mode} device, not hardware. Gaps: ${v.fidelity_gaps.length ? v.fidelity_gaps.join('; ') : 'none declared'}`,
          }),
        ]
      : [],
    el('dt', { text: 'Safety' }),
    el('dd', { class: 'safety', text: `${v.safety_notice}: MHS is not a safety channel.` }),
    el('dt', { text: 'E-stop' }),
    el('dd', { class: 'estop-statement', text: v.estop?.statement || '' }),
    a.requested_by
      ? [
          el('dt', { text: 'Requested by' }),
          el('dd', {
            class: 'requested-by',
            text: `${a.requested_by.kind} ${a.requested_by.name || a.requested_by.id}`,
          }),
        ]
      : [],
    el('dt', { text: 'Approval' }),
    el('dd', {
      class: 'method',
      text:
        a.method === 'dual_control'
          ? `dual control: ${a.votes.length} of ${a.principals_needed} distinct operators${a.votes.length ? ` (so far: ${a.votes.map((x) => x.principal.name).join(', ')})` : ''}`
          : 'one operator (human click)',
    }),
  );
  return el(
    'article',
    { class: 'approval', 'data-approval-id': id, 'aria-labelledby': `h-${id}` },
    el(
      'h3',
      { id: `h-${id}` },
      `${cap.capability_id} on ${dev.display_name} `,
      el('span', { class: 'digest' }, `#${v.input_digest_short}`),
    ),
    dl,
    el('p', {}, el('label', { for: `reason-${id}` }, 'Reason (optional) '), reason),
    el(
      'p',
      {},
      el(
        'button',
        {
          type: 'button',
          class: 'approve',
          disabled: !isOperator(),
          onclick: () =>
            act(`Approve ${id}`, () =>
              api('POST', `/approvals/${id}/approve`, reason.value ? { reason: reason.value } : {}),
            ),
        },
        'Approve',
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'deny',
          disabled: !isOperator(),
          onclick: () =>
            act(`Deny ${id}`, () => api('POST', `/approvals/${id}/deny`, reason.value ? { reason: reason.value } : {})),
        },
        'Deny',
      ),
      a.estop_allowed || v.estop?.kind === 'hardware'
        ? estopControl(a.endpoint_id, a.device_id, dev.display_name, v.estop)
        : allowControl(a.endpoint_id, a.device_id, dev.display_name, false),
    ),
  );
}

// Approval cards are kept while unchanged, so a refresh never wipes a reason being typed.
const cards = new Map();
function renderApprovals(list) {
  const nodes = list.map((a) => {
    const sig = JSON.stringify([a.status, a.votes.map((v) => v.principal.id), state.who.role, a.estop_allowed]);
    const have = cards.get(a.approval_id);
    if (have && have.sig === sig) return have.node;
    const node = approvalCard(a);
    cards.set(a.approval_id, { sig, node });
    return node;
  });
  for (const id of [...cards.keys()]) if (!list.some((a) => a.approval_id === id)) cards.delete(id);
  const box = $('approvals');
  const same = box.children.length === nodes.length && nodes.every((n, i) => box.children[i] === n);
  if (!same) box.replaceChildren(...nodes);
}

function fill(tbodyOf, rows) {
  const tb = $(tbodyOf).querySelector('tbody');
  tb.replaceChildren(...rows);
}

async function refresh() {
  if (!state.who) return;
  const [pending, decided, permits, endpoints, ledger, receipts] = await Promise.all([
    api('GET', '/approvals?status=pending'),
    api('GET', '/approvals?status=approved,denied,consumed,voided,expired&limit=20'),
    api('GET', '/permits'),
    api('GET', '/endpoints'),
    api('GET', '/ledger?limit=50'),
    api('GET', '/ledger?limit=500&kind=receipt'),
  ]);
  renderApprovals(pending.approvals);
  $('no-approvals').hidden = pending.approvals.length > 0;
  fill(
    'decisions',
    decided.approvals.map((a) =>
      el(
        'tr',
        { 'data-approval-id': a.approval_id, 'data-status': a.status },
        el('td', { text: a.approval_id }),
        el('td', { text: a.device_id }),
        el('td', { text: a.capability_id }),
        el('td', { class: 'digest', text: short(a.input_digest) }),
        el('td', { class: 'status', text: a.status }),
        el('td', { text: a.method }),
        el('td', {
          text: a.votes.map((x) => x.principal.name).join(', ') || (a.method === 'policy_rule' ? 'policy' : ''),
        }),
      ),
    ),
  );
  fill(
    'receipts',
    receipts.entries
      .slice(-10)
      .reverse()
      .map((e) => {
        const r = e.receipt || {};
        return el(
          'tr',
          { 'data-command-id': r.command_id, 'data-status': r.status },
          el('td', { text: e.seq }),
          el('td', { text: r.command_id }),
          el('td', { text: r.device_id }),
          el('td', { text: r.capability_id }),
          el('td', { class: 'status', text: r.status }),
          el('td', { text: r.error ? r.error.mhs_code : '' }),
          el('td', {}, el('code', { text: JSON.stringify(r.output) })),
        );
      }),
  );
  $('no-permits').hidden = permits.permits.length > 0;
  fill(
    'permits',
    permits.permits.map((p) =>
      el(
        'tr',
        { 'data-permit-id': p.permit_id },
        el('td', { text: p.permit_id }),
        el('td', { text: p.device_id }),
        el('td', { text: p.capability_id }),
        el('td', { class: 'digest', text: short(p.input_digest) }),
        el('td', { text: p.expires_at }),
        el(
          'td',
          {},
          el(
            'button',
            {
              type: 'button',
              disabled: !isOperator(),
              'aria-label': `Revoke ${p.permit_id}`,
              onclick: () => act(`Revoke ${p.permit_id}`, () => api('POST', `/permits/${p.permit_id}/revoke`, {})),
            },
            'Revoke',
          ),
        ),
      ),
    ),
  );
  renderEndpoints(endpoints);
  renderStoreHealth(ledger.status);
  fill(
    'ledger',
    ledger.entries
      .slice()
      .reverse()
      .map((e) => {
        const { seq, ts, kind, digest, prev_digest, ...rest } = e;
        return el(
          'tr',
          { 'data-seq': seq, 'data-kind': kind },
          el('td', { text: seq }),
          el('td', { text: ts }),
          el('td', { text: kind }),
          el('td', {}, el('code', { text: JSON.stringify(rest).slice(0, 400) })),
        );
      }),
  );
}

// HOST-093: a store failure is shown to the operator while it lasts (pushed as a ledger.status event).
function renderStoreHealth(status) {
  const box = $('store-health');
  const down = status?.state === 'unavailable';
  box.hidden = !down;
  box.dataset.state = status?.state || 'unknown';
  box.textContent = down
    ? `Ledger store unavailable since ${status.since}: ${status.last_error?.code || ''} ${status.last_error?.message || ''}. New commands are refused until the store recovers.`
    : '';
}

function deviceItem(e, d) {
  let stop;
  if (!e.enabled) stop = el('span', { text: '(endpoint disabled: no e-stop path) ' });
  else if (d.estop?.kind === 'hardware') stop = estopControl(e.endpoint_id, d.device_id, d.display_name, d.estop);
  else if (d.estop_allowed)
    stop = el(
      'span',
      {},
      estopControl(e.endpoint_id, d.device_id, d.display_name, d.estop),
      ' ',
      allowControl(e.endpoint_id, d.device_id, d.display_name, true),
    );
  else stop = allowControl(e.endpoint_id, d.device_id, d.display_name, false);
  const reset = el(
    'button',
    {
      type: 'button',
      disabled: !isOperator() || !e.enabled,
      'aria-label': `Reset ${d.display_name}`,
      onclick: () =>
        act(`Reset ${d.device_id}`, () =>
          api('POST', '/reset', { endpoint_id: e.endpoint_id, device_id: d.device_id }),
        ),
    },
    'Reset',
  );
  return el(
    'li',
    { 'data-device-id': d.device_id },
    `${d.display_name} (${d.device_id}) · ${d.mode} · ${d.risk_class} `,
    stop,
    ' ',
    reset,
  );
}

// Issue 16: an enabled endpoint that could not be attached is retried; show that and the last error.
function attachmentLine(a) {
  if (!a || a.state === 'attached') return null;
  const err = a.last_error ? ` Last error ${a.last_error.code}: ${a.last_error.message} (${a.last_error.at}).` : '';
  const next = a.next_attempt_at ? ` Next attempt at ${a.next_attempt_at}.` : '';
  return el('p', {
    class: 'attachment',
    'data-state': a.state,
    text: `Not attached: ${a.state} (${a.attempts} failed attempts).${err}${next}`,
  });
}

function endpointCard(e) {
  const toggle = (action, disabled) =>
    el(
      'button',
      {
        type: 'button',
        disabled,
        onclick: () =>
          act(`${action} ${e.connector_id}`, () =>
            api('POST', `/endpoints/${action.toLowerCase()}`, { connector_id: e.connector_id }),
          ),
      },
      action,
    );
  return el(
    'article',
    { class: 'endpoint', 'data-connector-id': e.connector_id, 'aria-label': `Endpoint ${e.display_name}` },
    el('h3', { text: `${e.display_name} (${e.endpoint_id})` }),
    el(
      'p',
      {},
      `Connector ${e.connector_id} · ${e.transport || ''} · conformance ${e.conformance || 'no claim'} (${e.trust || 'no claim'}) · `,
      el('strong', { class: 'enabled-state', text: e.enabled ? 'enabled' : 'disabled' }),
      ' · experimental',
    ),
    attachmentLine(e.attachment),
    el('p', {}, toggle('Enable', !isOperator() || e.enabled), toggle('Disable', !isOperator() || !e.enabled)),
    el(
      'ul',
      {},
      e.devices.map((d) => deviceItem(e, d)),
    ),
  );
}

function renderEndpoints(data) {
  $('integration').textContent = data.integration.enabled
    ? 'MHS integration (experimental): enabled for the endpoints marked enabled below.'
    : 'MHS integration (experimental) is disabled: no endpoint is enabled and no endpoint connection exists. An operator enables an endpoint below; the action is recorded in the ledger.';
  $('endpoints').replaceChildren(...data.endpoints.map(endpointCard));
}

function scheduleRefresh() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => refresh().catch((e) => say(e.message, 'error')), 40);
}

async function listen() {
  state.abort?.abort();
  const ac = new AbortController();
  state.abort = ac;
  try {
    const res = await fetch('/v1/operator/events', {
      headers: { authorization: `Bearer ${state.token}` },
      signal: ac.signal,
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (/^event: (?!hello)/m.test(block)) scheduleRefresh();
      }
    }
  } catch {
    // aborted or network: fall through to retry
  }
  if (!ac.signal.aborted) setTimeout(listen, 1000);
}

async function signIn(token) {
  state.token = token;
  try {
    state.who = await api('GET', '/whoami');
  } catch (e) {
    state.who = null;
    say(`Sign-in failed (${e.code || e.status})`, 'error');
    return;
  }
  sessionStorage.setItem('mhs-token', token);
  $('whoami').textContent = `Signed in as ${state.who.name} (${state.who.role}${isOperator() ? '' : ': read only'})`;
  $('sign-out').hidden = false;
  $('app').hidden = false;
  document.body.dataset.ready = 'false';
  await refresh();
  document.body.dataset.ready = 'true';
  listen();
  // Fallback for changes without an event (e.g. a peer host process): refresh every 5 s.
  setInterval(scheduleRefresh, 5000);
}

$('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  signIn($('token').value.trim());
});
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem('mhs-token');
  state.abort?.abort();
  location.reload();
});
$('verify').addEventListener('click', async () => {
  try {
    const r = await api('POST', '/ledger/verify');
    $('verify-result').textContent = r.ok
      ? `Chain verified: ${r.count} entries`
      : `Chain BROKEN at seq ${r.broken_at} (${r.reason})`;
    $('verify-result').className = r.ok ? 'ok' : 'error';
  } catch (e) {
    $('verify-result').textContent = `Verify refused (${e.code || e.status})`;
    $('verify-result').className = 'error';
  }
  await refresh();
});
if (state.token) signIn(state.token);
