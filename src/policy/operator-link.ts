import { ErrorCode, HostError, RealClock } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { EndpointConnection } from '../mhs/connection.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import type { OperatorLink } from './ports.js';

/** What {@link createOperatorLink} needs. */
export interface OperatorLinkDeps {
  /** Connector rows (the connector store's `list`). */
  rows: () => Promise<ConnectorRow[]>;
  /** Opens a connection for a row (src/mhs `connect`, with the live enablement check). */
  connect: (row: ConnectorRow) => Promise<EndpointConnection>;
  clock?: Clock;
}

/** How long "this endpoint has no operator route" (no row, or stdio) is remembered before rows are read again. */
const NO_ROUTE_MEMO_MS = 5_000;

/**
 * The operator route (HOST-047, 090; CORE-130): its own MCP connection per endpoint, separate from
 * the agent's, to a projection that serves `--operator-tools`. Only HTTP endpoints qualify: a stdio
 * projection is a process per connection, so a second process would not share the agent session's
 * permits. Connections are cached and reopened after they close. Refuses with
 * `MHS.HOST.ENDPOINT_UNKNOWN`, `MHS.HOST.ADAPTER_MISSING` (stdio), or the connector's own codes
 * (`MHS.HOST.CONNECTOR_DISABLED` when disabled).
 */
export function createOperatorLink(deps: OperatorLinkDeps): OperatorLink & { close(): Promise<void> } {
  const open = new Map<string, Promise<EndpointConnection>>();
  const clock = deps.clock ?? new RealClock();
  // Every effectful call on a stdio endpoint asks for a route it cannot have: answer from memory for a while
  // instead of reading the connector rows and building the refusal again each time.
  const noRoute = new Map<string, { error: HostError; until: number }>();
  return {
    operatorConnection(endpointId) {
      const cached = open.get(endpointId);
      if (cached) return cached;
      const memo = noRoute.get(endpointId);
      if (memo && clock.now() < memo.until) return Promise.reject(memo.error);
      const p = (async () => {
        const row = (await deps.rows()).find((r) => r.endpoint_id === endpointId);
        if (!row || row.transport !== 'http') {
          const refusal = !row
            ? new HostError(ErrorCode.HOST_ENDPOINT_UNKNOWN, 'no connector for this endpoint', {
                endpoint_id: endpointId,
              })
            : new HostError(ErrorCode.HOST_ADAPTER_MISSING, 'the operator route needs an HTTP projection', {
                endpoint_id: endpointId,
                connector_id: row.connector_id,
              });
          noRoute.set(endpointId, { error: refusal, until: clock.now() + NO_ROUTE_MEMO_MS });
          throw refusal;
        }
        const conn = await deps.connect(row);
        void conn.closed.then(() => open.delete(endpointId));
        return conn;
      })();
      open.set(endpointId, p);
      p.catch(() => open.delete(endpointId));
      return p;
    },
    async close() {
      const all = [...open.values()];
      open.clear();
      noRoute.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    },
  };
}
