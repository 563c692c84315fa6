import type { Db } from '../ledger/db.js';
import type { ApprovalRequest, ApprovalStatus } from './approval-rules.js';
import { ensureSchema } from './schema.js';

const DDL = `CREATE TABLE IF NOT EXISTS mhs_approvals (
  approval_id TEXT PRIMARY KEY,
  request_key TEXT,
  status TEXT NOT NULL,
  input_digest TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mhs_approvals_status ON mhs_approvals (status);
CREATE INDEX IF NOT EXISTS mhs_approvals_key ON mhs_approvals (request_key)`;

/** Durable approval requests (one row per request; the full request kept as JSON in `body`). */
export interface ApprovalStore {
  insert(req: ApprovalRequest): Promise<void>;
  get(approvalId: string): Promise<ApprovalRequest | undefined>;
  /**
   * Replaces a request only if its status is still `expectStatus` (compare-and-set), so two
   * concurrent decisions never both apply. Returns false when it lost the race.
   */
  update(req: ApprovalRequest, expectStatus: ApprovalStatus, expectVotes: number): Promise<boolean>;
  list(filter?: { status?: ApprovalStatus[]; limit?: number }): Promise<ApprovalRequest[]>;
  /** Open requests (pending or approved, not yet consumed) with this request key. */
  openByKey(key: string): Promise<ApprovalRequest[]>;
  /** Open requests (pending or approved) asked for by this run, whatever their key. */
  openByRun(runId: string): Promise<ApprovalRequest[]>;
}

interface Row {
  body: string;
}

/** Opens the approval store over the shared `Db` (table `mhs_approvals`). */
export function createApprovalStore(db: Db): ApprovalStore {
  const ready = ensureSchema(db, 'policy.approvals.v1', DDL);
  const parse = (r: Row | undefined) => (r ? (JSON.parse(r.body) as ApprovalRequest) : undefined);
  return {
    async insert(req) {
      await ready;
      await db.run(
        'INSERT INTO mhs_approvals (approval_id, request_key, status, input_digest, endpoint_id, device_id, created_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          req.approval_id,
          req.request_key,
          req.status,
          req.input_digest,
          req.endpoint_id,
          req.device_id,
          req.created_at,
          JSON.stringify(req),
        ],
      );
    },
    async get(id) {
      await ready;
      return parse(await db.get<Row>('SELECT body FROM mhs_approvals WHERE approval_id = ?', [id]));
    },
    async update(req, expectStatus, expectVotes) {
      await ready;
      return db.tx(async (t) => {
        const cur = parse(await t.get<Row>('SELECT body FROM mhs_approvals WHERE approval_id = ?', [req.approval_id]));
        if (!cur || cur.status !== expectStatus || cur.votes.length !== expectVotes) return false;
        await t.run('UPDATE mhs_approvals SET status = ?, body = ? WHERE approval_id = ?', [
          req.status,
          JSON.stringify(req),
          req.approval_id,
        ]);
        return true;
      });
    },
    async list(filter = {}) {
      await ready;
      const statuses = filter.status ?? [];
      const where = statuses.length ? `WHERE status IN (${statuses.map(() => '?').join(', ')})` : '';
      const rows = await db.all<Row>(
        `SELECT body FROM mhs_approvals ${where} ORDER BY created_at DESC, approval_id DESC LIMIT ?`,
        [...statuses, filter.limit ?? 200],
      );
      return rows.map((r) => JSON.parse(r.body) as ApprovalRequest);
    },
    async openByKey(key) {
      await ready;
      const rows = await db.all<Row>(
        "SELECT body FROM mhs_approvals WHERE request_key = ? AND status IN ('pending', 'approved') ORDER BY created_at",
        [key],
      );
      return rows.map((r) => JSON.parse(r.body) as ApprovalRequest);
    },
    async openByRun(runId) {
      await ready;
      // Few requests are open at a time; the run id lives in the body (no column in policy.approvals.v1).
      const rows = await db.all<Row>(
        "SELECT body FROM mhs_approvals WHERE status IN ('pending', 'approved') ORDER BY created_at",
      );
      return rows.map((r) => JSON.parse(r.body) as ApprovalRequest).filter((r) => r.run_id === runId);
    },
  };
}
