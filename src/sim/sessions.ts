/**
 * Endpoint sessions (wire contract §5): TTL, heartbeat, expiry, scope, and the implicit session a
 * plain MCP client gets when it omits `_mhs` (§4).
 */
import { ErrorCode, HostError, isoAt, type Clock, type IdFactory, type TimerHandle } from '../core/index.js';
import type { Principal, Session, SessionMode } from '../mhs/wire-types.js';
import type { EvidenceLog } from './evidence.js';

/** Session plus its absolute expiry (ms). */
interface Held {
  session: Session;
  expiresAt: number;
  ttlMs: number;
  timer?: TimerHandle;
  implicit: boolean;
}

export interface OpenRequest {
  deviceId: string;
  capabilities: string[];
  ttlMs: number;
  principal: Principal;
  mode: SessionMode;
}

/** Sessions of one endpoint. Expiry is checked on every use and also recorded by a clock timer. */
export class SessionStore {
  private readonly held = new Map<string, Held>();
  private readonly implicitByKey = new Map<string, string>();

  constructor(
    private readonly endpointId: string,
    private readonly clock: Clock,
    private readonly ids: IdFactory,
    private readonly evidence: EvidenceLog,
    private readonly maxTtlMs: number,
  ) {}

  /** `mhs__session {action:"open"}`; `ttl_ms` is capped at `limits.max_session_ttl_ms`. */
  open(req: OpenRequest, implicit = false): Session {
    const now = this.clock.now();
    const ttlMs = Math.min(req.ttlMs, this.maxTtlMs);
    const session: Session = {
      session_id: this.ids.next('session'),
      endpoint_id: this.endpointId,
      device_id: req.deviceId,
      principal: req.principal,
      capabilities: [...req.capabilities],
      mode: req.mode,
      opened_at: isoAt(now),
      expires_at: isoAt(now + ttlMs),
      heartbeat_interval_ms: Math.max(1, Math.min(10_000, Math.floor(ttlMs / 3))),
      state: 'open',
    };
    const h: Held = { session, expiresAt: now + ttlMs, ttlMs, implicit };
    this.held.set(session.session_id, h);
    this.arm(h);
    this.evidence.append('session.open', { ...session, implicit });
    return { ...session };
  }

  private arm(h: Held): void {
    if (h.timer) this.clock.clearTimeout(h.timer);
    if (h.implicit) return;
    h.timer = this.clock.setTimeout(() => this.expireIfDue(h), Math.max(0, h.expiresAt - this.clock.now()));
  }

  private expireIfDue(h: Held): boolean {
    if (h.session.state === 'expired') return true;
    if (h.session.state !== 'open' || h.implicit || this.clock.now() < h.expiresAt) return false;
    h.session.state = 'expired';
    this.evidence.append('session.expired', { session_id: h.session.session_id });
    return true;
  }

  /**
   * The open session `id`, checked for device and capability scope.
   * Throws `MHS.SESSION.UNKNOWN` (closed or never opened), `.EXPIRED`, `.SCOPE`.
   */
  use(id: string, deviceId?: string, capabilityId?: string): Session {
    const h = this.held.get(id);
    if (!h || h.session.state === 'closed') {
      throw new HostError(
        ErrorCode.SESSION_UNKNOWN,
        `no open session ${id}`,
        { session_id: id },
        {
          remediation: 'open a session with mhs__session {action:"open"}',
        },
      );
    }
    if (this.expireIfDue(h)) {
      throw new HostError(
        ErrorCode.SESSION_EXPIRED,
        `session ${id} expired at ${h.session.expires_at}`,
        {
          session_id: id,
          expires_at: h.session.expires_at,
        },
        { remediation: 'open a new session; heartbeat before expires_at to keep one alive' },
      );
    }
    if (deviceId !== undefined && h.session.device_id !== deviceId) {
      throw new HostError(ErrorCode.SESSION_SCOPE, `session ${id} is for device ${h.session.device_id}`, {
        session_id: id,
        device_id: deviceId,
      });
    }
    if (capabilityId !== undefined && !h.session.capabilities.includes(capabilityId)) {
      throw new HostError(ErrorCode.SESSION_SCOPE, `capability ${capabilityId} is outside session ${id}`, {
        session_id: id,
        capability_id: capabilityId,
        capabilities: h.session.capabilities,
      });
    }
    return { ...h.session };
  }

  /** Extends `expires_at` by the session's TTL. */
  heartbeat(id: string): Session {
    this.use(id);
    const h = this.held.get(id) as Held;
    h.expiresAt = this.clock.now() + h.ttlMs;
    h.session.expires_at = isoAt(h.expiresAt);
    this.arm(h);
    this.evidence.append('session.heartbeat', { session_id: id, expires_at: h.session.expires_at });
    return { ...h.session };
  }

  close(id: string): Session {
    this.use(id);
    const h = this.held.get(id) as Held;
    h.session.state = 'closed';
    if (h.timer) this.clock.clearTimeout(h.timer);
    this.evidence.append('session.close', { session_id: id });
    return { ...h.session };
  }

  /** The implicit session of a connection for a device (§4), opened on first use. */
  implicit(connectionKey: string, deviceId: string, capabilities: string[], mode: SessionMode): Session {
    const key = `${connectionKey}\u0000${deviceId}`;
    const existing = this.implicitByKey.get(key);
    const h = existing ? this.held.get(existing) : undefined;
    if (h && h.session.state === 'open') return { ...h.session };
    const s = this.open({ deviceId, capabilities, ttlMs: this.maxTtlMs, principal: { kind: 'agent' }, mode }, true);
    this.implicitByKey.set(key, s.session_id);
    return s;
  }
}
