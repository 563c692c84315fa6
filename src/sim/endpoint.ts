/**
 * The simulated MHS endpoint, independent of MCP: manifest (§3), sessions (§5), receipts and
 * idempotency (§6, via invoke.ts), read/safety/permits (§7), evidence (§9), policy (HOST-090).
 * Every method either returns the MHS object or throws a HostError (a fault, wire contract §4).
 */
import { ErrorCode, H, HostError, createIdFactory, isoAt, type IdFactory } from '../core/index.js';
import { COMPOSITION_CAPABILITY, COMPOSITION_MAX_STEPS, COMPOSITION_TOOL } from '../mhs/composition.js';
import type { DeviceProfile, Manifest, Receipt, SafetyStatus, Session } from '../mhs/wire-types.js';
import { SimDevice, ATTACH_COUNTERS_RESOURCE, COUNTERS_RESOURCE, STAND_IN_NOTICE } from './device.js';
import { EvidenceLog } from './evidence.js';
import { PermitStore } from './permits.js';
import { ReplayCursor } from './replay.js';
import { SessionStore } from './sessions.js';
import { LIMITS, type SimOptions } from './sim-options.js';

/** A command's retained receipt (§6 idempotency). */
export interface Retained {
  receipt: Receipt;
  inputDigest: string;
  deviceId: string;
  retainedAt: number;
  /** Abandons an execution in progress (e-stop); the receipt becomes `failed`. */
  cancel?: () => void;
  /** Set while a short execution is in progress: retries wait for its final receipt. */
  pending?: Promise<Receipt>;
}

/** The endpoint state shared by every MCP connection of one projection process. */
export class SimEndpoint {
  readonly devices = new Map<string, SimDevice>();
  readonly evidence: EvidenceLog;
  readonly sessions: SessionStore;
  readonly permits: PermitStore;
  readonly ids: IdFactory;
  readonly manifest: Manifest;
  readonly receipts = new Map<string, Retained>();
  readonly operations = new Map<string, string>();
  readonly replay: ReplayCursor | null;
  readonly timeScale: number;
  private capabilityCalls = 0;
  /** Calls of `mhs__composition_run` this endpoint received, served or not (read in `_counters`). */
  compositionCalls = 0;
  /**
   * Manifest reads (`mhs__inspect` without a device: what a host does as it attaches) and explicit session opens,
   * heartbeats and closes, read in `_attach_counters` by the tests that count how many host processes attach this endpoint.
   */
  private readonly attachCalls = { manifest_reads: 0, session_opens: 0, session_heartbeats: 0, session_closes: 0 };

  constructor(readonly opts: SimOptions) {
    // Ids are globally unique (CSPRNG), not seeded: two endpoints with the same --seed must never
    // hand out the same session or receipt id. The seed drives only the device physics.
    this.ids = createIdFactory(opts.clock);
    this.evidence = new EvidenceLog(opts.endpointId, opts.clock, opts.faults.corruptEvidence);
    this.sessions = new SessionStore(opts.endpointId, opts.clock, this.ids, this.evidence, LIMITS.max_session_ttl_ms);
    this.permits = new PermitStore(opts.clock, this.ids, this.evidence);
    this.timeScale = opts.timeScale && opts.timeScale > 0 ? opts.timeScale : 1;
    const standIn = new Set(opts.standInHardware ?? []);
    for (const def of opts.families) {
      const d = new SimDevice(def, opts.seed, standIn.delete(def.device.device_id));
      if (this.devices.has(d.id)) {
        throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `device ${d.id} is declared twice`, { device_id: d.id });
      }
      this.devices.set(d.id, d);
    }
    if (standIn.size) {
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `--stand-in-hardware names no served device`, {
        devices: [...standIn],
        known: [...this.devices.keys()],
      });
    }
    this.manifest = this.buildManifest();
    for (const i of opts.interlocks ?? []) {
      const d = this.devices.get(i.deviceId);
      if (!d || !d.setInterlock(i.id, i.state)) {
        throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `unknown interlock ${i.deviceId}:${i.id}`, { ...i });
      }
    }
    this.replay = opts.replay ? new ReplayCursor(opts.replay) : null;
  }

  private buildManifest(): Manifest {
    const devices: DeviceProfile[] = [...this.devices.values()].map((d) => structuredClone(d.profile));
    const names = this.opts.families.map((f) => f.endpoint_display_name);
    const body: Omit<Manifest, 'manifest_digest'> = {
      mhs_version: '0.9',
      endpoint_id: this.opts.endpointId,
      manifest_version: 1,
      display_name:
        (names.length === 1 ? (names[0] as string) : `MHS simulators: ${names.join(', ')}`) +
        (this.opts.standInHardware?.length ? ` [${STAND_IN_NOTICE}: ${this.opts.standInHardware.join(', ')}]` : ''),
      safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
      conformance: { level: 'CL3', trust: 'self' },
      limits: { ...LIMITS },
      replay: { supported: true },
      redaction: { paths: ['/input/operator_note'] },
      devices,
      ...this.extensions(),
    };
    return { ...body, manifest_digest: H(body) };
  }

  /** Experimental extensions served: composition only with `--enable-composition` (HOST-084). */
  private extensions(): Pick<Manifest, 'extensions'> {
    if (!this.opts.composition) return {};
    return {
      extensions: {
        [COMPOSITION_CAPABILITY]: { status: 'experimental', tool: COMPOSITION_TOOL, max_steps: COMPOSITION_MAX_STEPS },
      },
    };
  }

  /** §2 descriptor served at `/.well-known/mhs.json`. */
  descriptor(): Record<string, unknown> {
    return {
      mhs_version: '0.9',
      endpoint_id: this.opts.endpointId,
      display_name: this.manifest.display_name,
      transports: this.opts.transports,
      auth: { scheme: 'none' },
      manifest_digest: this.manifest.manifest_digest,
      conformance: { level: 'CL3', trust: 'self', report_ref: null, report_digest: null },
      ...this.extensions(),
    };
  }

  /** Unknown device: `MHS.SCHEMA.INVALID_INPUT` (§4). */
  device(id: string): SimDevice {
    const d = this.devices.get(id);
    if (!d) {
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `unknown device ${id}`, {
        device_id: id,
        known: [...this.devices.keys()],
      });
    }
    return d;
  }

  /** HOST-090: every call is refused while the policy is disabled. */
  assertEnabled(): void {
    if (this.opts.policy && !this.opts.policy.enabled) {
      throw new HostError(
        ErrorCode.AUTH_DISABLED,
        'the projection policy disables this endpoint',
        {},
        {
          remediation: 'set "enabled": true in the --config policy document',
        },
      );
    }
  }

  /** HOST-090: capability tools, reads and operations on hardware devices need `allow_hardware`. */
  assertHardwareAllowed(d: SimDevice): void {
    if (this.opts.policy && !this.opts.policy.allow_hardware && d.profile.mode === 'hardware') {
      throw new HostError(ErrorCode.AUTH_HARDWARE_DISABLED, `device ${d.id} is hardware and the policy forbids it`, {
        device_id: d.id,
      });
    }
  }

  /** Late executions (`--execute-after-ms`) still to run; a failure is dropped (nobody is waiting for the answer). */
  readonly late = new Set<Promise<unknown>>();

  /** Owns a late execution until it settles. */
  track(p: Promise<unknown>): void {
    const owned = p.then(
      () => undefined,
      () => undefined,
    );
    this.late.add(owned);
    void owned.then(() => this.late.delete(owned));
  }

  /** Counts capability calls for the Nth-call fault flags; returns the 1-based index. */
  nextCapabilityCall(): number {
    return ++this.capabilityCalls;
  }

  devicesList(): Record<string, unknown> {
    return {
      endpoint_id: this.opts.endpointId,
      devices: this.manifest.devices.map((d) => ({
        device_id: d.device_id,
        display_name: d.display_name,
        mode: d.mode,
        risk_class: d.risk_class,
        summary: d.summary,
        capabilities: d.capabilities.map((c) => c.capability_id),
      })),
    };
  }

  inspect(deviceId?: string): Record<string, unknown> {
    if (deviceId === undefined) this.attachCalls.manifest_reads++;
    if (deviceId === undefined) return structuredClone(this.manifest) as unknown as Record<string, unknown>;
    this.device(deviceId);
    return structuredClone(this.manifest.devices.find((d) => d.device_id === deviceId)) as unknown as Record<
      string,
      unknown
    >;
  }

  /**
   * §7 read; `_counters` gives the per-command execution counts and the capability calls this endpoint received
   * (stalled and dropped ones included, for fault tests).
   */
  read(deviceId: string, resource?: string): Record<string, unknown> {
    const d = this.device(deviceId);
    this.assertHardwareAllowed(d);
    let state: Record<string, unknown>;
    if (resource === COUNTERS_RESOURCE)
      state = {
        ...d.counters(),
        capability_calls: this.capabilityCalls,
        composition_calls: this.compositionCalls,
      };
    else if (resource === ATTACH_COUNTERS_RESOURCE) state = { ...this.attachCalls };
    else if (resource === undefined || d.profile.resources.includes(resource)) state = d.read(resource);
    else {
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `unknown resource ${resource}`, {
        device_id: deviceId,
        resource,
        known: [...d.profile.resources, COUNTERS_RESOURCE, ATTACH_COUNTERS_RESOURCE],
      });
    }
    return { device_id: deviceId, revision: d.revision, state, state_hash: d.stateHash() };
  }

  safety(deviceId: string): SafetyStatus {
    const d = this.device(deviceId);
    return {
      device_id: deviceId,
      estop: { kind: d.profile.estop.kind, engaged: d.estopEngaged, physical_ref: d.profile.estop.physical_ref },
      interlocks: d.profile.interlocks.map((i) => ({ ...i })),
      notice: 'MHS.SAFETY.NOT_CERTIFIED',
    };
  }

  /** `mhs__session`; hardware devices need `allow_hardware` before a session opens (HOST-090). */
  session(args: Record<string, unknown>): Session {
    const action = args['action'];
    if (action === 'open') this.attachCalls.session_opens++;
    else if (action === 'heartbeat') this.attachCalls.session_heartbeats++;
    else if (action === 'close') this.attachCalls.session_closes++;
    if (action === 'open') {
      const d = this.device(args['device_id'] as string);
      this.assertHardwareAllowed(d);
      const caps = (args['capabilities'] as string[] | undefined) ?? d.profile.capabilities.map((c) => c.capability_id);
      const unknown = caps.filter((c) => !d.binding(c));
      if (unknown.length) {
        throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `unknown capabilities for ${d.id}`, { unknown });
      }
      return this.sessions.open({
        deviceId: d.id,
        capabilities: caps,
        ttlMs: (args['ttl_ms'] as number | undefined) ?? 60_000,
        principal: (args['principal'] as Session['principal'] | undefined) ?? { kind: 'agent' },
        // The mode says what the endpoint does: only a projection started with --replay replays (§10, HOST-085);
        // a live endpoint asked for a replay session still executes, so it reports `live`.
        mode: this.replay ? 'replay' : 'live',
      });
    }
    const id = args['session_id'] as string;
    return action === 'heartbeat' ? this.sessions.heartbeat(id) : this.sessions.close(id);
  }

  /** Appends a receipt to the evidence and returns it with its `evidence` link (§6, §9). */
  record(r: Omit<Receipt, 'evidence' | 'replayed'>, kind: 'receipt' | 'estop' = 'receipt'): Receipt {
    const entry = this.evidence.append(kind, { ...r });
    return { ...r, replayed: false, evidence: EvidenceLog.link(entry) };
  }

  /**
   * Drops retained receipts older than `receipt_retention_s`, with their operation ids. The map holds receipts in
   * the order they were first retained, so this stops at the first one still within retention: a call costs the
   * expired receipts it drops, never a walk of every one retained (issue 21). One retained out of order is dropped
   * when it reaches the front (retained at least as long as promised).
   */
  pruneRetention(): void {
    const cutoff = this.opts.clock.now() - LIMITS.receipt_retention_s * 1000;
    for (const [id, r] of this.receipts) {
      if (r.retainedAt >= cutoff) break;
      this.receipts.delete(id);
      const op = r.receipt.operation_id;
      if (typeof op === 'string' && this.operations.get(op) === id) this.operations.delete(op);
    }
  }

  /** `mhs__operations {operation_id | command_id}`: the current receipt of that command. */
  async operation(args: { operation_id?: string; command_id?: string }): Promise<Receipt> {
    const commandId = args.command_id ?? (args.operation_id ? this.operations.get(args.operation_id) : undefined);
    const held = commandId ? this.receipts.get(commandId) : undefined;
    if (!held) {
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'no such operation or command at this endpoint', {
        ...args,
        reason: 'not_found',
      });
    }
    this.assertHardwareAllowed(this.device(held.deviceId));
    return { ...(held.pending ? await held.pending : held.receipt) };
  }

  /** §7 e-stop. Hardware-only e-stops answer `MHS.SAFETY.HARDWARE_ESTOP_ONLY` with `physical_ref`. */
  estop(deviceId: string, sessionId: string | undefined, commandId: string | undefined): Receipt {
    const d = this.device(deviceId);
    const allowed = this.opts.policy?.estop_devices;
    if (allowed && !allowed.includes(deviceId)) {
      throw new HostError(ErrorCode.AUTH_DISABLED, `e-stop of ${deviceId} is not allowed by the policy`, {
        device_id: deviceId,
        estop_devices: allowed,
      });
    }
    if (d.profile.estop.kind === 'hardware') {
      throw new HostError(
        ErrorCode.SAFETY_HARDWARE_ESTOP_ONLY,
        `device ${deviceId} has only a hardware e-stop`,
        { device_id: deviceId, physical_ref: d.profile.estop.physical_ref },
        { remediation: `press the physical stop: ${d.profile.estop.physical_ref ?? ''}` },
      );
    }
    const now = isoAt(this.opts.clock.now());
    const before = d.revision;
    d.estopEngaged = true;
    d.revision += 1;
    for (const held of this.receipts.values()) if (held.deviceId === deviceId) held.cancel?.();
    return this.record(
      {
        mhs_version: '0.9',
        receipt_id: this.ids.next('receipt'),
        command_id: commandId ?? this.ids.next('command'),
        session_id: sessionId ?? '',
        endpoint_id: this.opts.endpointId,
        device_id: deviceId,
        capability_id: 'mhs.safety.estop',
        mode: this.replay ? 'replay' : d.profile.mode,
        status: 'completed',
        input_digest: H({ device_id: deviceId }),
        operation_id: null,
        revisions: { before, after: d.revision },
        state_hash: d.stateHash(),
        effects: [{ resource: '*', kind: 'estop_engaged' }],
        output: { engaged: true },
        error: null,
        started_at: now,
        finished_at: now,
      },
      'estop',
    );
  }

  /** Operator `mhs__reset`: clears the e-stop and optionally sets interlock states (sim operator action). */
  reset(deviceId: string, interlocks?: Record<string, 'closed' | 'open' | 'unknown'>): SafetyStatus {
    const d = this.device(deviceId);
    for (const [id, state] of Object.entries(interlocks ?? {})) {
      if (!d.setInterlock(id, state)) {
        throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `unknown interlock ${id}`, { device_id: deviceId, id });
      }
    }
    d.estopEngaged = false;
    this.evidence.append('reset', { device_id: deviceId, interlocks: d.profile.interlocks.map((i) => ({ ...i })) });
    return this.safety(deviceId);
  }
}
