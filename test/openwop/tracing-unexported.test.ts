// Issue 21: with no tracer provider registered, run and node spans are non-recording but still carry W3C ids, in
// their parent's trace, with the sampled flag the SDK's default sampler (ParentBased(AlwaysOn)) would have given.
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { contextFrom, startSpan } from '../../src/openwop/tracing.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
const parts = (tp: string | undefined) => {
  const m = TRACEPARENT.exec(tp ?? '');
  expect(m, `a W3C traceparent: ${tp}`).not.toBeNull();
  return { traceId: m![1]!, spanId: m![2]!, flags: m![3]! };
};

describe('spans with nothing exporting', () => {
  it('a root span starts a sampled trace; its children stay in it with their own span ids', () => {
    const root = startSpan('openwop.run', ROOT_CONTEXT);
    const r = parts(root.traceparent);
    expect(r.flags).toBe('01');
    expect(/[^0]/.test(r.traceId) && /[^0]/.test(r.spanId)).toBe(true);
    expect(root.span.isRecording()).toBe(false);
    const child = parts(startSpan('openwop.node core.noop', root.ctx).traceparent);
    expect(child.traceId).toBe(r.traceId);
    expect(child.spanId).not.toBe(r.spanId);
    const other = parts(startSpan('openwop.run', ROOT_CONTEXT).traceparent);
    expect(other.traceId).not.toBe(r.traceId);
  });

  it("continues a caller's traceparent and keeps its sampled flag, sampled or not", () => {
    for (const flags of ['01', '00']) {
      const parent = `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-${flags}`;
      const s = startSpan('openwop.run.create', contextFrom(parent));
      const p = parts(s.traceparent);
      expect(p.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(p.spanId).not.toBe('00f067aa0ba902b7');
      expect(p.flags).toBe(flags);
      expect(trace.getSpanContext(s.ctx)?.spanId).toBe(p.spanId);
    }
  });
});
