import { ErrorCode } from '../core/index.js';
import type { EndpointConnection, ToolCallResult } from '../mhs/connection.js';

/**
 * Wraps the agent connection the engine sends through so that a command carrying a permit is sent
 * only if `claim(permit_id)` succeeds at the moment of sending (inside the engine's command lane):
 * a permit revoked by an operator, expired or already used is never sent, even when the endpoint
 * has not yet seen the revocation (HOST-047, 070). A refused send resolves as a fault result
 * (`isError`, `MHS.AUTH.PERMIT_REVOKED`, nothing executed), so the engine reopens the device gate.
 * Every other property of the connection (connectorId, manifest, ...) passes through unchanged.
 */
export function guardPermits<T extends EndpointConnection>(conn: T, claim: (permitId: string) => Promise<boolean>): T {
  const callTool: EndpointConnection['callTool'] = async (name, args, opts) => {
    const control = args._mhs as { permit_id?: unknown } | undefined;
    const permitId = typeof control?.permit_id === 'string' ? control.permit_id : undefined;
    if (permitId !== undefined && !(await claim(permitId))) {
      const refused: ToolCallResult = {
        isError: true,
        structuredContent: {
          error: {
            mhs_code: ErrorCode.AUTH_PERMIT_REVOKED,
            message: 'the host holds this permit as revoked, expired or used; the command was not sent',
            remediation: 'request a new approval',
            details: { permit_id: permitId, host_side: true, sent: false },
          },
        },
      };
      return refused;
    }
    return conn.callTool(name, args, opts);
  };
  return new Proxy(conn, {
    get(target, prop) {
      if (prop === 'callTool') return callTool;
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
