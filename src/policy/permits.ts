import { ErrorCode, HostError, isoAt, toHostError } from '../core/index.js';
import type { Clock, MhsWireError } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { Permit } from '../mhs/wire-types.js';
import type { OperatorEvents } from './operator-events.js';
import type { OperatorLink } from './ports.js';
import { ensureSchema } from './schema.js';

/** Host-side permit state. `claimed` = handed to exactly one send; never reused (HOST-070). */
export type HostPermitState = 'issued' | 'claimed' | 'revoked' | 'expired';

/** A permit as the host tracks it. */
export interface HostPermit {
  permit_id: string;
  approval_id: string;
  endpoint_id: string;
  device_id: string;
  session_id: string;
  capability_id: string;
  input_digest: string;
  expires_at: string;
  single_use: true;
  state: HostPermitState;
  issued_at: string;
  revoked_at: string | null;
  revoked_by: string | null;
  claimed_at: string | null;
}

/** What a permit is requested for (after an approval, through the operator route). */
export interface PermitRequest {
  approval_id: string;
  endpoint_id: string;
  device_id: string;
  session_id: string;
  capability_id: string;
  input_digest: string;
  resource?: string;
  expected_revision?: number;
  ttl_ms: number;
}

/** Permits through the operator route (HOST-047, 070). */
export interface PermitService {
  /** Issues a single-use, TTL-bound, digest-bound permit via `mhs__permit`; records `permit.issue`. */
  issue(req: PermitRequest, extra?: Record<string, unknown>): Promise<HostPermit>;
  /** Outstanding permits (`issued` and not expired) unless `all`. */
  list(opts?: { all?: boolean }): Promise<HostPermit[]>;
  get(permitId: string): Promise<HostPermit | undefined>;
  /**
   * Host-side revocation is immediate: the permit is marked revoked before the endpoint is told, so
   * the host never sends it (HOST-047). Raises `not_found`, or `conflict` when already claimed/revoked.
   */
  revoke(
    permitId: string,
    operator: { id: string; name: string; kind?: 'human' | 'system' },
    reason?: string,
  ): Promise<HostPermit>;
  /**
   * Atomically marks an issued, unexpired permit as claimed by one send. Returns false when it was
   * revoked, expired or already claimed: the caller must not send it (HOST-047, 070).
   */
  claim(permitId: string): Promise<boolean>;
  /**
   * Why no permit can ever be issued for `endpointId` (`MHS.HOST.ADAPTER_MISSING`: a stdio projection has no
   * operator route), or null when a route exists or might (any other failure is reported when issuing).
   */
  routeProblem(endpointId: string): Promise<HostError | null>;
}

const DDL = `CREATE TABLE IF NOT EXISTS mhs_permits (
  permit_id TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  expires_ms BIGINT NOT NULL,
  issued_at TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mhs_permits_state ON mhs_permits (state)`;

interface Row {
  state: HostPermitState;
  expires_ms: number | string;
  body: string;
}

export interface PermitServiceDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  link: OperatorLink;
  events?: OperatorEvents;
}

function structuredError(sc: Record<string, unknown>): HostError {
  const e = sc.error as MhsWireError | undefined;
  return e && typeof e.mhs_code === 'string'
    ? HostError.fromWire(e)
    : new HostError(ErrorCode.HOST_INTERNAL, 'endpoint returned an error without an MHS error object');
}

/** Creates the permit service over the shared `Db` (table `mhs_permits`) and the operator route. */
export function createPermitService(deps: PermitServiceDeps): PermitService {
  const { db, ledger, clock, link, events } = deps;
  const ready = ensureSchema(db, 'policy.permits.v1', DDL);
  const view = (r: Row): HostPermit => {
    const p = JSON.parse(r.body) as HostPermit;
    const expired = r.state === 'issued' && Number(r.expires_ms) <= clock.now();
    return { ...p, state: expired ? 'expired' : r.state };
  };
  const load = async (id: string, t: Db = db) =>
    t.get<Row>('SELECT state, expires_ms, body FROM mhs_permits WHERE permit_id = ?', [id]);

  return {
    async issue(req, extra = {}) {
      await ready;
      const conn = await link.operatorConnection(req.endpoint_id);
      const args: Record<string, unknown> = {
        action: 'issue',
        session_id: req.session_id,
        capability_id: req.capability_id,
        input_digest: req.input_digest,
        ttl_ms: req.ttl_ms,
        approval_ref: req.approval_id,
      };
      if (req.resource !== undefined) args.resource = req.resource;
      if (req.expected_revision !== undefined) args.expected_revision = req.expected_revision;
      const res = await conn.callTool('mhs__permit', args);
      // What the permit is for, as both the issue and the refusal record it.
      const scope = {
        approval_id: req.approval_id,
        endpoint_id: req.endpoint_id,
        device_id: req.device_id,
        session_id: req.session_id,
        capability_id: req.capability_id,
        input_digest: req.input_digest,
      };
      const refuse = async (e: HostError): Promise<never> => {
        await ledger.append({ kind: 'permit.refused', ...extra, ...scope, code: e.code, message: e.message });
        throw e;
      };
      if (res.isError) return refuse(structuredError(res.structuredContent));
      const p = res.structuredContent as unknown as Permit;
      if (typeof p.permit_id !== 'string' || p.input_digest !== req.input_digest) {
        return refuse(
          new HostError(ErrorCode.AUTH_PERMIT_DIGEST_MISMATCH, 'endpoint issued a permit for another digest', {
            expected: req.input_digest,
            got: p.input_digest ?? null,
          }),
        );
      }
      const expiresMs = Date.parse(p.expires_at);
      const hp: HostPermit = {
        permit_id: p.permit_id,
        ...scope,
        expires_at: p.expires_at,
        single_use: true,
        state: 'issued',
        issued_at: isoAt(clock.now()),
        revoked_at: null,
        revoked_by: null,
        claimed_at: null,
      };
      await db.run('INSERT INTO mhs_permits (permit_id, state, expires_ms, issued_at, body) VALUES (?, ?, ?, ?, ?)', [
        hp.permit_id,
        'issued',
        Number.isFinite(expiresMs) ? expiresMs : clock.now() + req.ttl_ms,
        hp.issued_at,
        JSON.stringify(hp),
      ]);
      await ledger.append({
        kind: 'permit.issue',
        ...extra,
        permit_id: hp.permit_id,
        ...scope,
        expires_at: hp.expires_at,
        ttl_ms: req.ttl_ms,
        single_use: true,
      });
      events?.emit('permit.issued', { permit: hp });
      return hp;
    },

    async list(opts = {}) {
      await ready;
      const rows = opts.all
        ? await db.all<Row>('SELECT state, expires_ms, body FROM mhs_permits ORDER BY issued_at DESC LIMIT 500')
        : await db.all<Row>(
            "SELECT state, expires_ms, body FROM mhs_permits WHERE state = 'issued' AND expires_ms > ? ORDER BY issued_at DESC",
            [clock.now()],
          );
      return rows.map(view);
    },

    async get(id) {
      await ready;
      const r = await load(id);
      return r ? view(r) : undefined;
    },

    async revoke(permitId, operator, reason) {
      await ready;
      const at = isoAt(clock.now());
      const revoked = await db.tx(async (t) => {
        const r = await load(permitId, t);
        if (!r) throw new HostError(ErrorCode.NOT_FOUND, `no permit ${permitId}`, { permit_id: permitId });
        if (r.state !== 'issued') {
          throw new HostError(ErrorCode.CONFLICT, `permit is ${r.state}`, { permit_id: permitId, state: r.state });
        }
        const p: HostPermit = { ...view(r), state: 'revoked', revoked_at: at, revoked_by: operator.id };
        await t.run("UPDATE mhs_permits SET state = 'revoked', body = ? WHERE permit_id = ? AND state = 'issued'", [
          JSON.stringify(p),
          permitId,
        ]);
        return p;
      });
      // Tell the endpoint too; the host already treats the permit as invalid whatever it answers.
      let endpointAck: { ok: boolean; error?: MhsWireError } = { ok: false };
      try {
        const conn = await link.operatorConnection(revoked.endpoint_id);
        const res = await conn.callTool('mhs__permit', { action: 'revoke', permit_id: permitId });
        endpointAck = res.isError
          ? { ok: false, error: structuredError(res.structuredContent).toWire() }
          : { ok: true };
      } catch (err) {
        endpointAck = { ok: false, error: toHostError(err).toWire() };
      }
      await ledger.append({
        kind: 'permit.revoke',
        permit_id: permitId,
        approval_id: revoked.approval_id,
        endpoint_id: revoked.endpoint_id,
        device_id: revoked.device_id,
        operator: { kind: operator.kind ?? 'human', id: operator.id, name: operator.name },
        reason: reason ?? null,
        endpoint_ack: endpointAck,
      });
      events?.emit('permit.revoked', { permit: revoked, endpoint_ack: endpointAck.ok });
      return revoked;
    },

    async routeProblem(endpointId) {
      try {
        await link.operatorConnection(endpointId);
        return null;
      } catch (err) {
        const e = toHostError(err);
        return e.code === ErrorCode.HOST_ADAPTER_MISSING ? e : null;
      }
    },

    async claim(permitId) {
      await ready;
      const at = isoAt(clock.now());
      return db.tx(async (t) => {
        const r = await load(permitId, t);
        if (!r || r.state !== 'issued' || Number(r.expires_ms) <= clock.now()) return false;
        const p: HostPermit = { ...view(r), state: 'claimed', claimed_at: at };
        const { changes } = await t.run(
          "UPDATE mhs_permits SET state = 'claimed', body = ? WHERE permit_id = ? AND state = 'issued'",
          [JSON.stringify(p), permitId],
        );
        if (changes === 1) events?.emit('permit.claimed', { permit: p });
        return changes === 1;
      });
    },
  };
}
