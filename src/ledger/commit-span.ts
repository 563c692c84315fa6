import { SpanStatusCode } from '@opentelemetry/api';
import { registeredTracer, traceparentContext } from '../telemetry/registered-tracer.js';

/**
 * Runs `commit` (an append, until its entries are durable: the group commit it rides in included) in a
 * `mhs.ledger.commit` span when the process exports spans, as a child of the first entry's `traceparent`, so the
 * commit sits in the trace of the task, command or run whose entries it writes. Without a registered tracer
 * provider it is `commit()` alone.
 */
export function inCommitSpan<T extends ReadonlyArray<{ seq: number }>>(
  items: ReadonlyArray<{ kind: string; traceparent?: unknown }>,
  commit: () => Promise<T>,
): Promise<T> {
  const tracer = registeredTracer('mhs-host.ledger', '0.1.0');
  if (!tracer) return commit();
  const first = items.find((i) => typeof i.traceparent === 'string');
  const span = tracer.startSpan(
    'mhs.ledger.commit',
    {
      attributes: {
        'mhs.ledger.entries': items.length,
        'mhs.ledger.kinds': [...new Set(items.map((i) => i.kind))].join(','),
      },
    },
    traceparentContext(first?.traceparent as string | undefined),
  );
  return commit().then(
    (sealed) => {
      if (sealed.length) span.setAttribute('mhs.ledger.seq', sealed[0]!.seq);
      span.end();
      return sealed;
    },
    (err: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as { code?: unknown }).code ?? err) });
      span.end();
      throw err;
    },
  );
}
