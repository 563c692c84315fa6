import { ErrorCode, HostError, RealClock } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import type { ConnectOptions } from '../mhs/connector.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import { connectWithReconnect } from '../mhs/reconnect.js';
import { DEFAULT_POLICY, deploymentOf, guardPermits, retentionOf } from '../policy/index.js';
import type { CallGate, PolicyGate } from '../policy/index.js';
import { settleInterruptedApprovals } from './approval-recovery.js';
import { createEngine } from './engine.js';
import type { Engine, EngineOptions } from './engine.js';
import type { EndpointActor } from './endpoint-actor.js';
import type { RemoteEndpointInfo } from './endpoint-handle.js';
import type { Manifest } from '../mhs/wire-types.js';
import { AttachRetry } from './attach-retry.js';
import type { AttachStatus } from './attach-retry.js';
import { openOperatorRuntime } from './operator-runtime.js';
import { openRecoveryMarkStore } from './recovery-mark.js';
import { openSessionStore } from './session-store.js';
import { EndpointForwarding } from './endpoint-forwarding.js';
import { mayHandOver } from './endpoint-spread.js';
import { EndpointOwnership } from './endpoint-ownership.js';
import { forwardedSafety } from './forward-safety.js';
import type { EndpointLeaseTiming } from './endpoint-ownership.js';
import { endpointLeaseLost, nameEndpoint } from './endpoint-leases.js';
import { RetentionActor } from './retention-actor.js';
import type { OperatorRuntime, PolicySource } from './operator-runtime.js';

/** How often `serve` (attachEnabled) probes an idle endpoint connection unless told otherwise. */
const SERVE_PROBE_MS = 15_000;

/** Options of {@link openHostRuntime}. */
export interface HostRuntimeOptions {
  /** An open store (the caller closes it), or a location: `--db` / `MHS_HOST_DB` / `./.mhs-host/host.db`. */
  db?: Db | string;
  clock?: Clock;
  /** The approval policy (default `DEFAULT_POLICY`: deny by default, humans decide R2+). */
  policy?: PolicySource;
  /**
   * Connect and attach every enabled connector now, and each connector an operator enables later (`serve`).
   * Default false: the CLI attaches what it needs with {@link HostRuntime.connectEndpoint}. A long-running host
   * (this on) also applies the policy's retention on its schedule (HOST-056).
   */
  attachEnabled?: boolean;
  /** Fields stamped on every ledger entry this runtime writes, e.g. a replay run's label (HOST-085). */
  ledgerLabel?: Readonly<Record<string, unknown>>;
  /** Engine tuning; the ledger, clock, policy gate, deployment policy, enablement check and artifacts are the runtime's. */
  engine?: Partial<Omit<EngineOptions, 'ledger' | 'clock' | 'gate' | 'deployment' | 'isEnabled' | 'artifacts'>>;
  /**
   * Where failures no caller sees are reported (HOST-093): the ledger's lease renewals and, unless `engine` names
   * its own, the engine's background work. `serve` logs them.
   */
  onBackgroundError?: (err: HostError) => void;
  /**
   * Issue 19, with `attachEnabled` on a PostgreSQL store: each enabled connector is attached only by the one process
   * holding its endpoint lease (src/engine/endpoint-ownership.ts), with this timing. Ignored on SQLite.
   */
  endpointLeases?: EndpointLeaseTiming;
}

/**
 * The one runtime of a host process, used by `serve` and by every CLI command that drives endpoints:
 * the store, the ledger, connector rows, enablement, the operator services (policy gate with approvals,
 * permits and e-stop) and the engine with that policy gate as its call gate. There is no second,
 * weaker governance path: `invoke`, `run-task`, `demo`, `run` and `serve` decide every call the same way.
 */
export interface HostRuntime extends OperatorRuntime {
  engine: Engine;
  /** Endpoint ids attached to the engine, and connectors that failed to connect (with the reason). */
  attached: string[];
  failed: Array<{ connectorId: string; code: string; message: string }>;
  /** Every enabled connector this runtime tried to attach (`attachEnabled`): attached, or retrying with its last error. */
  attachments(): AttachStatus[];
  /** Calls `fn` after every connection or attach change of an endpoint (the console's devices panel, issue 18). */
  connectionChanges(fn: () => void): () => void;
  /**
   * Connects the connector `ref` (connector id or endpoint id) and attaches it to the engine, or returns
   * the actor already attached. Refuses a disabled connector with `MHS.HOST.CONNECTOR_DISABLED` before any
   * process or socket opens (HOST-068), an unknown one with `MHS.HOST.ENDPOINT_UNKNOWN`.
   */
  connectEndpoint(ref: string, opts?: Pick<ConnectOptions, 'stderr' | 'cwd'>): Promise<EndpointActor>;
  /** Whether this process may attach `connectorId`: always, unless endpoints are leased and another holds it. */
  mayAttach(connectorId: string): boolean;
  /** The endpoint leases this process holds (issue 19), or undefined when endpoints are not leased. */
  endpointOwnership: EndpointOwnership | undefined;
  /** Stops the engine (in-flight receipts written), closes connections, and the store when the runtime opened it. */
  close(): Promise<void>;
}

/**
 * The engine's call gate: the policy gate, with a human approval that expired unanswered (the policy's
 * `approvalTimeoutMs`) reported as `MHS.HOST.APPROVAL_TIMEOUT` instead of the generic
 * `MHS.HOST.APPROVAL_REQUIRED`, so callers can tell "nobody decided" from "still needs an approval".
 */
function timeoutAwareGate(gate: PolicyGate): CallGate {
  return {
    async authorize(ctx, signal) {
      const d = await gate.authorize(ctx, signal);
      const approvalId = d.kind === 'deny' ? d.details?.approval_id : undefined;
      if (d.kind === 'deny' && d.code === ErrorCode.HOST_APPROVAL_REQUIRED && typeof approvalId === 'string') {
        const req = await gate.get(approvalId).catch(() => undefined);
        if (req?.status === 'expired')
          return { ...d, code: ErrorCode.HOST_APPROVAL_TIMEOUT, message: 'no approval decision in time' };
      }
      return d;
    },
    claimPermit: (permitId) => gate.claimPermit(permitId),
  };
}

/** The endpoint-lease fence of an attach (issue 19): in its callers' transactions, and checked on its own. */
function fencesOf(db: Db, fence: (t: Db) => Promise<void>): { fence: typeof fence; checkFence: () => Promise<void> } {
  return { fence, checkFence: () => db.tx((t) => fence(t)) };
}

/**
 * Opens the {@link HostRuntime}. Recovery runs first (every intent without an outcome becomes unknown);
 * with `attachEnabled`, every enabled connector is then connected and attached (its unsettled commands
 * reconciled before new ones), and a connector enabled later by an operator is attached then; a connector
 * that cannot be reached is reported in `failed`, does not stop the host, and is retried with backoff until it
 * attaches or is disabled (`attachments()`, issue 16).
 */
export async function openHostRuntime(opts: HostRuntimeOptions = {}): Promise<HostRuntime> {
  const clock = opts.clock ?? new RealClock();
  const ownsDb = typeof opts.db !== 'object';
  const db = typeof opts.db === 'object' ? opts.db : await openDb(resolveDbLocation({ flag: opts.db }));
  try {
    const report = opts.onBackgroundError;
    const base = await openOperatorRuntime(db, clock, opts.policy, {
      ...(opts.ledgerLabel ? { ledgerLabel: opts.ledgerLabel } : {}),
      ...(report ? { onLeaseError: report } : {}),
    });
    const { connectors, enablement, services, manifests } = base;
    const isEnabled = (id: string) => enablement.isEnabled(id);
    const policy = opts.policy ?? DEFAULT_POLICY;
    const recoveryMark = await openRecoveryMarkStore(db);
    // Set once the endpoint leases exist (below); the engine asks it for an endpoint not attached (yet).
    let awaitEndpoint: ((endpointId: string) => Promise<void>) | undefined;
    let forwarding: EndpointForwarding | undefined;
    // Issue 19: the manifests other processes admitted (stored by digest), for endpoints reached through them.
    const storedManifests = new Map<string, Manifest>();
    const storedManifest = async (connectorId: string): Promise<Manifest | undefined> => {
      const digest = await connectors.manifestDigest(connectorId);
      if (!digest) return undefined;
      const m = storedManifests.get(digest) ?? ((await base.artifacts.getManifest(digest)) as Manifest | undefined);
      if (m) storedManifests.set(digest, m);
      return m;
    };
    const engine = createEngine({
      awaitEndpoint: (id) => awaitEndpoint?.(id) ?? Promise.resolve(),
      forward: (req) => forwarding?.forward(req) ?? Promise.resolve(undefined),
      remote: {
        list: async () => {
          if (!forwarding) return [];
          const enabled = new Set((await connectors.list()).filter((r) => r.enabled).map((r) => r.connector_id));
          const out: RemoteEndpointInfo[] = [];
          for (const h of await forwarding.heldElsewhere()) {
            const manifest = enabled.has(h.connectorId) ? await storedManifest(h.connectorId) : undefined;
            if (manifest?.endpoint_id === h.endpointId) out.push({ ...h, manifest });
          }
          return out;
        },
        send: (info, op, waitMs) =>
          forwarding ? forwarding.sendOp(info.connectorId, info.endpointId, op, waitMs) : Promise.resolve(undefined),
      },
      // Session snapshots live in the store, so a restarted host reuses or reopens them (HOST-036).
      sessionStore: await openSessionStore(db),
      // Start-up recovery reads only the ledger tail past the last settled intent.
      recoveryMark,
      ...(report ? { onBackgroundError: report } : {}),
      ...opts.engine,
      ledger: base.ledger,
      clock,
      gate: timeoutAwareGate(services.gate),
      // HOST-090: the policy document's `deployment` section, read with the policy on every decision.
      deployment: async () => deploymentOf(typeof policy === 'function' ? await policy() : policy),
      // Read from the store on every call, so a disable by any operator surface applies at once (HOST-068).
      isEnabled,
      artifacts: base.artifacts,
    });
    const started = await engine.start();
    // Issue 16: an approval a killed process took and never journalled an intent for is recorded not executed.
    await settleInterruptedApprovals(started.approvalsWithoutIntent, {
      gate: services.gate,
      permits: services.permits,
      ...(report ? { onError: report } : {}),
    });
    const attached: string[] = [];
    const failed: HostRuntime['failed'] = [];
    const conns: Array<{ close(): Promise<void> }> = [];
    const watchers = new Set<() => void>();
    // After the change has been applied (an attach attempt's state is set once its promise settles).
    const changed = () =>
      void clock.setTimeout(() => {
        for (const w of [...watchers]) w();
      }, 0);
    const connectionChanges = (fn: () => void) => {
      watchers.add(fn);
      return () => void watchers.delete(fn);
    };

    // Issue 19: on a shared PostgreSQL store, one process at a time attaches each enabled connector.
    const leased =
      opts.attachEnabled && opts.endpointLeases && db.dialect === 'postgres'
        ? new EndpointOwnership(db, clock, { timing: opts.endpointLeases, ...(report ? { onError: report } : {}) })
        : undefined;
    const mayAttach = (connectorId: string) => !leased || leased.holds(connectorId);
    // Issue 19: a call to an endpoint another live process holds goes through that process (endpoint_requests).
    const localSafety = services.safety;
    if (leased)
      forwarding = new EndpointForwarding({
        db,
        clock,
        ledger: base.ledger,
        ownership: leased,
        engine: () => engine,
        connectorOf: async (endpointId) =>
          (await connectors.list()).find((r) => r.endpoint_id === endpointId && r.enabled)?.connector_id,
        ...(opts.engine?.transportMarginMs !== undefined ? { transportMarginMs: opts.engine.transportMarginMs } : {}),
        pollMs: base.approvalPollMs,
        voidApproval: (approvalId, reason) => services.gate.voidOpen({ approvalId }, reason),
        approvals: { events: services.events, gate: services.gate },
        safety: () => localSafety,
        ...(report ? { onError: report } : {}),
      });
    // Issue 19: an e-stop or reset of an endpoint another live process attaches is made by that process.
    if (forwarding) services.safety = forwardedSafety(localSafety, forwarding, services.events);
    if (leased)
      awaitEndpoint = async (endpointId) => {
        const row = (await connectors.list()).find((r) => r.endpoint_id === endpointId && r.enabled);
        if (!row) return;
        // Not held here: a sweep now takes it if its holder is gone (a run taken over from it resumes here).
        if (!leased.holds(row.connector_id)) await leased.sweepNow();
        if (!leased.holds(row.connector_id)) return;
        await (connecting.get(row.connector_id) ?? retry.attach(row.connector_id));
      };

    const connecting = new Map<string, Promise<EndpointActor>>();
    const connectEndpoint: HostRuntime['connectEndpoint'] = async (ref, copts = {}) => {
      const rows = await connectors.list();
      const row = rows.find((r) => r.connector_id === ref || r.endpoint_id === ref);
      if (!row)
        throw new HostError(
          ErrorCode.HOST_ENDPOINT_UNKNOWN,
          `no connector ${ref}`,
          { ref, known: rows.map((r) => r.connector_id) },
          { remediation: 'Run `mhs-host endpoints list` to see connector ids.' },
        );
      const existing = row.endpoint_id ? engine.endpoint(row.endpoint_id) : undefined;
      if (existing && existing.connectorId === row.connector_id) return existing;
      if (!mayAttach(row.connector_id)) throw endpointLeaseLost(row.connector_id, leased!.owner, 0);
      // One connection per connector: a connect already under way (e.g. attach-on-enable) is shared.
      const pending = connecting.get(row.connector_id);
      if (pending) return pending;
      const p = open(row, copts).finally(() => connecting.delete(row.connector_id));
      connecting.set(row.connector_id, p);
      return p;
    };

    // A long-running host (serve) notices an idle HTTP endpoint that went away without waiting for a call.
    const probeMs = opts.engine?.probeIntervalMs ?? (opts.attachEnabled ? SERVE_PROBE_MS : 0);
    const open = async (row: ConnectorRow, copts: Pick<ConnectOptions, 'stderr' | 'cwd'>): Promise<EndpointActor> => {
      // Reconnecting (backoff; calls fail fast while away): after a lost connection the endpoint comes back by
      // itself and its unsettled commands are reconciled first, as with `engine.connect` (HOST-036, 082, 091).
      const conn = await connectWithReconnect(row, {
        clock,
        descriptor: row.descriptor ?? null,
        isEnabled,
        stderr: copts.stderr ?? 'ignore',
        ...(copts.cwd ? { cwd: copts.cwd } : {}),
        ...(opts.engine?.reconnect ? { backoff: opts.engine.reconnect } : {}),
        ...(probeMs > 0 ? { probeIntervalMs: probeMs } : {}),
        whileAway: 'fail',
      });
      try {
        manifests.set(row.connector_id, conn.manifest);
        await connectors.recordManifest(row.connector_id, conn.manifest.endpoint_id, conn.manifest.manifest_digest);
        // A permit revoked, expired or used is never sent, even if the endpoint has not seen it (HOST-047, 070).
        const token = leased?.tokenOf(row.connector_id);
        if (leased && token === undefined) throw endpointLeaseLost(row.connector_id, leased.owner, 0);
        const ep = await engine.attach(
          guardPermits(conn, (id) => services.gate.claimPermit(id)),
          leased ? fencesOf(db, leased.fenceFor(row.connector_id)) : {},
        );
        if (leased && token !== undefined) await nameEndpoint(db, row.connector_id, token, ep.endpointId);
        const sub = ep.status$.subscribe(changed);
        conns.push({ close: async () => sub.unsubscribe() });
        conns.push(conn);
        attached.push(ep.endpointId);
        return ep;
      } catch (err) {
        await conn.close().catch(() => undefined);
        throw err;
      }
    };

    // Issue 16: an enabled connector that cannot be reached is retried with backoff until it attaches or is disabled.
    const retry = new AttachRetry({
      clock,
      attempt: (id) => {
        changed();
        return connectEndpoint(id).finally(changed);
      },
    });
    // HOST-056: the long-running host prunes as the policy's retention says, on its schedule.
    const retention = opts.attachEnabled
      ? new RetentionActor({
          db,
          ledger: base.ledger,
          clock,
          recoveryMark,
          policy: async () => retentionOf(typeof policy === 'function' ? await policy() : policy),
          ...(report ? { onError: report } : {}),
        })
      : undefined;
    await retention?.start();
    let off = (): void => undefined;
    const attachNow = async (connectorId: string) => {
      await retry.attach(connectorId);
      const e = retry.lastError(connectorId);
      if (e) failed.push({ connectorId, code: e.code, message: e.message });
    };
    if (opts.attachEnabled && leased) {
      await forwarding?.start();
      await leased.start({
        enabled: async () => (await connectors.list()).filter((r) => r.enabled).map((r) => r.connector_id),
        claimed: async (leases) => {
          for (const l of leases) {
            await attachNow(l.connectorId);
            const ep = engine.endpoints().find((e) => e.connectorId === l.connectorId);
            // A takeover: the former holder's commands on it are reconciled before anything new is sent (HOST-091).
            if (ep && l.previous && l.previous !== leased.owner) await engine.adoptFrom(ep.endpointId, l.previous);
          }
          // Calls forwarded to the former holder that it never claimed are made here, once each.
          forwarding?.applyHeld(leases.map((l) => l.connectorId));
        },
        lost: async (connectorId) => {
          retry.cancel(connectorId);
          const ep = engine.endpoints().find((e) => e.connectorId === connectorId);
          if (!ep) return;
          await engine.detach(ep.endpointId);
          const at = attached.indexOf(ep.endpointId);
          if (at >= 0) attached.splice(at, 1);
          changed();
        },
        // Spreading: hand over only an endpoint with nothing under way here (never mid-command).
        idle: async (connectorId) => {
          const ep = engine.endpoints().find((e) => e.connectorId === connectorId);
          if (!ep || forwarding?.busyWith(connectorId)) return undefined;
          const lane = ep.laneStats();
          if (lane.pending > 0 || lane.running > 0) return undefined;
          if (engine.pending().some((p) => p.endpointId === ep.endpointId)) return undefined;
          if (!(await mayHandOver(db, ep.endpointId))) return undefined;
          // Recorded under this process's lease before it lets go: its detach after the hand-over is fenced out.
          await engine.collectEvidence(ep.endpointId);
          return ep.endpointId;
        },
      });
      off = enablement.onChange((c) => {
        if (c.enabled && !leased.holds(c.connector_id)) leased.sweepSoon();
        else if (c.enabled)
          void retry.attach(c.connector_id); // owned: attach never rejects
        else retry.cancel(c.connector_id);
        changed();
      });
    } else if (opts.attachEnabled) {
      for (const row of await connectors.list()) {
        if (!(await isEnabled(row.connector_id))) continue;
        await attachNow(row.connector_id);
      }
      off = enablement.onChange((c) => {
        if (c.enabled)
          void retry.attach(c.connector_id); // owned: attach never rejects
        else retry.cancel(c.connector_id);
        changed();
      });
    }

    return {
      ...base,
      engine,
      attached,
      failed,
      connectEndpoint,
      mayAttach,
      endpointOwnership: leased,
      attachments: () => retry.status(),
      connectionChanges,
      operatorDeps: () => ({ ...base.operatorDeps(), attachments: () => retry.status(), engine, connectionChanges }),
      async close() {
        off();
        leased?.stopClaiming();
        retry.close();
        await forwarding?.close();
        await retention?.stop();
        await engine.stop().catch(() => undefined);
        for (const c of conns) await c.close().catch(() => undefined);
        // Issue 19: the endpoints go at once; the other processes attach them at their next sweep.
        await leased?.close();
        // A clean stop ends this process's lease: hosts on other machines may take over its gates at once.
        await base.ledger.releaseLease().catch(() => undefined);
        await base.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (err) {
    if (ownsDb) await db.close().catch(() => undefined);
    throw err;
  }
}
