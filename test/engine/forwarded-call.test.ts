// Issue 19: the stored form of a forwarded governed call is the `InvokeRequest` less the fields that cannot cross
// processes; every other field survives the round trip through JSON (the `endpoint_requests.request` column).
import { describe, expect, it } from 'vitest';
import type { InvokeRequest } from '../../src/engine/call-types.js';
import type { LOCAL_ONLY_FIELDS } from '../../src/engine/endpoint-requests.js';
import { fromForwardedCall, toForwardedCall } from '../../src/engine/endpoint-requests.js';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** Every serialisable field of an `InvokeRequest` set: a field added there and left out here fails the type check. */
const wire: Required<Omit<InvokeRequest, (typeof LOCAL_ONLY_FIELDS)[number]>> = {
  endpointId: 'mhs://ep',
  deviceId: 'thermostat',
  capabilityId: 'cap.thermal.setpoint.v1',
  input: { setpoint_c: 21 },
  taskId: 'tsk_1',
  sessionCapabilities: ['cap.thermal.setpoint.v1'],
  parentAction: { taskId: 'tsk_1', seq: 7, step: 1 },
  runId: 'run_1',
  nodeId: 'warm',
  expectedRevision: 3,
  resource: 'setpoint',
  deadlineMs: 500,
  principal: { kind: 'agent', id: 'bot', name: 'Bot' },
  approvalKey: 'mcp:bot:tool',
};

describe('a forwarded call', () => {
  it('keeps every serialisable field, restates the trace as W3C strings and drops the live ones', () => {
    const req: InvokeRequest = {
      ...wire,
      trace: { traceparent: TP, tracestate: 'v=1' },
      runFence: async () => undefined,
      intentFence: async () => undefined,
      signal: new AbortController().signal,
      approvalSignal: new AbortController().signal,
      disclosure: { surface: 'gateway', show: () => undefined },
    };
    const stored = JSON.parse(JSON.stringify(toForwardedCall(req))) as ReturnType<typeof toForwardedCall>;
    // `relayed`: the sender has a surface that shows the disclosure; the holder hands it over (HOST-003).
    expect(stored).toEqual({
      ...wire,
      traceparent: TP,
      tracestate: 'v=1',
      disclosure: { surface: 'gateway', relayed: true },
    });
    expect(fromForwardedCall(stored)).toEqual({
      ...wire,
      trace: { traceparent: TP, tracestate: 'v=1' },
      disclosure: { surface: 'gateway' },
    });
    const silent = toForwardedCall({ ...wire, disclosure: { surface: 'api' } });
    expect(silent.disclosure).toEqual({ surface: 'api' });
  });
});
