import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import type { Context, Span, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { registeredTracer } from '../telemetry/registered-tracer.js';

const propagator = new W3CTraceContextPropagator();
const setter: TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };
const getter: TextMapGetter<Record<string, string>> = {
  get: (c, k) => c[k],
  keys: (c) => Object.keys(c),
};

/** Gives spans real ids (run events carry their traceparent) when the process registered no provider. */
let unexported: BasicTracerProvider | undefined;

/**
 * Run, node and `ctx.mcp` spans: exported through the process's registered provider (OTLP:
 * docs/observability.md), else recorded by a provider of this module alone that hands them to nobody.
 * Never registered globally, so other code sees no provider when nothing exports.
 */
const tracer = () =>
  registeredTracer('mhs-host/openwop', '0.1.0') ??
  (unexported ??= new BasicTracerProvider()).getTracer('mhs-host/openwop');

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
