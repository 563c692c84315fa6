/**
 * Durable connector rows (HOST-061) in the shared store. Discovery upserts rows and never touches
 * `enabled`; a new row is always stored disabled (HOST-066). Only `enablement.ts` flips the flag.
 */
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { migrate } from '../ledger/migrate.js';
import type { ConnectorRow, EndpointAuth, SourceRef } from '../mhs/connector-row.js';
import type { EndpointDescriptor } from '../mhs/wire-types.js';
import { openSecretBox } from './secret-box.js';
import type { SecretBox } from './secret-box.js';

const DDL = `CREATE TABLE IF NOT EXISTS connector_rows (
  connector_id TEXT PRIMARY KEY,
  transport TEXT NOT NULL,
  command TEXT,
  url TEXT,
  base_url TEXT,
  endpoint_id TEXT,
  display_name TEXT,
  enabled INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL,
  seen_in TEXT NOT NULL,
  auth TEXT NOT NULL,
  descriptor TEXT,
  manifest_digest TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`;

interface RowRecord {
  connector_id: string;
  transport: string;
  command: string | null;
  url: string | null;
  base_url: string | null;
  endpoint_id: string | null;
  display_name: string | null;
  enabled: number | string;
  source: string;
  seen_in: string;
  auth: string;
  descriptor: string | null;
  manifest_digest: string | null;
  created_at: string;
  updated_at: string;
}

/** A row as discovery produced it: everything but `enabled`. */
export type DiscoveredRow = Omit<ConnectorRow, 'enabled'>;

/** The connector row store. */
export interface ConnectorStore {
  list(): Promise<ConnectorRow[]>;
  get(connectorId: string): Promise<ConnectorRow | undefined>;
  /** The row, or `MHS.HOST.ENDPOINT_UNKNOWN` naming the command that lists connector ids. */
  require(connectorId: string): Promise<ConnectorRow>;
  /**
   * Inserts a discovered endpoint disabled, or refreshes an existing row's command/url, source,
   * descriptor and auth. Never changes `enabled` (HOST-066).
   */
  upsertDiscovered(row: DiscoveredRow): Promise<{ row: ConnectorRow; created: boolean }>;
  /**
   * Records the endpoint id and manifest digest of an admitted connection (stdio rows learn their
   * endpoint id on first connect); the manifest itself is kept by digest in the ledger artifacts.
   */
  recordManifest(connectorId: string, endpointId: string, manifestDigest: string): Promise<void>;
  /** The digest recorded by {@link ConnectorStore.recordManifest}, if any. */
  manifestDigest(connectorId: string): Promise<string | null>;
  /**
   * @internal Sets the flag. Only `enablement.ts` calls it, inside its recorded operator action.
   * @throws HostError `MHS.HOST.ENDPOINT_UNKNOWN` when there is no such row.
   */
  _setEnabled(connectorId: string, enabled: boolean): Promise<ConnectorRow>;
}

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));

/** How `auth` is stored: an inline token only sealed (issue 20), never as written. */
type StoredAuth = EndpointAuth | { scheme: 'bearer'; token_sealed: string; token_env?: string };

function sealAuth(auth: EndpointAuth, box: SecretBox): StoredAuth {
  if (auth.scheme !== 'bearer' || auth.token === undefined) return auth;
  const { token, ...rest } = auth;
  return { ...rest, token_sealed: box.seal(token) };
}

function openAuth(stored: StoredAuth, box: SecretBox, connectorId: string): EndpointAuth {
  if (stored.scheme !== 'bearer' || !('token_sealed' in stored)) return stored as EndpointAuth;
  const { token_sealed, ...rest } = stored;
  return { ...rest, token: box.open(token_sealed, { connector_id: connectorId }) };
}

function rowOf(r: RowRecord, box: SecretBox): ConnectorRow {
  const row: ConnectorRow = {
    connector_id: r.connector_id,
    transport: r.transport === 'stdio' ? 'stdio' : 'http',
    endpoint_id: r.endpoint_id,
    enabled: Number(r.enabled) === 1,
    source: parse<SourceRef>(r.source)!,
    seen_in: parse<SourceRef[]>(r.seen_in) ?? [],
    auth: openAuth(parse<StoredAuth>(r.auth)!, box, r.connector_id),
    descriptor: parse<EndpointDescriptor>(r.descriptor) ?? null,
  };
  const command = parse<string[]>(r.command);
  if (command) row.command = command;
  if (r.url) row.url = r.url;
  if (r.base_url) row.base_url = r.base_url;
  if (r.display_name) row.display_name = r.display_name;
  return row;
}

/** Opens the store on `db`, creating its table once (migration `policy-001-connector-rows`). */
export async function openConnectorStore(db: Db, opts: { clock: Clock; secrets?: SecretBox }): Promise<ConnectorStore> {
  await migrate(db, 'policy-001-connector-rows', DDL);
  const box = opts.secrets ?? openSecretBox(db.location);
  const toRow = (r: RowRecord): ConnectorRow => rowOf(r, box);
  await sealPlainTokens(db, box);
  const now = () => isoAt(opts.clock.now());
  const select = 'SELECT * FROM connector_rows';

  const get = async (id: string, d: Db = db) => {
    const r = await d.get<RowRecord>(`${select} WHERE connector_id = ?`, [id]);
    return r ? toRow(r) : undefined;
  };

  return {
    async list() {
      return (await db.all<RowRecord>(`${select} ORDER BY connector_id`)).map(toRow);
    },
    get: (id) => get(id),
    async require(id) {
      const row = await get(id);
      if (!row)
        throw new HostError(
          ErrorCode.HOST_ENDPOINT_UNKNOWN,
          `no connector ${id}`,
          { connector_id: id },
          { remediation: 'Run `mhs-host endpoints list` to discover endpoints and see their connector ids.' },
        );
      return row;
    },
    async upsertDiscovered(row) {
      return db.tx(async (t) => {
        const existing = await get(row.connector_id, t);
        const values = [
          row.transport,
          row.command ? JSON.stringify(row.command) : null,
          row.url ?? null,
          row.base_url ?? null,
          row.endpoint_id ?? existing?.endpoint_id ?? null,
          row.display_name ?? existing?.display_name ?? null,
          JSON.stringify(row.source),
          JSON.stringify(row.seen_in ?? [row.source]),
          JSON.stringify(sealAuth(row.auth, box)),
          row.descriptor ? JSON.stringify(row.descriptor) : null,
        ];
        if (existing) {
          await t.run(
            `UPDATE connector_rows SET transport = ?, command = ?, url = ?, base_url = ?, endpoint_id = ?, display_name = ?,
             source = ?, seen_in = ?, auth = ?, descriptor = ?, updated_at = ? WHERE connector_id = ?`,
            [...values, now(), row.connector_id],
          );
        } else {
          await t.run(
            `INSERT INTO connector_rows (transport, command, url, base_url, endpoint_id, display_name, source, seen_in, auth,
             descriptor, updated_at, connector_id, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
            [...values, now(), row.connector_id, now()],
          );
        }
        return { row: (await get(row.connector_id, t))!, created: !existing };
      });
    },
    async recordManifest(id, endpointId, digest) {
      await db.run(
        'UPDATE connector_rows SET endpoint_id = ?, manifest_digest = ?, updated_at = ? WHERE connector_id = ?',
        [endpointId, digest, now(), id],
      );
    },
    async manifestDigest(id) {
      const r = await db.get<{ manifest_digest: string | null }>(
        'SELECT manifest_digest FROM connector_rows WHERE connector_id = ?',
        [id],
      );
      return r?.manifest_digest ?? null;
    },
    async _setEnabled(id, enabled) {
      return db.tx(async (t) => {
        const r = await t.run('UPDATE connector_rows SET enabled = ?, updated_at = ? WHERE connector_id = ?', [
          enabled ? 1 : 0,
          now(),
          id,
        ]);
        if (r.changes === 0)
          throw new HostError(
            ErrorCode.HOST_ENDPOINT_UNKNOWN,
            `no connector ${id}`,
            { connector_id: id },
            {
              remediation: 'Run `mhs-host endpoints list` to discover endpoints and see their connector ids.',
            },
          );
        return (await get(id, t))!;
      });
    },
  };
}

/** Rows written before credentials were sealed get their inline token sealed in place (issue 20). */
async function sealPlainTokens(db: Db, box: SecretBox): Promise<void> {
  const rows = await db.all<{ connector_id: string; auth: string }>('SELECT connector_id, auth FROM connector_rows');
  for (const r of rows) {
    const auth = parse<StoredAuth>(r.auth);
    if (auth?.scheme !== 'bearer' || !('token' in auth) || auth.token === undefined) continue;
    // A store opened read-only keeps its rows as they are; they are sealed on the next writable open.
    await db
      .run('UPDATE connector_rows SET auth = ? WHERE connector_id = ?', [
        JSON.stringify(sealAuth(auth, box)),
        r.connector_id,
      ])
      .catch(() => undefined);
  }
}
