// Guarantees (HOST-081): the engine's tracer hands out valid W3C traceparents whether or not spans are recorded:
// a child keeps its parent's trace id and flags and gets a new span id; a root starts a new trace; with a span
// processor the same spans are recorded and exported.
import { describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EngineTracer, traceIdOf } from '../../src/engine/tracing.js';

const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INCOMING = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe.each([
  ['non-recording (no processor)', () => ({ tracer: new EngineTracer(), exporter: null })],
  [
    'recording (in-memory exporter)',
    () => {
      const exporter = new InMemorySpanExporter();
      return { tracer: new EngineTracer({ spanProcessors: [new SimpleSpanProcessor(exporter)] }), exporter };
    },
  ],
])('EngineTracer, %s', (_name, make) => {
  it('HOST-081: a child of an incoming traceparent stays in its trace with a new span id', () => {
    const { tracer, exporter } = make();
    const s = tracer.start('mhs.command x', { traceparent: INCOMING });
    const m = W3C.exec(s.traceparent);
    expect(m).not.toBeNull();
    expect(traceIdOf(s.traceparent)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(m?.[2]).not.toBe('00f067aa0ba902b7');
    expect(m?.[3]).toBe('01');
    const child = tracer.start('child', s);
    expect(traceIdOf(child.traceparent)).toBe(traceIdOf(s.traceparent));
    expect(child.traceparent).not.toBe(s.traceparent);
    tracer.end(child);
    tracer.end(s, 'MHS.OUTCOME.UNKNOWN');
    if (exporter) expect(exporter.getFinishedSpans().map((x) => x.name)).toEqual(['child', 'mhs.command x']);
  });

  it('a root span starts a new trace each time', () => {
    const { tracer } = make();
    const a = tracer.start('a');
    const b = tracer.start('b');
    expect(a.traceparent).toMatch(W3C);
    expect(b.traceparent).toMatch(W3C);
    expect(traceIdOf(a.traceparent)).not.toBe(traceIdOf(b.traceparent));
  });
});
