import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { ErrorCode, HostError, isoAt, jcs, sha256Hex } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import { migrate } from '../../ledger/index.js';
import type { Db } from '../../ledger/index.js';
import type { Principal } from '../auth.js';

// v2 idempotency.md Layer 1: the key grammar (at least 128 bits of entropy is the caller's to supply).
const KEY = /^[A-Za-z0-9._~-]{22,128}$/;
// A claim older than this whose request never answered (its process died) is taken over by the next same-key request.
const STALE_CLAIM_MS = 60_000;
// Never replayed from the record (idempotency.md "Not cached"): the request did not reach a final outcome.
const NOT_CACHED_CODES = new Set(['idempotency_key_invalid', 'validation_error']);

const DDL = `
CREATE TABLE IF NOT EXISTS openwop_request_idempotency (
  scope TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  digest TEXT NOT NULL,
  state TEXT NOT NULL,
  status INTEGER,
  body TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (scope, idem_key)
);
`;

interface Row {
  digest: string;
  state: 'pending' | 'done';
  status: number | null;
  body: string | null;
  created_at: string;
}

/**
 * The request's `Idempotency-Key` (v2 idempotency.md Layer 1), undefined when absent; a value outside the grammar (or
 * the header sent twice) is `400 idempotency_key_invalid`.
 */
export function v2IdempotencyKey(req: FastifyRequest): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !KEY.test(raw))
    throw new HostError(ErrorCode.IDEMPOTENCY_KEY_INVALID, 'Idempotency-Key must match ^[A-Za-z0-9._~-]{22,128}$', {
      field: 'Idempotency-Key',
    });
  return raw;
}

type Claimed = FastifyRequest & { idempotencyClaim?: { scope: string; key: string } };

/** A final outcome the record keeps: `2xx`, or a `4xx` other than 401, 403, 429 and the not-cached 400s. */
function cacheable(status: number, payload: unknown): boolean {
  if (status >= 200 && status < 300) return true;
  if (status < 400 || status >= 500 || status === 401 || status === 403 || status === 429) return false;
  try {
    const code = (JSON.parse(String(payload)) as { error?: unknown }).error;
    return !(typeof code === 'string' && NOT_CACHED_CODES.has(code));
  } catch {
    return false;
  }
}

/**
 * `Idempotency-Key` on a v2 mutating operation (v2 idempotency.md Layer 1), kept in `openwop_request_idempotency` on
 * the shared store (migration `openwop.request-idempotency.v1`), so a duplicate is answered the same way by any
 * process of a PostgreSQL scale-out. A record is keyed by the caller's principal (inside the one tenant), the operation
 * and the key, and holds the request digest and the final response (status and body); records are never deleted, so
 * the 24-hour retention holds.
 */
export class RequestIdempotency {
  private readonly ready: Promise<unknown>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.ready = migrate(db, 'openwop.request-idempotency.v1', () => DDL);
    this.ready.catch(() => undefined); // a failed migration is reported to the first request that awaits it
  }

  /**
   * Route hooks for operation `operationId`: before the handler, a request with a key claims the record (insert if
   * absent) or is answered from it — the cached response with `OpenWOP-Idempotent-Replay: true`; `409
   * idempotency_key_mismatch` for another digest; `409 idempotency_in_flight` with `Retry-After` while the first is
   * still processing. After the response, a final outcome is stored and any other releases the claim, so a retry runs
   * again. `digestOf` names what makes two requests the same (path parameters and body). A route that serves several
   * operations names the request's with a function; undefined leaves the request to the handler's own idempotency.
   */
  hooks(
    operationId: string | ((req: FastifyRequest) => string | undefined),
    digestOf: (req: FastifyRequest) => unknown,
  ): Pick<RouteShorthandOptions, 'preHandler' | 'onSend'> {
    return {
      preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
        const raw = v2IdempotencyKey(req);
        if (raw === undefined) return;
        const principal = (req as FastifyRequest & { principal?: Principal }).principal;
        if (!principal) return; // refused by the handler as unauthenticated, never recorded
        const op = typeof operationId === 'string' ? operationId : operationId(req);
        if (op === undefined) return;
        const scope = `${op}:${principal.id}`; // operation ids hold no `:`
        const digest = sha256Hex(jcs(digestOf(req)));
        await this.ready;
        const now = this.clock.now();
        const claimed = await this.db.run(
          `INSERT INTO openwop_request_idempotency (scope, idem_key, digest, state, created_at)
           VALUES (?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING`,
          [scope, raw, digest, isoAt(now)],
        );
        if (claimed.changes === 1) {
          (req as Claimed).idempotencyClaim = { scope, key: raw };
          return;
        }
        const row = await this.db.get<Row>(
          'SELECT digest, state, status, body, created_at FROM openwop_request_idempotency WHERE scope = ? AND idem_key = ?',
          [scope, raw],
        );
        if (!row) throw new HostError(ErrorCode.IDEMPOTENCY_IN_FLIGHT, 'the key is being released; retry');
        if (row.digest !== digest)
          throw new HostError(ErrorCode.IDEMPOTENCY_KEY_MISMATCH, 'this Idempotency-Key was used with another request');
        if (row.state === 'done')
          return reply
            .status(row.status ?? 200)
            .header('openwop-idempotent-replay', 'true')
            .type('application/json')
            .send(row.body ?? '');
        const stale = isoAt(now - STALE_CLAIM_MS);
        const taken = await this.db.run(
          `UPDATE openwop_request_idempotency SET created_at = ? WHERE scope = ? AND idem_key = ? AND state = 'pending' AND created_at < ?`,
          [isoAt(now), scope, raw, stale],
        );
        if (taken.changes === 1) {
          (req as Claimed).idempotencyClaim = { scope, key: raw };
          return;
        }
        void reply.header('retry-after', '1');
        throw new HostError(ErrorCode.IDEMPOTENCY_IN_FLIGHT, 'a request with this Idempotency-Key is still processing');
      },
      onSend: async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        const claim = (req as Claimed).idempotencyClaim;
        if (!claim) return payload;
        (req as Claimed).idempotencyClaim = undefined;
        if (cacheable(reply.statusCode, payload))
          await this.db.run(
            `UPDATE openwop_request_idempotency SET state = 'done', status = ?, body = ? WHERE scope = ? AND idem_key = ?`,
            [reply.statusCode, String(payload), claim.scope, claim.key],
          );
        else
          await this.db.run('DELETE FROM openwop_request_idempotency WHERE scope = ? AND idem_key = ?', [
            claim.scope,
            claim.key,
          ]);
        return payload;
      },
    };
  }
}
