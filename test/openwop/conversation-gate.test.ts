// Guarantees (core.conversationGate, RFC 0005; multi-party roster RFC 0101 / RFC 0239), on a real host over a real
// SQLite file, through the REST surface (Fastify inject) where the fixtures speak of HTTP status codes:
// (1) conformance-multi-party-council: conversation.opened carries the configured roster unchanged; the run waits
//     (waiting-input) on a conversation.exchange interrupt; a turn from a non-member is refused
//     422 conversation_speaker_not_participant with details.speakerId and is not consumed (still waiting, no
//     interrupt.resolved, no conversation.exchanged); a member's turn then resolves it and the run completes with
//     exactly opened → exchanged → closed, the turn in the snapshot's conversation channel.
// (2) conformance-multi-party-council-oversize: run creation is refused 422 conversation_roster_exceeded with the
//     advertised maxParticipants (below 64), and no run exists afterwards; both fixtures are advertised.
// (3) several turns: turnIndex strictly increases, a malformed turn (agent turn without speakerId) is a 400 that
//     changes nothing, `close: true` ends the conversation (goal-reached), `maxTurns` ends it (max-turns), a turn
//     not given within timeoutMs ends it (timeout); a gate without a roster accepts any speaker (RFC 0005);
//     mockAutoResume supplies the turns itself.
// (4) a host restarted mid-conversation resumes with the same transcript and no duplicated event (SQLite, and
//     PostgreSQL when MHS_TEST_PG_URL is set); a crash between a turn's resolution and its conversation.exchanged
//     records the turn once; a replay fork projects the source's conversation channel.
// (5) bad rosters/lifecycles are refused at registration with validation_error paths.
// Every event of every run validates against the vendored schemas.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { MAX_CONVERSATION_PARTICIPANTS } from '../../src/openwop/nodes/conversation-gate.js';
import { openwopDir } from '../../src/openwop/schemas.js';
import type { RunEvent, WorkflowDefinition } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import {
  clock,
  closedAfterEach,
  expectValidEvents,
  HostFixture,
  oneNode,
  resolveWhenPending,
  tempDbFile,
  waitForEvent,
} from './service-test-kit.js';

const COUNCIL = 'conformance-multi-party-council';
const OVERSIZE = 'conformance-multi-party-council-oversize';
const ROSTER = ['host:conformance-council-a', 'host:conformance-council-b', 'host:conformance-council-c'];

let db: Db;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;

beforeAll(async () => {
  db = await openDb(tempDbFile('mhs-convo-'));
  host = await createOpenwopHost({ db, clock, workflowsDir: false });
  const tokens = createTokenStore(db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('convo', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock }));
});

afterAll(async () => {
  await app.close();
  await host.close();
  await db.close();
});

const post = async (url: string, payload: unknown) => {
  const res = await app.inject({ method: 'POST', url, headers: auth, payload: payload as Record<string, unknown> });
  return { status: res.statusCode, body: res.json() as any };
};
const get = async (url: string) => (await app.inject({ method: 'GET', url, headers: auth })).json() as any;
const turn = (runId: string, resumeValue: Record<string, unknown>, nodeId = 'convo') =>
  post(`/v1/runs/${runId}/interrupts/${nodeId}`, { resumeValue });
const ofType = (events: readonly RunEvent[], prefix: string) => events.filter((e) => e.type.startsWith(prefix));

/** Starts `workflowId` over REST and waits for its `n`-th conversation.exchange interrupt (0-based). */
async function startAsked(workflowId: string): Promise<string> {
  const created = await post('/v1/runs', { workflowId });
  expect(created.status).toBe(201);
  const runId = created.body.runId as string;
  await waitForEvent(host, runId, (e) => e.type === 'interrupt.requested');
  return runId;
}

async function askedTimes(runId: string, n: number): Promise<void> {
  await waitForEvent(
    host,
    runId,
    (e) => e.type === 'interrupt.requested' && (e.payload.data as { turnIndex?: number }).turnIndex === n - 1,
  );
}

function gate(id: string, config: Record<string, unknown>): WorkflowDefinition {
  return oneNode(
    id,
    { id: 'convo', typeId: 'core.conversationGate', config: { lifecycle: 'open-exchange-close', ...config } },
    { channels: { conversation: { schema: { type: 'array' }, reducer: 'message' } } },
  );
}

describe('RFC 0239 council fixture over REST', () => {
  it('carries the roster, refuses a non-member unconsumed (422), then accepts a member and closes', async () => {
    const runId = await startAsked(COUNCIL);
    let events = await host.store.events(runId);
    const opened = events.find((e) => e.type === 'conversation.opened')!;
    expect((opened.payload.participants as Array<{ agentId: string }>).map((p) => p.agentId)).toEqual(ROSTER);
    const snap = await get(`/v1/runs/${runId}`);
    expect(snap.status).toBe('waiting-input');
    expect(snap.pendingInterrupts).toMatchObject([
      { nodeId: 'convo', kind: 'conversation.exchange', data: { conversationId: opened.payload.conversationId } },
    ]);

    const refused = await turn(runId, { role: 'agent', speakerId: 'host:conformance-intruder', content: 'hi' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: 'conversation_speaker_not_participant',
      details: { speakerId: 'host:conformance-intruder' },
    });
    expect((await get(`/v1/runs/${runId}`)).status).toBe('waiting-input');
    events = await host.store.events(runId);
    expect(events.filter((e) => e.type === 'interrupt.resolved' || e.type === 'conversation.exchanged')).toEqual([]);

    const accepted = await turn(runId, { role: 'agent', speakerId: ROSTER[0], content: 'a turn' });
    expect(accepted.status).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    events = await expectValidEvents(host, runId);
    expect(ofType(events, 'conversation.').map((e) => [e.type, e.payload.turnIndex ?? e.payload.turnCount])).toEqual([
      ['conversation.opened', undefined],
      ['conversation.exchanged', 0],
      ['conversation.closed', 1],
    ]);
    const id = opened.payload.conversationId;
    expect(events.find((e) => e.type === 'conversation.closed')!.payload).toEqual({
      conversationId: id,
      reason: 'max-turns',
      turnCount: 1,
    });
    const done = await get(`/v1/runs/${runId}`);
    expect(done.channels.conversation).toEqual([
      {
        messageId: `${id}:0`,
        conversationId: id,
        turnIndex: 0,
        role: 'agent',
        speakerId: ROSTER[0],
        content: 'a turn',
      },
    ]);
    expect(done.nodeStates.convo.outputs).toMatchObject({ conversationId: id, turnCount: 1, closeReason: 'max-turns' });
  });

  it('refuses the 64-member roster at run creation (422, maxParticipants below 64) and creates no run', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/.well-known/openwop' })).json() as any;
    expect(doc.conversationPrimitive).toBeUndefined(); // start/close suspend variants not built
    expect(doc.multiPartyConversation).toEqual({ supported: true, maxParticipants: MAX_CONVERSATION_PARTICIPANTS });
    expect(MAX_CONVERSATION_PARTICIPANTS).toBeLessThan(64);
    expect(doc.fixtures).toEqual(expect.arrayContaining([COUNCIL, OVERSIZE]));
    const def = JSON.parse(readFileSync(join(openwopDir(), 'fixtures', `${OVERSIZE}.json`), 'utf8')) as any;
    expect(def.nodes[0].config.participants).toHaveLength(64);

    const refused = await post('/v1/runs', { workflowId: OVERSIZE });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: 'conversation_roster_exceeded',
      details: { maxParticipants: MAX_CONVERSATION_PARTICIPANTS },
    });
    expect((await get(`/v1/runs?workflowId=${OVERSIZE}`)).runs).toEqual([]);
  });
});

describe('conversation turns', () => {
  it('numbers turns 0,1,2; a malformed turn is a 400 that changes nothing; close: true ends it', async () => {
    await host.catalog.register(
      gate('convo-close', { participants: ROSTER.map((agentId) => ({ agentId })), maxTurns: 5 }),
    );
    const runId = await startAsked('convo-close');
    expect((await turn(runId, { role: 'agent', speakerId: ROSTER[1], content: 'one' })).status).toBe(200);
    await askedTimes(runId, 2);
    // RFC 0101: a human interjection needs no speakerId; an agent turn does.
    expect((await turn(runId, { role: 'user', content: 'two' })).status).toBe(200);
    await askedTimes(runId, 3);
    const bad = await turn(runId, { role: 'agent', content: 'no speaker' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'validation_error', details: { path: '/resumeValue/speakerId' } });
    expect((await turn(runId, { speakerId: ROSTER[2], content: 'three', close: true })).status).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await expectValidEvents(host, runId);
    expect(ofType(events, 'conversation.exchanged').map((e) => e.payload.turnIndex)).toEqual([0, 1, 2]);
    expect(ofType(events, 'conversation.exchanged').map((e) => e.payload.outcome)).toEqual([
      { role: 'agent', speakerId: ROSTER[1], content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'agent', speakerId: ROSTER[2], content: 'three' },
    ]);
    expect(events.find((e) => e.type === 'conversation.closed')!.payload).toMatchObject({
      reason: 'goal-reached',
      turnCount: 3,
    });
    expect((await get(`/v1/runs/${runId}`)).channels.conversation.map((m: any) => m.content)).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it('without a roster any speaker may talk (RFC 0005); maxTurns closes it; a lone close adds no turn', async () => {
    await host.catalog.register(gate('convo-open', { maxTurns: 3 }));
    const runId = await startAsked('convo-open');
    expect((await turn(runId, { speakerId: 'host:anyone', content: 'x' })).status).toBe(200);
    await askedTimes(runId, 2);
    expect((await turn(runId, { close: true })).status).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await expectValidEvents(host, runId);
    expect(events.find((e) => e.type === 'conversation.opened')!.payload.participants).toBeUndefined();
    expect(events.find((e) => e.type === 'conversation.closed')!.payload).toMatchObject({
      reason: 'goal-reached',
      turnCount: 1,
    });

    await host.catalog.register(gate('convo-max', { maxTurns: 2 }));
    const r2 = await startAsked('convo-max');
    await turn(r2, { content: 'a' });
    await askedTimes(r2, 2);
    await turn(r2, { content: 'b' });
    expect(await host.runs.waitTerminal(r2)).toBe('completed');
    const closed = (await expectValidEvents(host, r2)).find((e) => e.type === 'conversation.closed')!;
    expect(closed.payload).toMatchObject({ reason: 'max-turns', turnCount: 2 });
  });

  it('a turn not given within timeoutMs closes the conversation (reason timeout)', async () => {
    await host.catalog.register(gate('convo-timeout', { timeoutMs: 20, maxTurns: 3 }));
    const { run } = await host.runs.createRun({ workflowId: 'convo-timeout' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(host, run.runId);
    expect(events.find((e) => e.type === 'conversation.closed')!.payload).toMatchObject({
      reason: 'timeout',
      turnCount: 0,
    });
  });

  it('mockAutoResume: the host supplies turnCount turns, rotating through the roster', async () => {
    await host.catalog.register(
      gate('convo-mock', { mockAutoResume: true, turnCount: 3, participants: ROSTER.map((agentId) => ({ agentId })) }),
    );
    const { run } = await host.runs.createRun({ workflowId: 'convo-mock' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(host, run.runId);
    expect(events.some((e) => e.type === 'interrupt.requested')).toBe(false);
    expect(ofType(events, 'conversation.exchanged').map((e) => (e.payload.outcome as any).speakerId)).toEqual(ROSTER);
    expect(events.find((e) => e.type === 'conversation.closed')!.payload).toMatchObject({ turnCount: 3 });
  });

  it('refuses bad rosters and lifecycles at registration (validation_error with paths)', async () => {
    const refused = async (config: Record<string, unknown>) => {
      try {
        await host.catalog.register(gate('convo-bad', config));
      } catch (e) {
        return (e as { code: string; details: { errors?: Array<{ path: string }> } }).details.errors?.map(
          (x) => x.path,
        );
      }
      return 'accepted';
    };
    expect(await refused({ participants: [{ agentId: 'host:solo' }] })).toEqual(['/nodes/0/config/participants']);
    expect(await refused({ participants: [{ agentId: 'host:a1' }, { agentId: 'host:a1' }] })).toEqual([
      '/nodes/0/config/participants',
    ]);
    expect(await refused({ lifecycle: 'forever' })).toEqual(['/nodes/0/config/lifecycle']);
    expect(await refused({ maxTurns: 0 })).toEqual(['/nodes/0/config/maxTurns']);
  });
});

describe('replay fork', () => {
  it('a replay fork of a finished conversation projects the same conversation channel (RFC 0005 §G)', async () => {
    await host.catalog.register(
      gate('convo-fork', { participants: ROSTER.map((agentId) => ({ agentId })), maxTurns: 2 }),
    );
    const runId = await startAsked('convo-fork');
    await turn(runId, { speakerId: ROSTER[0], content: 'first' });
    await askedTimes(runId, 2);
    await turn(runId, { speakerId: ROSTER[2], content: 'second' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const fork = await post(`/v1/runs/${runId}:fork`, { mode: 'replay' });
    expect(fork.status).toBe(201);
    expect(await host.runs.waitTerminal(fork.body.runId)).toBe('completed');
    await expectValidEvents(host, fork.body.runId);
    const source = (await get(`/v1/runs/${runId}`)).channels;
    expect(source.conversation).toHaveLength(2);
    expect((await get(`/v1/runs/${fork.body.runId}`)).channels).toEqual(source);
  });
});

describe('durability', () => {
  const fixtures = closedAfterEach<HostFixture>();

  it.each(BACKENDS)(
    'on $name a host restarted mid-conversation resumes the same transcript, no duplicate event',
    async (backend) => {
      const store = await backend.fresh();
      const f = new HostFixture(async () => ({}), store.location);
      // Closed before its store is removed (closedAfterEach runs first).
      onTestFinished(() => store.cleanup());
      fixtures.push(f);
      const h1 = await f.open();
      await h1.catalog.register(
        gate('convo-restart', { participants: ROSTER.map((agentId) => ({ agentId })), maxTurns: 3 }),
      );
      const { run } = await h1.runs.createRun({ workflowId: 'convo-restart' }, { principal: 't' });
      const runId = run.runId;
      await resolveWhenPending(h1, runId, { resumeValue: { speakerId: ROSTER[0], content: 'before' } });
      await waitForEvent(h1, runId, (e) => e.type === 'interrupt.requested' && (e.payload.data as any).turnIndex === 1);
      const before = await h1.store.events(runId);

      const h2 = await f.reopen();
      // The resumed node re-registers turn 1's interrupt (same key) and still refuses an intruder unconsumed.
      await expect(
        (async () => {
          for (;;) {
            const p = h2.runs.pendingInterrupts().find((x) => x.runId === runId);
            if (p)
              return h2.runs.resolveInterrupt(
                runId,
                p.nodeId,
                { resumeValue: { speakerId: 'host:x-intruder', content: 'no' } },
                { principal: 't' },
              );
            await new Promise<void>((r) => setImmediate(r));
          }
        })(),
      ).rejects.toMatchObject({ code: 'conversation_speaker_not_participant' });
      await resolveWhenPending(h2, runId, { resumeValue: { speakerId: ROSTER[1], content: 'after' } });
      await waitForEvent(h2, runId, (e) => e.type === 'interrupt.requested' && (e.payload.data as any).turnIndex === 2);
      await resolveWhenPending(h2, runId, { resumeValue: { speakerId: ROSTER[2], content: 'last' } });
      expect(await h2.runs.waitTerminal(runId)).toBe('completed');

      const events = await expectValidEvents(h2, runId);
      expect(events.slice(0, before.length)).toEqual(before);
      const count = (type: string) => events.filter((e) => e.type === type).length;
      expect([count('conversation.opened'), count('conversation.closed'), count('interrupt.requested')]).toEqual([
        1, 1, 3,
      ]);
      const keys = events.filter((e) => e.type === 'interrupt.requested').map((e) => e.payload.key);
      expect(new Set(keys).size).toBe(3);
      expect(
        ofType(events, 'conversation.exchanged').map((e) => [e.payload.turnIndex, (e.payload.outcome as any).content]),
      ).toEqual([
        [0, 'before'],
        [1, 'after'],
        [2, 'last'],
      ]);
      const snap = await h2.runs.snapshot(runId);
      expect(snap.channels?.conversation?.map((m: any) => m.speakerId)).toEqual(ROSTER);
    },
  );

  it('a crash after a turn was resolved but before conversation.exchanged was recorded records it once', async () => {
    const f = new HostFixture(async () => ({}));
    fixtures.push(f);
    const h1 = await f.open();
    await h1.catalog.register(gate('convo-crash', { maxTurns: 2 }));
    const { run } = await h1.runs.createRun({ workflowId: 'convo-crash' }, { principal: 't' });
    const runId = run.runId;
    await resolveWhenPending(h1, runId, { resumeValue: { content: 'kept' } });
    await waitForEvent(h1, runId, (e) => e.type === 'interrupt.requested' && (e.payload.data as any).turnIndex === 1);
    const exchanged = (await h1.store.events(runId)).find((e) => e.type === 'conversation.exchanged')!;
    await f.close();

    // Undo every append from conversation.exchanged on, as if the process died right after the resolution
    // committed (the table is append-only: lift the delete trigger for this one statement, then put it back).
    const raw = await openDb(f.file);
    const trig = (
      await raw.all<{ name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'openwop_events' AND sql LIKE '%DELETE%'",
      )
    )[0]!;
    await raw.exec(`DROP TRIGGER ${trig.name}`);
    await raw.run('DELETE FROM openwop_events WHERE run_id = ? AND sequence >= ?', [runId, exchanged.sequence]);
    await raw.run('UPDATE openwop_runs SET last_seq = ? WHERE run_id = ?', [exchanged.sequence - 1, runId]);
    await raw.exec(trig.sql);
    await raw.close();
    const cut = await (async () => {
      const db2 = await openDb(f.file);
      try {
        return (
          await db2.all<{ type: string }>('SELECT type FROM openwop_events WHERE run_id = ? ORDER BY sequence', [runId])
        ).map((r) => r.type);
      } finally {
        await db2.close();
      }
    })();
    expect(cut.slice(-2)).toEqual(['interrupt.resolved', 'node.resumed']);

    const h2 = await f.open();
    await resolveWhenPending(h2, runId, { resumeValue: { content: 'second' } });
    expect(await h2.runs.waitTerminal(runId)).toBe('completed');
    const events = await expectValidEvents(h2, runId);
    expect(
      ofType(events, 'conversation.exchanged').map((e) => [e.payload.turnIndex, (e.payload.outcome as any).content]),
    ).toEqual([
      [0, 'kept'],
      [1, 'second'],
    ]);
    expect(events.filter((e) => e.type === 'interrupt.resolved')).toHaveLength(2);
  });
});
