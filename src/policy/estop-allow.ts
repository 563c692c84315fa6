import { isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { ensureSchema } from './schema.js';

/** One device on the trusted e-stop allow-list. */
export interface EstopAllowance {
  endpoint_id: string;
  device_id: string;
  allowed_by: string;
  allowed_at: string;
}

/**
 * The operator-managed part of the trusted e-stop allow-list (HOST-094: operator-enabled, endpoint-
 * and device-allow-listed). Each change is an operator action recorded in the ledger
 * (`operator.enable|disable` with `scope: "estop"`) before it takes effect.
 */
export interface EstopAllowList {
  list(): Promise<EstopAllowance[]>;
  isAllowed(endpointId: string, deviceId: string): Promise<boolean>;
  set(endpointId: string, deviceId: string, allowed: boolean, operator: { id: string; name: string }): Promise<boolean>;
}

const DDL = `CREATE TABLE IF NOT EXISTS mhs_estop_allow (
  endpoint_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  allowed_by TEXT NOT NULL,
  allowed_at TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, device_id)
)`;

/** Opens the allow-list over the shared `Db` (table `mhs_estop_allow`). */
export function createEstopAllowList(db: Db, ledger: Ledger, clock: Clock): EstopAllowList {
  const ready = ensureSchema(db, 'policy.estop-allow.v1', DDL);
  return {
    async list() {
      await ready;
      return db.all<EstopAllowance>('SELECT * FROM mhs_estop_allow ORDER BY endpoint_id, device_id');
    },
    async isAllowed(endpointId, deviceId) {
      await ready;
      return !!(await db.get('SELECT 1 AS x FROM mhs_estop_allow WHERE endpoint_id = ? AND device_id = ?', [
        endpointId,
        deviceId,
      ]));
    },
    async set(endpointId, deviceId, allowed, operator) {
      await ready;
      // Recorded first: an allowance that cannot be recorded does not take effect.
      await ledger.append({
        kind: allowed ? 'operator.enable' : 'operator.disable',
        scope: 'estop',
        endpoint_id: endpointId,
        device_id: deviceId,
        operator: { kind: 'human', id: operator.id, name: operator.name },
      });
      if (allowed) {
        await db.run('DELETE FROM mhs_estop_allow WHERE endpoint_id = ? AND device_id = ?', [endpointId, deviceId]);
        await db.run(
          'INSERT INTO mhs_estop_allow (endpoint_id, device_id, allowed_by, allowed_at) VALUES (?, ?, ?, ?)',
          [endpointId, deviceId, operator.name, isoAt(clock.now())],
        );
      } else {
        await db.run('DELETE FROM mhs_estop_allow WHERE endpoint_id = ? AND device_id = ?', [endpointId, deviceId]);
      }
      return allowed;
    },
  };
}
