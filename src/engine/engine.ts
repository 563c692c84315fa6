import { ErrorCode, HostError, RealClock, createIdFactory, pooledCryptoRandom, toHostError } from '../core/index.js';
import type { MhsWireError } from '../core/index.js';
import type { DurableLedger, Ledger } from '../ledger/ledger-types.js';
import type { ReadResult } from '../mhs/wire-types.js';
import { connectWithReconnect } from '../mhs/reconnect.js';
import type { CallEnv, PendingCommand } from './call-types.js';
import { faultError, pause } from './call-outcome.js';
import { defaultCallGate } from './default-gate.js';
import { createDeploymentGuard } from './deployment-guard.js';
import { NO_DOCUMENT_DEPLOYMENT } from '../policy/deployment-policy.js';
import { EndpointActor } from './endpoint-actor.js';
import { RemoteEndpoint, remoteEndpoints } from './endpoint-handle.js';
import type { EndpointHandle } from './endpoint-handle.js';
import { collectEndpointEvidence, recordDisclosure, taskEvidence } from './endpoint-evidence.js';
import type { CollectedEvidence } from './endpoint-evidence.js';
import { governedCall } from './governed-call.js';
import { reconcileCommand, reconcileEndpoint } from './reconcile.js';
import { ReconcileTimers } from './reconcile-timers.js';
import type { ReconcileResult } from './reconcile.js';
import { ownedElsewhere, recoveryScan, unknownEntry, unsettledCommand } from './recovery.js';
import { OrphanAdopter } from './orphan-adopter.js';
import { commandOf, restoreCommand } from './command-actor.js';
import { InputSchemaCache } from './schema-cache.js';
import { ReceiptBatcher } from './receipt-batcher.js';
import { SessionDisclosures } from './session-disclosure.js';
import { runTask } from './task-runner.js';
import { EngineTracer } from './tracing.js';

/** How long a reconciliation waits for an unsettled command's endpoint to be taken over here (issue 19). */
const ADOPT_WAIT_MS = 60_000;
/** How long a reconciliation forwarded to an endpoint's holder is awaited (plus the transport margin and slack). */
const RECONCILE_FORWARD_WAIT_MS = 10_000;
const ADOPT_POLL_MS = 500;

export type { AttachOptions, Engine, EngineOptions, StartReport } from './engine-types.js';
import type { Engine, EngineOptions } from './engine-types.js';

/**
 * Creates the engine. Call `start()` (recovery) before `attach()`; attach endpoints connected by the MCP
 * connector (`connect()` in src/mhs), which refuses disabled connectors (HOST-068).
 */
export function createEngine(o: EngineOptions): Engine {
  const clock = o.clock ?? new RealClock();
  const ids = o.ids ?? createIdFactory(clock, pooledCryptoRandom());
  const env: CallEnv = {
    clock,
    ledger: o.ledger,
    ids,
    gate: o.gate ?? defaultCallGate,
    schemas: new InputSchemaCache(),
    tracer: new EngineTracer(o.spanProcessors ? { spanProcessors: o.spanProcessors } : {}),
    isEnabled: o.isEnabled ?? (() => true),
    usedPermits: new Set(),
    ...permitLookup(o.ledger),
    transportMarginMs: o.transportMarginMs ?? 2_000,
    ...(o.followLimitMs !== undefined ? { followLimitMs: o.followLimitMs } : {}),
    pending: new Map(),
    commands: new Map(),
    inflight: new Set(),
    batcher: new ReceiptBatcher(o.ledger, clock),
    ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
    composition: o.experimentalComposition === true,
  };
  const principal = { kind: 'agent' as const, id: `host:${o.hostId ?? 'mhs-host'}` };
  env.disclosures = new SessionDisclosures(o.ledger, principal);
  const actors = new Map<string, EndpointActor>();
  let started = false;

  const actorOf = (endpointId: string): EndpointActor => {
    const ep = actors.get(endpointId);
    if (!ep)
      throw new HostError(ErrorCode.HOST_ENDPOINT_UNKNOWN, `endpoint ${endpointId} is not connected`, {
        endpoint_id: endpointId,
        connected: [...actors.keys()],
      });
    return ep;
  };

  const attachedActor = async (endpointId: string): Promise<EndpointActor> => {
    if (!actors.has(endpointId) && o.awaitEndpoint)
      await o.awaitEndpoint(endpointId).catch((e: unknown) => o.onBackgroundError?.(toHostError(e)));
    return actorOf(endpointId);
  };

  const admit = createDeploymentGuard({
    ledger: o.ledger,
    clock,
    source: o.deployment ?? NO_DOCUMENT_DEPLOYMENT,
  });

  // Issue 19: endpoints another process holds; what they forward is made here once this process took them over.
  const remoteHandles = o.remote
    ? remoteEndpoints(o.remote, admit, attachedActor, (id) => actors.has(id))
    : () => Promise.resolve([]);

  const handleOf = async (endpointId: string): Promise<EndpointHandle> => {
    if (!actors.has(endpointId) && o.awaitEndpoint)
      await o.awaitEndpoint(endpointId).catch((e: unknown) => o.onBackgroundError?.(toHostError(e)));
    const local = actors.get(endpointId);
    if (local) return local;
    return (await remoteHandles()).find((h) => h.endpointId === endpointId) ?? actorOf(endpointId);
  };

  const assertLedgerWritable = (): void => {
    const d = o.ledger as Partial<DurableLedger>;
    if (typeof d.status === 'function' && d.status().state === 'unavailable')
      throw new HostError(ErrorCode.HOST_LEDGER_UNAVAILABLE, 'the ledger cannot be written: new commands are refused', {
        status: d.status(),
      });
  };

  /** After a reconnect: disclosure of a changed manifest (HOST-012, 050), then every unsettled command (HOST-091). */
  const recoverAfterReconnect = async (ep: EndpointActor, manifestChanged: boolean): Promise<void> => {
    if (manifestChanged) {
      const d = o.ledger as Partial<DurableLedger>;
      if (typeof d.setRedaction === 'function') d.setRedaction(ep.endpointId, ep.manifest.redaction.paths);
      await recordDisclosure(o.ledger, o.artifacts, ep);
    }
    for (const p of env.pending.values())
      if (p.endpointId === ep.endpointId && p.reason !== 'in_flight') commandOf(env, p, ep).bind(ep);
    for (const r of await reconcileEndpoint(env, ep)) if ('error' in r) o.onBackgroundError?.(r.error);
  };

  const reconcileLate = async (ep: EndpointActor, commandId: string): Promise<void> => {
    await ep.recovered();
    const p = env.pending.get(commandId);
    if (!p || p.reason === 'in_flight' || actors.get(ep.endpointId) !== ep) return;
    await reconcileCommand(env, ep, p).catch((e: unknown) => o.onBackgroundError?.(toHostError(e)));
  };

  // Issue 16: a command with no record before its deadline is reconciled again once the deadline has passed.
  const rearmed = new ReconcileTimers(
    clock,
    async (commandId) => {
      const p = env.pending.get(commandId);
      const ep = p && actors.get(p.endpointId);
      if (ep) await reconcileLate(ep, commandId);
    },
    (err) => o.onBackgroundError?.(toHostError(err)),
  );
  env.scheduleReconcile = (p, at) => rearmed.schedule(p.commandId, at);
  env.cancelReconcile = (commandId) => rearmed.cancel(commandId);

  const orphans = new OrphanAdopter(env, o.onBackgroundError);

  /**
   * Issue 19: a command another process journaled (a run taken over from it resumes here) is not tracked by this
   * engine; once its endpoint is attached here (the lease taken over with the run) its gate is adopted, so the caller
   * gets its reconciled outcome instead of `MHS.OUTCOME.UNKNOWN`.
   */
  const adoptUntracked = async (commandId: string): Promise<PendingCommand | undefined> => {
    const up = unsettledCommand(await o.ledger.byCommand(commandId));
    if (!up) return undefined;
    const ep = await attachedActor(up.endpointId).catch(() => undefined);
    if (ep && !env.pending.has(commandId)) await orphans.adoptById(ep, commandId);
    return env.pending.get(commandId);
  };

  /**
   * Issue 19: an unsettled command whose endpoint another process still holds (a dead holder's lease not lapsed yet)
   * is adopted once this process takes the endpoint over, or seen settled by a live holder; until then, or for at
   * most ADOPT_WAIT_MS, nothing is sent (HOST-091) and the caller waits instead of reporting the outcome unknown.
   * A command whose connector is disabled is not waited for: no process takes a disabled endpoint over.
   */
  const awaitAdoption = async (commandId: string): Promise<PendingCommand | undefined> => {
    const until = clock.now() + ADOPT_WAIT_MS;
    while (clock.now() < until) {
      const entries = await o.ledger.byCommand(commandId);
      const up = unsettledCommand(entries);
      if (!up) return undefined;
      const connectorId = entries.find((e) => e.kind === 'command.intent')?.connector_id;
      if (typeof connectorId === 'string' && !(await env.isEnabled(connectorId, up.endpointId))) return undefined;
      await pause(env, ADOPT_POLL_MS);
      const p = env.pending.get(commandId) ?? (await adoptUntracked(commandId));
      if (p) return p;
    }
    return undefined;
  };

  /**
   * Issue 19: the commands of an endpoint another live process attaches are tracked by that process (its gates, its
   * timers), so it reconciles them, once, and its result is returned here; undefined when they are reconciled here
   * (attached here, tracked here, or this process took the endpoint over before the holder answered).
   */
  const reconcileAtHolder = async (sel: Parameters<Engine['reconcile']>[0] = {}) => {
    if (!o.remote) return undefined;
    let endpointId = sel.endpointId;
    if (sel.commandId) {
      if (env.pending.has(sel.commandId)) return undefined;
      endpointId = unsettledCommand(await o.ledger.byCommand(sel.commandId))?.endpointId;
    }
    if (!endpointId || actors.has(endpointId)) return undefined;
    const h = await handleOf(endpointId).catch(() => undefined);
    if (!(h instanceof RemoteEndpoint)) return undefined;
    const op = {
      kind: 'reconcile' as const,
      ...(sel.commandId ? { commandId: sel.commandId } : {}),
      ...(sel.deviceId ? { deviceId: sel.deviceId } : {}),
      ...(sel.untilSettled ? { untilSettled: true } : {}),
    };
    return (await o.remote.send(h.info, op, sel.untilSettled ? ADOPT_WAIT_MS : RECONCILE_FORWARD_WAIT_MS)) as
      ReconcileResult[] | undefined;
  };

  /** Endpoints a task touched since their bundle was last collected (issue 21). */
  const uncollected = new Set<string>();

  const engine: Engine = {
    async start() {
      const scan = await recoveryScan(o.ledger, o.recoveryMark);
      const theirs = scan.unsettled.length ? await ownedElsewhere(o.ledger) : new Set<string>();
      const mine = scan.unsettled.filter((p) => !theirs.has(p.commandId));
      // Each one's actor owns it from now on; `attach` restores it (recorded unknown) on its endpoint's gates.
      for (const p of mine) commandOf(env, { ...p, recoveredUnrecorded: true });
      for (const permit of scan.usedPermits) env.usedPermits.add(permit);
      // Rows of sessions that expired a day ago are dead weight, whichever endpoint they belong to.
      await o.sessionStore
        ?.prune(clock.now() - 86_400_000)
        .catch((err: unknown) => o.onBackgroundError?.(toHostError(err)));
      started = true;
      return {
        scanned: scan.scanned,
        unsettled: mine.map((p) => p.commandId),
        ownedElsewhere: scan.unsettled.filter((p) => theirs.has(p.commandId)).map((p) => p.commandId),
        approvalsWithoutIntent: scan.approvalsWithoutIntent,
      };
    },

    async stop(sopts = {}) {
      await rearmed.stop();
      await env.batcher.flush();
      await Promise.allSettled([...env.inflight]);
      // Issue 21: the bundles tasks left uncollected are stored once, before the connections close.
      if (o.artifacts && uncollected.size) await engine.collectPendingEvidence({ attachedOnly: true });
      const keepSessions = sopts.keepSessions === true && o.sessionStore !== undefined;
      await Promise.all([...actors.values()].map((a) => a.stop({ keepSessions })));
      actors.clear();
    },

    async attach(conn, aopts = {}) {
      if (!started) await engine.start();
      const ep: EndpointActor = new EndpointActor(conn, {
        ...(aopts.fence ? { fence: aopts.fence } : {}),
        ...(aopts.checkFence ? { checkFence: aopts.checkFence } : {}),
        onManifestChange: o.onManifestChange ?? 'readmit',
        onReconnected: (a, e) => recoverAfterReconnect(a, e.manifestChanged),
        ...(o.onEndpointEvent ? { onConnectionEvent: (a, e) => o.onEndpointEvent?.(a.endpointId, e) } : {}),
        clock,
        ledger: o.ledger,
        principal,
        sessionTtlMs: o.sessionTtlMs ?? 60_000,
        sessionCallTimeoutMs: 10_000,
        adhocIdleMs: o.adhocIdleMs ?? 30_000,
        laneMaxPending: o.laneMaxPending ?? 64,
        admit,
        ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
        ...(o.sessionStore ? { sessionStore: o.sessionStore } : {}),
        ...(o.sessionMode ? { sessionMode: o.sessionMode } : {}),
      });
      // HOST-056: the manifest's redaction paths apply to this endpoint's entries from the first one.
      const d = o.ledger as Partial<DurableLedger>;
      if (typeof d.setRedaction === 'function') d.setRedaction(ep.endpointId, ep.manifest.redaction.paths);
      try {
        await recordDisclosure(o.ledger, o.artifacts, ep); // HOST-050: what the model is shown
      } catch (err) {
        await ep.stop({ closeConnection: false });
        throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
      }
      if (actors.has(ep.endpointId)) await actors.get(ep.endpointId)?.stop();
      actors.set(ep.endpointId, ep);
      // HOST-036: sessions a previous host left open are reused while live, reopened once expired.
      if (o.sessionStore)
        await o.sessionStore
          .load(ep.endpointId)
          // A stdio child spawned by this process cannot know sessions of the previous host: reopen them all.
          .then((rows) =>
            ep.restoreSessions(rows, { expire: (conn as { transportKind?: string }).transportKind === 'stdio' }),
          )
          .catch((err: unknown) => o.onBackgroundError?.(toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE)));
      // HOST-091: an unsettled command keeps its device's gate shut until reconciled; one found by start-up
      // recovery is recorded `command.unknown` now, by the process that drives its endpoint.
      for (const p of [...env.pending.values()]) {
        if (p.endpointId !== ep.endpointId) continue;
        if (!p.recoveredUnrecorded) {
          commandOf(env, p, ep).bind(ep);
          continue;
        }
        const { effects } = restoreCommand(env, p, ep, 'recovered_on_start');
        if (effects.some((f) => f.type === 'recordUnknown'))
          await o.ledger.append(unknownEntry(p, 'recovered_on_start'));
        delete p.recoveredUnrecorded;
      }
      if (o.reconcileOnAttach !== false) await reconcileEndpoint(env, ep);
      return ep;
    },

    async connect(row, copts = {}) {
      const conn = await connectWithReconnect(row, {
        ...(o.reconnect ? { backoff: o.reconnect } : {}),
        ...(o.probeIntervalMs ? { probeIntervalMs: o.probeIntervalMs } : {}),
        clock,
        ...copts,
        whileAway: 'fail',
      });
      try {
        return await engine.attach(conn);
      } catch (err) {
        await conn.close().catch(() => undefined);
        throw err;
      }
    },

    async adoptFrom(endpointId, former) {
      await orphans.adoptFrom(actorOf(endpointId), former);
    },

    async detach(endpointId) {
      if (o.artifacts && uncollected.has(endpointId))
        await engine.collectEvidence(endpointId).catch((e: unknown) => o.onBackgroundError?.(toHostError(e)));
      await actors.get(endpointId)?.stop();
      actors.delete(endpointId);
    },

    endpoint: (id) => actors.get(id),
    endpoints: () => [...actors.values()],
    handle: handleOf,
    handles: async () => [...actors.values(), ...(await remoteHandles())],
    experimentalComposition: env.composition === true,

    async invoke(req) {
      assertLedgerWritable();
      if (o.forward && !req.intentFence && !actors.has(req.endpointId)) {
        if (o.awaitEndpoint)
          await o.awaitEndpoint(req.endpointId).catch((e: unknown) => o.onBackgroundError?.(toHostError(e)));
        const forwarded = actors.has(req.endpointId) ? undefined : await o.forward(req);
        if (forwarded) return forwarded;
      }
      const ep = await attachedActor(req.endpointId);
      if (ep.lastDrop?.terminal && ep.status$.value === 'disconnected') ep.assertConnected();
      const generation = ep.generation;
      try {
        return await governedCall(env, ep, req);
      } catch (err) {
        // The connection this call was on died and the endpoint is already back: reconcile it now (HOST-091).
        if (err instanceof HostError && err.code === ErrorCode.OUTCOME_UNKNOWN && ep.generation !== generation)
          void reconcileLate(ep, String(err.details.command_id));
        if (
          err instanceof HostError &&
          err.code === ErrorCode.HOST_DEVICE_GATE_CLOSED &&
          (await orphans.adopt(ep, err.details))
        )
          throw new HostError(
            err.code,
            `${err.message}; that process is gone and this host is reconciling the command now`,
            { ...err.details, reconciling: true },
            { remediation: 'Retry once the command is reconciled (its reconcile entry is in the ledger).' },
          );
        throw err;
      }
    },

    async runTask(spec, opts) {
      assertLedgerWritable();
      // Issue 19: a step on an endpoint another process holds is forwarded there by `invoke`, one governed call each.
      const handles = new Map<string, EndpointHandle>();
      for (const id of new Set((spec.steps ?? []).map((s) => s.endpoint)))
        await handleOf(id).then(
          (h) => handles.set(id, h),
          () => undefined, // runTask reports a missing one
        );
      const result = await runTask(
        {
          ledger: o.ledger,
          ids,
          tracer: env.tracer,
          endpoint: (id) => handles.get(id),
          invoke: (req) => engine.invoke(opts?.disclosure ? { ...req, disclosure: opts.disclosure } : req),
        },
        spec,
        opts,
      );
      if (!o.artifacts) return result;
      // Issue 21: the task keeps only its own receipts' links (already in its ledger entries); the bundles are
      // collected once, at export or stop, so a task costs the same however many came before (HOST-051).
      result.evidence = taskEvidence(result.steps);
      for (const ev of result.evidence) if (handles.has(ev.endpointId)) uncollected.add(ev.endpointId);
      if (result.evidence.some((ev) => 'error' in ev)) result.ok = false;
      return result;
    },

    async collectEvidence(endpointId) {
      // Issue 19: another process's endpoint exports its bundle through that process; it is stored here (one store).
      const eps = endpointId ? [await handleOf(endpointId)] : [...actors.values()];
      const out: CollectedEvidence[] = [];
      for (const ep of eps) {
        out.push(await collectEndpointEvidence(o.ledger, o.artifacts, ep));
        uncollected.delete(ep.endpointId);
      }
      return out;
    },

    async collectPendingEvidence(copts = {}) {
      const out: Array<CollectedEvidence | { endpointId: string; error: MhsWireError }> = [];
      for (const id of [...uncollected]) {
        if (!actors.has(id)) {
          // At stop, an endpoint attached by another process is left for the next export (forwarding has closed).
          if (copts.attachedOnly) continue;
          if (!(await handleOf(id).catch(() => undefined))) {
            uncollected.delete(id);
            continue;
          }
        }
        try {
          out.push(...(await engine.collectEvidence(id)));
        } catch (err) {
          const e = toHostError(err);
          out.push({ endpointId: id, error: e.toWire() });
          o.onBackgroundError?.(e);
        }
      }
      return out;
    },

    async reconcile(sel = {}) {
      const atHolder = await reconcileAtHolder(sel);
      if (atHolder) return atHolder;
      if (sel.commandId) {
        let p = env.pending.get(sel.commandId) ?? (await adoptUntracked(sel.commandId));
        if (!p && sel.untilSettled && o.remote) p = await awaitAdoption(sel.commandId);
        if (!p) return [];
        let r = await reconcileCommand(env, await attachedActor(p.endpointId), p);
        while (sel.untilSettled && r.retryAt !== undefined) {
          rearmed.cancel(sel.commandId); // this caller reconciles it at retryAt and reports the outcome
          await pause(env, Math.max(0, r.retryAt - clock.now()) + 1);
          p = env.pending.get(sel.commandId);
          // Settled meanwhile (by the re-armed reconciliation): its entries are in the ledger.
          if (!p) return [];
          r = await reconcileCommand(env, actorOf(p.endpointId), p);
        }
        return [r];
      }
      const eps = sel.endpointId ? [await attachedActor(sel.endpointId)] : [...actors.values()];
      const out: ReconcileResult[] = [];
      for (const ep of eps)
        for (const r of await reconcileEndpoint(env, ep, sel.deviceId)) {
          if ('error' in r) throw r.error;
          out.push(r);
        }
      return out;
    },

    pending: () => [...env.pending.values()],

    async read(endpointId, deviceId, resource) {
      const ep = await handleOf(endpointId);
      await ep.admit('read', deviceId, resource ? { resource } : {}); // HOST-090, before anything is sent
      const r = await ep
        .callTool('mhs__read', { device_id: deviceId, ...(resource ? { resource } : {}) }, { timeoutMs: 10_000 })
        .catch((e: unknown) => {
          throw toHostError(e);
        });
      if (r.isError) throw faultError(r);
      return r.structuredContent as unknown as ReadResult;
    },
  };
  return engine;
}

/** Start-up reads only unsettled intents (issue 21 item 4), so a permit sent before is looked up when it is used. */
function permitLookup(ledger: Ledger): { permitSent?: (permitId: string) => Promise<boolean> } {
  const d = ledger as Partial<DurableLedger>;
  return typeof d.permitSent === 'function' ? { permitSent: (id) => d.permitSent!.call(ledger, id) } : {};
}
