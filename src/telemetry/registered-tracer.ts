import { ProxyTracerProvider, ROOT_CONTEXT, defaultTextMapGetter, trace } from '@opentelemetry/api';
import type { Context, Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** The provider of an API with nothing registered (a fresh proxy delegates to the no-op provider). */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();
const propagator = new W3CTraceContextPropagator();

/**
 * A tracer of the process's registered tracer provider (the OTLP export `src/cli/otlp-export.ts` sets up, or an
 * embedding application's own SDK), or null when none is registered: then no span would be recorded or exported,
 * and callers keep span bookkeeping off their path.
 */
export function registeredTracer(name: string, version?: string): Tracer | null {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate === NOOP_PROVIDER ? null : trace.getTracer(name, version);
}

/** A context whose parent is the span a W3C `traceparent` names (the root context without a valid one). */
export function traceparentContext(traceparent: string | null | undefined, tracestate?: string): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) }, defaultTextMapGetter);
}
