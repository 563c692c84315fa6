// Guarantees (OpenWOP v2 events.md; schemas/v2/run-event-payloads.schema.json, RFC 0171 §A.4: the root `_typeIndex`
// is normative and every payload definition is closed), over real HTTP against `mhs-host serve` on SQLite and, when
// MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: every event the v2 poll serves for runs that complete,
// fail, suspend and resume (accepted, rejected and timed-out approvals), dispatch a child and breach a cap has a
// payload valid against the definition the normative index names for its v2 type, with one documented exception
// pinned to its exact reason (so a change fails here): `orchestrator.decided` (the vendored v2
// `orchestrator-decision.schema.json` puts `additionalProperties: false` at a root with no `properties`, so it rejects
// every decision). Host fields with no v2 seat (`interrupt.resolved`'s `action` and `decidedBy`) are left out of the
// v2 payload and kept on the v1 read of the same event; the resolution's v2 seats are read off them (issue 17):
// `resolvedBy` is the resolver's api-key Subject, `decision` `granted` for an accept and `rejected` for a reject or a
// timeout (which has no `resolvedBy`), on `interrupt.resolved` and on `approval.received`, which now names the
// `interruptId` it resolved. Engine ids the definition types as tenant-bound are bound (`local/…`), a decimal-string
// `engineVersion` is an integer.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { ROOT, makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems, waitForV2Status } from './v2-kit.js';

const V2 = { version: '2' };
const INDEX = (
  JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/schemas/v2/run-event-payloads.schema.json'), 'utf8')) as {
    _typeIndex: { properties: Record<string, { $ref: string }> };
  }
)._typeIndex.properties;

/** Problems of an event's payload against the definition the normative index names for its v2 type. */
function payloadProblems(e: any): string[] {
  const ref = INDEX[e.type]?.$ref;
  if (!ref) return [`${e.type}: no definition in the normative _typeIndex`];
  return v2Problems(`run-event-payloads${ref}`, e.payload).map((p) => `${e.type}#${e.sequence} ${p}`);
}

describe.each(BACKENDS)('v2 event payloads against the vendored contract on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (body: unknown) => call(srv.url, 'POST', '/runs', { token, ...V2, body });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--openwop-v2']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('every served payload of completed, failed, suspended, dispatching and capped runs is valid', async () => {
    const seen: any[] = [];
    for (const workflowId of [
      'conformance-noop',
      'conformance-multi-node',
      'conformance-failure',
      'conformance-dispatch-loop',
    ]) {
      const created = await post({ workflowId });
      expect(created.status, workflowId).toBe(201);
      seen.push(...(await pollToEnd(srv.url, created.body.eventsUrl, token)).events);
    }
    const capped = await post({
      workflowId: 'conformance-cap-breach',
      configurable: { version: 1, run: { recursionLimit: 3 } },
    });
    seen.push(...(await pollToEnd(srv.url, capped.body.eventsUrl, token)).events);
    const gated = await post({ workflowId: 'conformance-approval' });
    await waitForV2Status(srv.url, gated.body.eventsUrl, token, 'waiting-approval');
    const resolved = await call(srv.url, 'POST', `${gated.body.statusUrl}/interrupts/gate`, {
      token,
      ...V2,
      body: { resumeValue: { action: 'accept' } },
    });
    expect(resolved.status).toBe(200);
    const accepted = (await pollToEnd(srv.url, gated.body.eventsUrl, token)).events;
    seen.push(...accepted);
    const rejectedRun = await post({ workflowId: 'conformance-approval' });
    await waitForV2Status(srv.url, rejectedRun.body.eventsUrl, token, 'waiting-approval');
    const rejecting = await call(srv.url, 'POST', `${rejectedRun.body.statusUrl}/interrupts/gate`, {
      token,
      ...V2,
      body: { resumeValue: { action: 'reject' } },
    });
    expect(rejecting.status).toBe(200);
    const rejected = (await pollToEnd(srv.url, rejectedRun.body.eventsUrl, token)).events;
    seen.push(...rejected);
    const timedOutRun = await post({ workflowId: 'conformance-approval-timeout' });
    const timedOut = (await pollToEnd(srv.url, timedOutRun.body.eventsUrl, token)).events;
    seen.push(...timedOut);

    const types = new Set(seen.map((e) => e.type));
    for (const t of [
      'run.started',
      'run.completed',
      'run.failed',
      'node.started',
      'node.completed',
      'node.failed',
      'cap.breached',
      'interrupt.requested',
      'interrupt.resolved',
      'approval.received',
      'orchestrator.decided',
      'node.dispatched',
      'workflow-chain.event',
    ])
      expect(types, t).toContain(t);
    const problems = seen.flatMap((e) => payloadProblems(e).map((p) => p.replace(/#\d+ /, ' ')));
    expect(new Set(problems)).toEqual(new Set(['orchestrator.decided /decision must NOT have additional properties']));
    // The defect is the schema's: each decision is valid against the branch its kind names.
    for (const e of seen.filter((x) => x.type === 'orchestrator.decided'))
      expect(['next-worker', 'terminate']).toContain(e.payload.decision.kind);

    const started = seen.find((e) => e.type === 'run.started');
    expect(started.payload.engineVersion).toBe(1);
    const chain = seen.find((e) => e.type === 'workflow-chain.event');
    expect(chain.payload.parentRunId).toMatch(/^local\/run-/);

    // The resolution's v2 seats, on both resolution events of each approval.
    const me = await call(srv.url, 'GET', `/runs/${encodeURIComponent(gated.body.runId)}`, { token, ...V2 });
    const subject = me.body.owner.subject;
    expect(subject).toMatchObject({ issuer: expect.any(String), lane: 'api-key', kind: 'user' });
    for (const [events, decision, by] of [
      [accepted, 'granted', subject],
      [rejected, 'rejected', subject],
      [timedOut, 'rejected', undefined],
    ] as const) {
      const res = events.find((e) => e.type === 'interrupt.resolved');
      const rec = events.find((e) => e.type === 'approval.received');
      expect(res.payload).toMatchObject({ kind: 'approval', decision });
      expect(rec.payload).toMatchObject({ kind: 'approval', decision, interruptId: res.payload.interruptId });
      expect(res.payload.resolvedBy).toEqual(by);
      expect(rec.payload.resolvedBy).toEqual(by);
    }

    // v1 reads the same event as the engine wrote it.
    const v2Resolved = accepted.find((e) => e.type === 'interrupt.resolved');
    expect(v2Resolved.payload).not.toHaveProperty('action');
    expect(v2Resolved.payload).not.toHaveProperty('decidedBy');
    expect(v2Resolved.payload.interruptId).toMatch(/^local\//);
    const engineRunId = String(gated.body.runId).replace(/^local\/([a-z]+)-/, '$1_');
    const v1 = await call(srv.url, 'GET', `/v1/runs/${engineRunId}/events/poll?timeout=0`, { token });
    expect(v1.status).toBe(200);
    const v1Resolved = v1.body.events.find((e: any) => e.type === 'interrupt.resolved');
    expect(v1Resolved.sequence).toBe(v2Resolved.sequence);
    expect(v1Resolved.payload).toMatchObject({ action: 'accept', decidedBy: expect.any(String) });
    expect(v1Resolved.payload.interruptId).not.toMatch(/^local\//);
    const v1Received = v1.body.events.find((e: any) => e.type === 'approval.received');
    expect(v1Received.payload).toMatchObject({ action: 'accept', interruptId: v1Resolved.payload.interruptId });
  });
});
