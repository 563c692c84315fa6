import type { Clock, TimerHandle } from '../core/index.js';
import { toHostError } from '../core/index.js';
import type { AttachStatus } from '../engine/attach-retry.js';
import type { Engine } from '../engine/engine.js';
import type { DurableGate } from '../ledger/device-gates.js';
import type { DurableLedger, Ledger } from '../ledger/ledger-types.js';
import type { DeviceProfile, SafetyStatus } from '../mhs/wire-types.js';
import type { SafetyActions } from '../policy/estop.js';
import type { OperatorEvent, OperatorEvents } from '../policy/operator-events.js';
import type { EndpointDirectory, EndpointSummary, OperatorLink } from '../policy/ports.js';

/** How this host stands with an endpoint's connection, as the devices panel shows it (issue 18 item 1). */
export interface ConnectionView {
  state: 'connected' | 'recovering' | 'reconnecting' | 'connecting' | 'not_attached' | 'disabled' | 'unknown';
  /** Why it is not connected: the last drop or failed attach. */
  code?: string;
  reason?: string;
  at?: string;
  attempts?: number;
  next_attempt_at?: string;
}

/** One device, live: its disclosure, e-stop and interlocks read from `mhs__safety`, and its gate (HOST-091). */
export interface DeviceView {
  device_id: string;
  display_name: string;
  mode: string;
  risk_class: string;
  estop: DeviceProfile['estop'] | null;
  estop_allowed: boolean;
  /** The endpoint's `mhs__safety` answer; null when not read (not connected), or the code of a failed read. */
  safety: { estop: { engaged: boolean }; interlocks: SafetyStatus['interlocks'] } | { error: string } | null;
  gate: { status: 'open' } | { status: 'shut'; command_id: string; reason: DurableGate['reason']; since: string };
}

export interface EndpointView {
  endpoint_id: string;
  connector_id: string;
  display_name: string;
  enabled: boolean;
  connection: ConnectionView;
  devices: DeviceView[];
  notice: 'MHS.SAFETY.NOT_CERTIFIED';
}

/** What the feed reads; every part but the directory is optional (a slice without an engine shows less). */
export interface DeviceFeedDeps {
  directory: EndpointDirectory;
  ledger: Ledger;
  safety: SafetyActions;
  events: OperatorEvents;
  clock: Clock;
  engine?: Engine;
  link?: OperatorLink;
  attachments?: () => AttachStatus[];
  /** Calls `fn` whenever an endpoint's connection or attach state changes; returns the unsubscribe. */
  connectionChanges?: (fn: () => void) => () => void;
  /** How often the endpoints' safety status (e-stop, interlocks) is re-read while someone watches. Default 2000 ms. */
  safetyPollMs?: number;
}

/** The live device state, and a stream of it while anyone listens. */
export interface DeviceFeed {
  snapshot(): Promise<EndpointView[]>;
  /** `fn` gets every changed snapshot; the first listener starts watching, the last one leaving stops it. */
  subscribe(fn: (endpoints: EndpointView[]) => void): () => void;
}

// Ledger entries that open, shut or mark a gate, or follow an e-stop/reset: the panel changes with them.
const TRIGGERS = /^(command\.|receipt$|reconcile$|error$|estop\.|reset\.)/;

function connectionOf(e: EndpointSummary, deps: DeviceFeedDeps): ConnectionView {
  if (!e.enabled) return { state: 'disabled', reason: 'not enabled by an operator (HOST-066)' };
  const actor = deps.engine?.endpoint(e.endpoint_id);
  if (actor && actor.connectorId === e.connector_id) {
    const s = actor.status$.value;
    const d = actor.lastDrop;
    const why = d ? { code: d.code, reason: d.reason, at: d.at } : {};
    if (s === 'connected') return { state: 'connected' };
    if (s === 'recovering') return { state: 'recovering', ...why };
    if (s === 'disconnected') return { state: d?.terminal ? 'not_attached' : 'reconnecting', ...why };
    return { state: 'not_attached', reason: 'detached', ...why };
  }
  const a = deps.attachments?.().find((x) => x.connector_id === e.connector_id);
  if (a?.state === 'connecting') return { state: 'connecting', attempts: a.attempts };
  if (a?.state === 'retrying') {
    return {
      state: 'not_attached',
      attempts: a.attempts,
      ...(a.last_error ? { code: a.last_error.code, reason: a.last_error.message, at: a.last_error.at } : {}),
      ...(a.next_attempt_at ? { next_attempt_at: a.next_attempt_at } : {}),
    };
  }
  if (!deps.engine) return { state: 'unknown', reason: 'this process runs no engine' };
  return { state: 'not_attached', reason: 'not attached to this host process' };
}

/**
 * A call to `endpointId` over the operator route failed with `code`: when it is a transport failure, the engine's
 * connection to that endpoint is told to check itself now (HOST-082), so a killed endpoint shows disconnected at
 * once instead of at the next idle probe. Only a report: the reconnecting connection decides and reconnects.
 */
export function reportTransportFailure(engine: Engine | undefined, endpointId: string, code: string): void {
  if (code.startsWith('MHS.TRANSPORT.')) engine?.endpoint(endpointId)?.probeNow();
}

async function readSafety(deps: DeviceFeedDeps, endpointId: string, deviceId: string): Promise<DeviceView['safety']> {
  if (!deps.link) return null;
  try {
    const conn = await deps.link.operatorConnection(endpointId);
    const res = await conn.callTool('mhs__safety', { device_id: deviceId });
    const s = res.structuredContent as Partial<SafetyStatus> | undefined;
    if (res.isError || !s || typeof s.estop?.engaged !== 'boolean' || !Array.isArray(s.interlocks)) {
      return { error: 'MHS.SAFETY.INTERLOCK_UNKNOWN' };
    }
    return {
      estop: { engaged: s.estop.engaged },
      interlocks: s.interlocks.map((i) => ({ id: String(i.id), state: i.state })),
    };
  } catch (err) {
    const { code } = toHostError(err);
    reportTransportFailure(deps.engine, endpointId, code);
    return { error: code };
  }
}

/**
 * Builds the live device state from the host's own records and the endpoints' safety status, and pushes it on
 * the operator event stream (`devices` events, see `openSse`): at once on every connection change, e-stop,
 * reset, enablement change and gate-moving ledger entry, and when a safety poll finds the e-stop or an interlock
 * changed on the endpoint's side.
 */
export function createDeviceFeed(deps: DeviceFeedDeps): DeviceFeed {
  const listeners = new Set<(e: EndpointView[]) => void>();
  const d = deps.ledger as Partial<DurableLedger>;
  let last = '';
  let timer: TimerHandle | undefined;
  let offs: Array<() => void> = [];
  let running: Promise<void> | null = null;
  let again = false;

  async function snapshot(): Promise<EndpointView[]> {
    const list = await deps.directory.list();
    const gates = typeof d.deviceGates === 'function' ? await d.deviceGates() : [];
    return Promise.all(
      list.map(async (e) => {
        const connection = connectionOf(e, deps);
        const live = connection.state === 'connected' || connection.state === 'recovering';
        const devices = await Promise.all(
          e.devices.map(async (dev): Promise<DeviceView> => {
            const g = gates.find((x) => x.endpoint_id === e.endpoint_id && x.device_id === dev.device_id);
            return {
              device_id: dev.device_id,
              display_name: dev.display_name,
              mode: dev.mode,
              risk_class: dev.risk_class,
              estop: dev.estop ?? null,
              estop_allowed: await deps.safety.allowed(e.endpoint_id, dev.device_id),
              safety: live ? await readSafety(deps, e.endpoint_id, dev.device_id) : null,
              gate: g
                ? { status: 'shut', command_id: g.command_id, reason: g.reason, since: g.since }
                : { status: 'open' },
            };
          }),
        );
        return {
          endpoint_id: e.endpoint_id,
          connector_id: e.connector_id,
          display_name: e.display_name,
          enabled: e.enabled,
          connection,
          devices,
          notice: 'MHS.SAFETY.NOT_CERTIFIED' as const,
        };
      }),
    );
  }

  // One refresh at a time; a change during one runs another after it (nothing is lost, nothing runs twice).
  function refresh(): void {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          const s = await snapshot();
          const text = JSON.stringify(s);
          if (text !== last) {
            last = text;
            for (const l of [...listeners]) l(s);
          }
        } catch {
          // A store or directory failure shows as ledger.status; the next change retries.
        }
      } while (again && listeners.size > 0);
    })().finally(() => (running = null));
  }

  function poll(): void {
    timer = deps.clock.setTimeout(() => {
      refresh();
      poll();
    }, deps.safetyPollMs ?? 2000);
  }

  function start(): void {
    const onEvent = (e: OperatorEvent) => {
      if (e.type === 'ledger.appended' && !TRIGGERS.test(String(e.data.kind ?? ''))) return;
      if (e.type.startsWith('approval.') || e.type.startsWith('permit.') || e.type === 'ledger.status') return;
      refresh();
    };
    offs = [deps.events.subscribe(onEvent), ...(deps.connectionChanges ? [deps.connectionChanges(refresh)] : [])];
    poll();
  }

  function stop(): void {
    for (const off of offs) off();
    offs = [];
    if (timer) deps.clock.clearTimeout(timer);
    timer = undefined;
    last = '';
  }

  return {
    snapshot,
    subscribe(fn) {
      listeners.add(fn);
      if (listeners.size === 1) start();
      return () => {
        listeners.delete(fn);
        if (listeners.size === 0) stop();
      };
    },
  };
}
