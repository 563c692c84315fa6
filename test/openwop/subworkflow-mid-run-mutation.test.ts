// Guarantees (RFC 0022 §B HVMAP-2, fixtures conformance-subworkflow-mid-run-mutation + -child), on a real host over a
// real SQLite file and its REST surface with the test seams on: the parent folds `currentPrdId` into the child once,
// at dispatch; while the child waits on its approval gate, `POST /v1/host/sample/test/runs/{parentRunId}/variables`
// really changes the parent's variable (snapshot, `variable.changed` in the log, still there when the parent ends,
// after a host restart, and in a fork from after the change), yet the child completes with
// `receivedPrdId === 'seeded-id'`, never 'mutated-id'. The seam refuses a bad body as a whole (400 validation_error,
// nothing written: no event, same variables) and a terminal run (409 conflict). The host advertises
// `subWorkflow.inputMapping` and lists both fixtures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { untilChild } from './agents-harness.js';
import { HostFixture, clock, expectValidEvents } from './service-test-kit.js';

type App = Awaited<ReturnType<typeof buildApp>>['app'];

const PARENT = 'conformance-subworkflow-mid-run-mutation';
const CHILD = 'conformance-subworkflow-mid-run-mutation-child';
const GATE = 'child-gate';

const fx = new HostFixture(() => Promise.resolve({}));
let host: OpenwopHost;
let app: App;
let auth: Record<string, string>;

/** (Re)builds the app over the fixture's current host, test seams on, with a client token. */
async function openApp(): Promise<void> {
  const tokens = createTokenStore(fx.db, clock);
  auth = { authorization: `Bearer ${(await tokens.add(`mid-run-${Date.now()}`, 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock, testSeams: true }));
}

beforeAll(async () => {
  host = await fx.open();
  await openApp();
});

afterAll(async () => {
  await app.close();
  await fx.close();
});

const post = (url: string, payload: unknown) =>
  app.inject({ method: 'POST', url, headers: auth, payload: payload as object });
const get = (url: string) => app.inject({ method: 'GET', url, headers: auth });
const seam = (runId: string) => `/v1/host/sample/test/runs/${runId}/variables`;

/** Starts the parent fixture over REST and waits until its child holds on the gate; both run ids. */
async function startUntilChildHolds(): Promise<{ parentId: string; childId: string }> {
  const created = await post('/v1/runs', { workflowId: PARENT });
  expect(created.statusCode).toBe(201);
  const parentId = created.json().runId as string;
  const childId = (await untilChild(host, parentId, 'waiting-approval'))!;
  expect(childId).toBeDefined();
  await untilPending(childId);
  return { parentId, childId };
}

/** Yields until `runId`'s gate interrupt is pending in this process (a resumed node registers it again, silently). */
async function untilPending(runId: string): Promise<void> {
  for (let i = 0; !host.runs.pendingInterrupts().some((p) => p.runId === runId && p.nodeId === GATE); i++) {
    if (i > 100_000) throw new Error(`no pending gate on ${runId}`);
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** Accepts the child's gate over REST (this host's approval body `{action}`) and waits for both runs to end. */
async function acceptAndFinish(parentId: string, childId: string): Promise<void> {
  const resolved = await post(`/v1/runs/${childId}/interrupts/${GATE}`, { action: 'accept' });
  expect(resolved.statusCode).toBe(200);
  expect(await host.runs.waitTerminal(childId)).toBe('completed');
  expect(await host.runs.waitTerminal(parentId)).toBe('completed');
}

const variablesOf = async (runId: string): Promise<Record<string, unknown>> =>
  (await get(`/v1/runs/${runId}`)).json().variables as Record<string, unknown>;
const changes = (events: readonly RunEvent[]) => events.filter((e) => e.type === 'variable.changed');

describe('conformance-subworkflow-mid-run-mutation (HVMAP-2 one-shot fold)', () => {
  it('the host advertises subWorkflow.inputMapping and lists the fixture pair', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/.well-known/openwop' })).json();
    expect(doc.subWorkflow).toEqual({ inputMapping: true });
    expect(doc.fixtures).toEqual(expect.arrayContaining([PARENT, CHILD]));
  });

  it('a parent mutation while the child waits changes the parent, not the already seeded child', async () => {
    const { parentId, childId } = await startUntilChildHolds();
    expect(await variablesOf(childId)).toEqual({ receivedPrdId: 'seeded-id' });

    const mutated = await post(seam(parentId), { variables: { currentPrdId: 'mutated-id' } });
    expect(mutated.statusCode).toBe(200);
    expect(mutated.json()).toEqual({ runId: parentId, variables: { currentPrdId: 'mutated-id' } });
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'mutated-id' });
    const [change] = changes(await host.store.events(parentId));
    expect(change!.nodeId).toBeUndefined();
    expect(change!.payload).toMatchObject({
      name: 'currentPrdId',
      previous: 'seeded-id',
      next: 'mutated-id',
      source: 'test-seam',
    });

    await acceptAndFinish(parentId, childId);
    expect(await variablesOf(childId)).toEqual({ receivedPrdId: 'seeded-id' });
    // The parent's own completion kept the mutation (the actor's bag, not only the row, was changed).
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'mutated-id' });
    await expectValidEvents(host, parentId);
    await expectValidEvents(host, childId);
  });

  it('the mutation is durable: after a host restart the parent still has it and the child still ends seeded', async () => {
    const { parentId, childId } = await startUntilChildHolds();
    expect((await post(seam(parentId), { variables: { currentPrdId: 'mutated-id' } })).statusCode).toBe(200);
    await app.close();
    host = await fx.reopen();
    await openApp();
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'mutated-id' });
    await untilPending(childId);
    await acceptAndFinish(parentId, childId);
    expect(await variablesOf(childId)).toEqual({ receivedPrdId: 'seeded-id' });
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'mutated-id' });
    expect(changes(await host.store.events(parentId))).toHaveLength(1);
  });
  it('a fork replays the mutation from the log: from after its variable.changed it has it, from before it does not', async () => {
    const { parentId, childId } = await startUntilChildHolds();
    expect((await post(seam(parentId), { variables: { currentPrdId: 'mutated-id' } })).statusCode).toBe(200);
    await acceptAndFinish(parentId, childId);
    const [change] = changes(await host.store.events(parentId));
    for (const [fromSeq, expected] of [
      [change!.sequence, 'seeded-id'],
      [change!.sequence + 1, 'mutated-id'],
    ] as const) {
      const forked = await post(`/v1/runs/${parentId}:fork`, { mode: 'branch', fromSeq });
      expect(forked.statusCode).toBe(201);
      const forkId = forked.json().runId as string;
      expect(await variablesOf(forkId)).toEqual({ currentPrdId: expected });
      expect((await post(`/v1/runs/${forkId}/cancel`, {})).statusCode).toBe(200);
    }
  });
});

describe('POST /v1/host/sample/test/runs/{runId}/variables refusals', () => {
  it('refuses a bad body as a whole with 400 validation_error and writes nothing', async () => {
    const { parentId, childId } = await startUntilChildHolds();
    const before = (await host.store.events(parentId)).length;
    const cases: Array<[unknown, string]> = [
      [[], ''],
      [{}, '/variables'],
      [{ variables: [] }, '/variables'],
      [{ variables: 'x' }, '/variables'],
      [{ variables: { currentPrdId: 'x' }, extra: true }, '/extra'],
      [{ variables: {} }, '/variables'],
      [{ variables: { currentPrdId: 7 } }, '/variables/currentPrdId'],
      [{ variables: { currentPrdId: null } }, '/variables/currentPrdId'],
      // One acceptable entry beside a refused one: neither is written.
      [{ variables: { currentPrdId: 'half', undeclared: 1 } }, '/variables/undeclared'],
    ];
    for (const [payload, path] of cases) {
      const res = await post(seam(parentId), payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toBe('validation_error');
      expect(res.json().details.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect(await host.store.events(parentId)).toHaveLength(before);
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'seeded-id' });
    await acceptAndFinish(parentId, childId);
    expect(await variablesOf(childId)).toEqual({ receivedPrdId: 'seeded-id' });
  });

  it('refuses an unknown run with 404 and a terminal run with 409 conflict', async () => {
    const unknown = await post(seam('run_nope'), { variables: { currentPrdId: 'x' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'not_found', details: { runId: 'run_nope' } });

    const { parentId, childId } = await startUntilChildHolds();
    await acceptAndFinish(parentId, childId);
    const events = (await host.store.events(parentId)).length;
    for (const runId of [parentId, childId]) {
      const res = await post(seam(runId), { variables: { currentPrdId: 'late' } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ error: 'conflict', details: { runId, status: 'completed' } });
    }
    expect(await host.store.events(parentId)).toHaveLength(events);
    expect(await variablesOf(parentId)).toEqual({ currentPrdId: 'seeded-id' });
  });
});
