import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, defaultTextMapSetter, trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, RandomIdGenerator } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { registeredTracer, traceparentContext } from '../telemetry/registered-tracer.js';

/** A span started when {@link LaterSpan.start} is first called; ending one not started (or ended) does nothing. */
export interface LaterSpan {
  start(): void;
  end(errorCode?: string): void;
}

/** A started span with the W3C `traceparent` that carries it. */
export interface TraceScope {
  span: Span;
  context: Context;
  traceparent: string;
  tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();
const idGenerator = new RandomIdGenerator();

/**
 * OpenTelemetry spans for tasks, commands and their MCP calls, and the W3C `traceparent` that goes into every
 * outbound MCP request's `_meta` and onto the ledger entries it caused (architecture.md, Observability; HOST-081).
 * Spans are exported when the process registered a tracer provider (OTLP: docs/observability.md).
 */
export class EngineTracer {
  private readonly tracer: Tracer | null;

  /**
   * Spans go to `tracer`, else to a provider of `spanProcessors`, else to the process's registered provider.
   * With none of them there is nobody to hand a recorded span to: spans are then non-recording (ids and W3C
   * propagation only), which keeps the SDK's span bookkeeping off every command.
   */
  constructor(opts: { spanProcessors?: SpanProcessor[]; tracer?: Tracer } = {}) {
    this.tracer =
      opts.tracer ??
      (opts.spanProcessors?.length
        ? new BasicTracerProvider({ spanProcessors: opts.spanProcessors }).getTracer('mhs-host.engine', '0.1.0')
        : registeredTracer('mhs-host.engine', '0.1.0'));
  }

  /** Starts a span, as a child of `parent` (a scope or an incoming `traceparent`) when given. */
  start(
    name: string,
    parent?: TraceScope | { traceparent: string; tracestate?: string },
    attrs?: Record<string, string>,
    kind: SpanKind = SpanKind.INTERNAL,
  ): TraceScope {
    let parentCtx = ROOT_CONTEXT;
    if (parent && 'context' in parent) parentCtx = parent.context;
    else if (parent) parentCtx = traceparentContext(parent.traceparent, parent.tracestate);
    const span = this.tracer
      ? this.tracer.startSpan(name, { kind, ...(attrs ? { attributes: attrs } : {}) }, parentCtx)
      : nonRecordingChild(parentCtx);
    const context = trace.setSpan(parentCtx, span);
    const carrier: Record<string, string> = {};
    propagator.inject(context, carrier, defaultTextMapSetter);
    return {
      span,
      context,
      traceparent: carrier.traceparent ?? '',
      ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
    };
  }

  /** Ends a span, marking it failed with `code` when given. */
  end(scope: TraceScope, errorCode?: string): void {
    if (errorCode) scope.span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
    scope.span.end();
  }

  /** A child span of `parent` started when something happens later (e.g. a request leaving its lane). */
  later(name: string, parent: TraceScope, attrs?: Record<string, string>, kind?: SpanKind): LaterSpan {
    let scope: TraceScope | undefined;
    return {
      start: () => void (scope ??= this.start(name, parent, attrs, kind)),
      end: (errorCode) => {
        if (scope) this.end(scope, errorCode);
        scope = undefined;
      },
    };
  }
}

/** A child span context of `parent` (or a new trace) that records nothing. */
function nonRecordingChild(parent: Context): Span {
  const p = trace.getSpanContext(parent);
  return trace.wrapSpanContext({
    traceId: p?.traceId ?? idGenerator.generateTraceId(),
    spanId: idGenerator.generateSpanId(),
    traceFlags: p?.traceFlags ?? TraceFlags.SAMPLED,
    ...(p?.traceState ? { traceState: p.traceState } : {}),
  });
}

/** The 32-hex trace id of a `traceparent`. */
export function traceIdOf(traceparent: string): string {
  return traceparent.split('-')[1] ?? '';
}
