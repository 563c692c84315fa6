import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, HostError, createIdFactory, isoAt, sha256Hex } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { ensureSchema } from './schema.js';

/**
 * Role of an API token: `client` may create and read runs; `operator` may also decide and stop (issue 6, 7);
 * `agent` may only use the MCP gateway (`/mcp`), never the run or operator API; `viewer` may only read (issue 20).
 * What each role may call is the route × role table, src/server/route-roles.ts.
 */
export type TokenRole = 'operator' | 'client' | 'agent' | 'viewer';

/** Every role a token may have. */
export const TOKEN_ROLES: readonly TokenRole[] = ['operator', 'client', 'agent', 'viewer'];

/** The identity a verified bearer token stands for. The principal of every operator action. */
export interface TokenIdentity {
  id: string;
  name: string;
  role: TokenRole;
}

/** A token row as listed (never the secret nor its hash). */
export interface TokenInfo extends TokenIdentity {
  created_at: string;
  revoked_at: string | null;
}

/** Durable API token store; tokens are kept only as SHA-256 hashes. */
export interface TokenStore {
  /** Creates a token; the clear `token` is returned once and never stored. Raises `conflict` for an active name. */
  add(name: string, role: TokenRole): Promise<{ token: string; id: string }>;
  list(): Promise<TokenInfo[]>;
  /** Revokes by name or id; raises `not_found` when no active token matches. */
  revoke(nameOrId: string): Promise<TokenInfo>;
  /** The identity behind a bearer token, or null when unknown or revoked. */
  verify(bearer: string): Promise<TokenIdentity | null>;
}

const TOKEN_PREFIX = 'mhst_';
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

const DDL = `CREATE TABLE IF NOT EXISTS mhs_api_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
)`;

interface Row {
  id: string;
  name: string;
  role: TokenRole;
  token_hash: string;
  created_at: string;
  revoked_at: string | null;
}

function info(r: Row): TokenInfo {
  return { id: r.id, name: r.name, role: r.role, created_at: r.created_at, revoked_at: r.revoked_at ?? null };
}

/**
 * Opens the token store over the shared `Db` (table `mhs_api_tokens`, created on first use).
 * Tokens are 256-bit random values; only `sha256(token)` is stored and compared in constant time.
 */
export function createTokenStore(db: Db, clock: Clock): TokenStore {
  const ids = createIdFactory(clock);
  const ready = ensureSchema(db, 'policy.tokens.v1', DDL);

  return {
    async add(name, role) {
      await ready;
      if (typeof name !== 'string' || !NAME_RE.test(name)) {
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'token name must be 1-64 of [A-Za-z0-9._@-]', { name });
      }
      if (!TOKEN_ROLES.includes(role)) {
        throw new HostError(ErrorCode.VALIDATION_ERROR, `role must be one of ${TOKEN_ROLES.join(', ')}`, { role });
      }
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const id = ids.next('token');
      await db.tx(async (t) => {
        const active = await t.get('SELECT id FROM mhs_api_tokens WHERE name = ? AND revoked_at IS NULL', [name]);
        if (active) throw new HostError(ErrorCode.CONFLICT, `an active token named ${name} exists`, { name });
        await t.run(
          'INSERT INTO mhs_api_tokens (id, name, role, token_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)',
          [id, name, role, sha256Hex(token), isoAt(clock.now())],
        );
      });
      return { token, id };
    },

    async list() {
      await ready;
      const rows = await db.all<Row>('SELECT * FROM mhs_api_tokens ORDER BY created_at, id');
      return rows.map(info);
    },

    async revoke(nameOrId) {
      await ready;
      return db.tx(async (t) => {
        const row = await t.get<Row>(
          'SELECT * FROM mhs_api_tokens WHERE (id = ? OR name = ?) AND revoked_at IS NULL ORDER BY created_at LIMIT 1',
          [nameOrId, nameOrId],
        );
        if (!row) throw new HostError(ErrorCode.NOT_FOUND, `no active token ${nameOrId}`, { token: nameOrId });
        const at = isoAt(clock.now());
        await t.run('UPDATE mhs_api_tokens SET revoked_at = ? WHERE id = ?', [at, row.id]);
        return info({ ...row, revoked_at: at });
      });
    },

    async verify(bearer) {
      await ready;
      if (typeof bearer !== 'string' || !bearer.startsWith(TOKEN_PREFIX) || bearer.length > 200) return null;
      const hash = sha256Hex(bearer);
      const row = await db.get<Row>('SELECT * FROM mhs_api_tokens WHERE token_hash = ? AND revoked_at IS NULL', [hash]);
      if (!row) return null;
      // Constant-time compare of the stored hash (defence in depth beside the indexed lookup).
      const a = Buffer.from(row.token_hash, 'hex');
      const b = Buffer.from(hash, 'hex');
      if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
      return { id: row.id, name: row.name, role: row.role };
    },
  };
}
