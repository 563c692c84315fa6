// Guarantees: the operator route (HOST-047) refuses a stdio endpoint with MHS.HOST.ADAPTER_MISSING and an endpoint
// without a connector with MHS.HOST.ENDPOINT_UNKNOWN; a refusal is remembered for 5 s (the hot path asks on every
// effectful call) and the connector rows are read again after that, so a row added later is seen.
import { describe, expect, it } from 'vitest';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { createOperatorLink } from '../../src/policy/operator-link.js';

const row = (id: string, transport: 'stdio' | 'http'): ConnectorRow => ({
  connector_id: `c-${id}`,
  transport,
  ...(transport === 'stdio' ? { command: ['true'] } : { url: 'http://127.0.0.1:9/mcp' }),
  endpoint_id: `mhs://t/${id}`,
  enabled: true,
  source: { kind: 'registry', ref: 'test' },
  auth: { scheme: 'local' },
});

describe('operator route refusals', () => {
  it('are remembered for 5 s, then the rows are read again', async () => {
    const clock = new SimulatedClock();
    let reads = 0;
    let rows: ConnectorRow[] = [row('a', 'stdio')];
    const connected: string[] = [];
    const link = createOperatorLink({
      clock,
      rows: async () => {
        reads++;
        return rows;
      },
      connect: async (r) => {
        connected.push(r.connector_id);
        throw new Error('no server in this test');
      },
    });
    await expect(link.operatorConnection('mhs://t/a')).rejects.toMatchObject({ code: ErrorCode.HOST_ADAPTER_MISSING });
    await expect(link.operatorConnection('mhs://t/a')).rejects.toMatchObject({ code: ErrorCode.HOST_ADAPTER_MISSING });
    await expect(link.operatorConnection('mhs://t/b')).rejects.toMatchObject({ code: ErrorCode.HOST_ENDPOINT_UNKNOWN });
    expect(reads).toBe(2);
    rows = [row('a', 'stdio'), row('b', 'http')];
    clock.advance(4_999);
    await expect(link.operatorConnection('mhs://t/b')).rejects.toMatchObject({ code: ErrorCode.HOST_ENDPOINT_UNKNOWN });
    expect(reads).toBe(2);
    clock.advance(1);
    await expect(link.operatorConnection('mhs://t/b')).rejects.toThrow('no server in this test');
    expect(reads).toBe(3);
    expect(connected).toEqual(['c-b']);
  });
});
