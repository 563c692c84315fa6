// Guarantees (issue 21 item 9): with the standard OTEL_EXPORTER_OTLP_* variables, `mhs-host demo` (what `npm start`
// runs; a real child process with its simulators) exports its spans over OTLP/HTTP, `http/json` and
// `http/protobuf`, flushed before it exits: the task span is the span the traceparent on the demo's ledger entries
// names, each command is a child of it, each command's MCP call (`tools/call`, client kind) a child of the
// command, and each intent's ledger commit sits under the task span; the resource is named by OTEL_SERVICE_NAME.
// With no OTLP endpoint configured nothing is sent, not even to the SDK's default endpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { cli, ledgerEntries } from '../helpers/mhs-host.js';
import { startOtlpReceiver } from './otlp-receiver.js';
import type { ReceivedSpan } from './otlp-receiver.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'mhs-otlp-'));
  dirs.push(d);
  return d;
}

/** Runs the demo on a fresh store with `env`; returns its ledger. */
async function demo(env: Record<string, string>): Promise<LedgerEntry[]> {
  const dir = tempDir();
  const db = join(dir, 'host.db');
  const run = await cli(['demo', '--db', db, '--out', join(dir, 'evidence')], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout.trim().split('\n').at(-1)).toBe('demo: ok');
  return ledgerEntries(db);
}

/** The task → command → MCP call → ledger commit spans of every intent, checked against its traceparent. */
function expectTraceOfLedger(entries: LedgerEntry[], spans: ReceivedSpan[]): void {
  const intents = entries.filter((e) => e.kind === 'command.intent');
  expect(intents.length).toBe(4); // the demo's four steps
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (const intent of intents) {
    const [, traceId, spanId] = String(intent['traceparent']).split('-');
    const task = byId.get(spanId!);
    expect(task, `a span with the id of ${String(intent['traceparent'])}`).toBeDefined();
    expect(task!.traceId).toBe(traceId);
    expect(task!.name).toMatch(/^mhs\.task /);
    expect(task!.attributes['mhs.task_id']).toBe(intent['task_id']);
    const mcp = spans.filter((s) => s.attributes['mhs.command_id'] === intent['command_id']);
    expect(mcp.map((s) => s.name)).toEqual([`tools/call ${String(intent['tool'])}`]);
    expect(mcp[0]!.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(mcp[0]!.attributes['mcp.method.name']).toBe('tools/call');
    expect(mcp[0]!.traceId).toBe(traceId);
    const command = byId.get(mcp[0]!.parentSpanId);
    expect(command?.name).toBe(`mhs.command ${String(intent['capability_id'])}`);
    expect(command!.attributes['mhs.device_id']).toBe(intent['device_id']);
    expect(command!.parentSpanId).toBe(spanId);
    expect(command!.traceId).toBe(traceId);
    const commit = spans.filter((s) => s.name === 'mhs.ledger.commit' && s.attributes['mhs.ledger.seq'] === intent.seq);
    expect(commit.length).toBe(1);
    expect(commit[0]!.attributes['mhs.ledger.kinds']).toBe('command.intent');
    expect(commit[0]!.parentSpanId).toBe(spanId);
    expect(commit[0]!.traceId).toBe(traceId);
  }
}

describe('OTLP span export (issue 21 item 9)', () => {
  test('http/json to OTEL_EXPORTER_OTLP_ENDPOINT: the demo task, its commands and their MCP calls carry the ledger traceparent', async () => {
    const rx = await startOtlpReceiver();
    try {
      const entries = await demo({
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'mhs-otlp-json-test',
      });
      expect(rx.requests.length).toBeGreaterThan(0);
      for (const r of rx.requests) {
        expect(r.method).toBe('POST');
        expect(r.path).toBe('/v1/traces');
        expect(r.contentType).toMatch(/^application\/json/);
      }
      const spans = rx.spans();
      expect(new Set(spans.map((s) => s.resource['service.name']))).toEqual(new Set(['mhs-otlp-json-test']));
      expectTraceOfLedger(entries, spans);
    } finally {
      await rx.close();
    }
  });

  test('http/protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the same trace, decoded from protobuf', async () => {
    const rx = await startOtlpReceiver();
    try {
      const entries = await demo({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/custom/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'mhs-otlp-proto-test',
      });
      expect(rx.requests.length).toBeGreaterThan(0);
      for (const r of rx.requests) {
        expect(r.path).toBe('/custom/traces'); // a traces endpoint is used as given (OTLP exporter spec)
        expect(r.contentType).toBe('application/x-protobuf');
      }
      const spans = rx.spans();
      expect(new Set(spans.map((s) => s.resource['service.name']))).toEqual(new Set(['mhs-otlp-proto-test']));
      expectTraceOfLedger(entries, spans);
    } finally {
      await rx.close();
    }
  });

  test('no OTLP endpoint configured: nothing is sent, not even to the default localhost:4318', async () => {
    // The SDK's default endpoint when only the protocol is set; empty values count as unset (OTel spec).
    const rx = await startOtlpReceiver(4318);
    try {
      const entries = await demo({
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'mhs-otlp-unset-test',
      });
      // The ledger still carries the task's traceparent (HOST-081): ids are propagated, only export is off.
      expect(entries.filter((e) => e.kind === 'command.intent').map((e) => e['traceparent'])).toHaveLength(4);
      expect(rx.requests).toEqual([]);
    } finally {
      await rx.close();
    }
  });
});
