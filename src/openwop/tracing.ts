import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import type { Context, Span, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

const propagator = new W3CTraceContextPropagator();
const setter: TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };
const getter: TextMapGetter<Record<string, string>> = {
  get: (c, k) => c[k],
  keys: (c) => Object.keys(c),
};

let installed = false;

/**
 * Makes sure spans get real ids: registers a plain tracer provider when the process has none
 * (a host that configured an exporting SDK keeps its own).
 */
export function ensureTracerProvider(): void {
  if (installed) return;
  installed = true;
  trace.setGlobalTracerProvider(new BasicTracerProvider());
}

const tracer = () => trace.getTracer('mhs-host/openwop');

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
  const span = tracer().startSpan(name, { attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  return { span, ctx, traceparent: traceparentOf(ctx) };
}

/** The active context (for callers that use context.with). */
export function activeContext(): Context {
  return context.active();
}
