// Guarantees (issue 21 item 9): `mhs-host serve` with OTEL_EXPORTER_OTLP_ENDPOINT exports the spans of an OpenWOP
// run (creation, the run, each node) in the trace of the caller's `traceparent`, and flushes them when it is
// stopped (SIGTERM): with the batch delay set far beyond the test, only the shutdown flush can deliver them. With
// no OTEL_SERVICE_NAME the service is `mhs-host`.
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { client, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import { startOtlpReceiver } from './otlp-receiver.js';

describe('OTLP span export from serve (issue 21 item 9)', () => {
  test('a run continues the caller trace: run.create → run → nodes, flushed on SIGTERM', async () => {
    const rx = await startOtlpReceiver();
    const db = tempDb();
    const token = await makeToken(db);
    const srv = await serve(db, ['--no-mhs'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: '', // unset: the service is named mhs-host
      OTEL_BSP_SCHEDULE_DELAY: '3600000',
    });
    try {
      const api = client(srv.url, token);
      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const created = await api.post(
        '/v1/runs',
        { workflowId: 'conformance-noop' },
        { traceparent: `00-${traceId}-${callerSpan}-01` },
      );
      expect(created.status).toBe(201);
      const runId = created.body.runId as string;
      const [, responseTrace, createSpan] = String(created.headers.get('traceresponse')).split('-');
      expect(responseTrace).toBe(traceId);
      await api.until(runId, (s) => s.status === 'completed');
      expect(await srv.stop()).toBe(0);

      const spans = rx.spans().filter((s) => s.traceId === traceId);
      expect(new Set(spans.map((s) => s.resource['service.name']))).toEqual(new Set(['mhs-host']));
      const create = spans.find((s) => s.spanId === createSpan);
      expect(create?.name).toBe('openwop.run.create');
      expect(create!.parentSpanId).toBe(callerSpan);
      const run = spans.filter((s) => s.name === 'openwop.run' && s.attributes['openwop.run_id'] === runId);
      expect(run.length).toBe(1);
      expect(run[0]!.parentSpanId).toBe(createSpan);
      const nodes = spans.filter((s) => s.name.startsWith('openwop.node ') && s.attributes['openwop.run_id'] === runId);
      expect(nodes.length).toBeGreaterThan(0);
      for (const n of nodes) expect(n.parentSpanId).toBe(run[0]!.spanId);
    } finally {
      await srv.kill().catch(() => undefined);
      await rx.close();
    }
  });
});
