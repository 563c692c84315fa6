import { ROOT_CONTEXT, TraceFlags, context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Context, Span, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { RandomIdGenerator } from '@opentelemetry/sdk-trace-base';
import { registeredTracer } from '../telemetry/registered-tracer.js';

const propagator = new W3CTraceContextPropagator();
const setter: TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };
const getter: TextMapGetter<Record<string, string>> = {
  get: (c, k) => c[k],
  keys: (c) => Object.keys(c),
};

/** The SDK's own id generator (the ids an SDK span would have had). */
const ids = new RandomIdGenerator();

/**
 * With no provider registered nothing is exported, but run events still carry their span's `traceparent`: a
 * non-recording span with fresh ids, in its parent's trace (a new one at the root), sampled unless the parent was
 * not, as the SDK's default `ParentBased(AlwaysOn)` sampler decides; attributes and status go nowhere, so none are
 * kept (issue 21: the SDK span and its attribute checks cost every run and node).
 */
function unexportedSpan(parent: Context): Span {
  const p = trace.getSpanContext(parent);
  const valid = p !== undefined && isSpanContextValid(p);
  return trace.wrapSpanContext({
    traceId: valid ? p.traceId : ids.generateTraceId(),
    spanId: ids.generateSpanId(),
    traceFlags: valid ? p.traceFlags & TraceFlags.SAMPLED : TraceFlags.SAMPLED,
    ...(valid && p.traceState ? { traceState: p.traceState } : {}),
  });
}

/** The W3C `traceparent` of a context, or undefined when it carries no valid span. */
export function traceparentOf(ctx: Context): string | undefined {
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, setter);
  return carrier.traceparent;
}

/** A context whose parent is the span named by `traceparent` (so a resumed run stays in one trace). */
export function contextFrom(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
}

/** Starts a span under `parent`; returns it with its context and traceparent. */
export function startSpan(
  name: string,
  parent: Context,
  attributes: Record<string, string | number> = {},
): { span: Span; ctx: Context; traceparent: string | undefined } {
  const tracer = registeredTracer('mhs-host/openwop', '0.1.0');
  const span = tracer ? tracer.startSpan(name, { attributes }, parent) : unexportedSpan(parent);
  const ctx = trace.setSpan(parent, span);
  return { span, ctx, traceparent: traceparentOf(ctx) };
}

/** The active context (for callers that use context.with). */
export function activeContext(): Context {
  return context.active();
}
