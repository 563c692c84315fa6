// Guarantees (RFC 0239 over real HTTP against a real `mhs-host serve` on a real SQLite file): discovery advertises
// multiPartyConversation with maxParticipants below 64 and both council fixtures;
// conformance-multi-party-council waits (waiting-input) with the roster on conversation.opened, refuses a
// non-member's turn 422 conversation_speaker_not_participant unconsumed, and completes after a member's turn with
// opened → exchanged → closed; conformance-multi-party-council-oversize is refused 422 conversation_roster_exceeded
// at run creation and no run of it exists.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, logProblems, makeToken, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

let srv: Served;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  const db = tempDb();
  const token = await makeToken(db, 'client');
  srv = await serve(db, ['--no-workflows']);
  api = client(srv.url, token);
}, 120_000);

afterAll(async () => {
  expect(await srv.stop()).toBe(0);
});

const COUNCIL = 'conformance-multi-party-council';
const OVERSIZE = 'conformance-multi-party-council-oversize';

describe('the council fixtures over HTTP', () => {
  it('RFC 0239 §A-§C: roster carried, non-member refused unconsumed, member accepted, oversize refused', async () => {
    const doc = (await fetch(`${srv.url}/.well-known/openwop`).then((r) => r.json())) as any;
    expect(doc.conversationPrimitive).toBeUndefined(); // start/close suspend variants not built
    expect(doc.multiPartyConversation.supported).toBe(true);
    expect(doc.multiPartyConversation.maxParticipants).toBeLessThan(64);
    expect(doc.fixtures).toEqual(expect.arrayContaining([COUNCIL, OVERSIZE]));

    const created = await api.post('/v1/runs', { workflowId: COUNCIL });
    expect(created.status).toBe(201);
    const runId = created.body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-input');
    const opened = (await api.events(runId)).find((e) => e.type === 'conversation.opened')!;
    expect((opened.payload.participants as any[]).map((p) => p.agentId)).toEqual([
      'host:conformance-council-a',
      'host:conformance-council-b',
      'host:conformance-council-c',
    ]);

    const url = `/v1/runs/${runId}/interrupts/convo`;
    const refused = await api.post(url, {
      resumeValue: { role: 'agent', speakerId: 'host:conformance-intruder', content: 'a turn' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: 'conversation_speaker_not_participant',
      details: { speakerId: 'host:conformance-intruder' },
    });
    expect((await api.get(`/v1/runs/${runId}`)).body.status).toBe('waiting-input');
    expect((await api.events(runId)).some((e) => e.type === 'conversation.exchanged')).toBe(false);

    const member = { role: 'agent', speakerId: 'host:conformance-council-a', content: 'a turn' };
    expect((await api.post(url, { resumeValue: member })).status).toBe(200);
    const done = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status as string));
    expect(done.status).toBe('completed');
    const events = await api.events(runId);
    expect(logProblems(events)).toEqual([]);
    expect(events.map((e) => e.type).filter((t) => t.startsWith('conversation.'))).toEqual([
      'conversation.opened',
      'conversation.exchanged',
      'conversation.closed',
    ]);

    const oversize = await api.post('/v1/runs', { workflowId: OVERSIZE });
    expect(oversize.status).toBe(422);
    expect(oversize.body).toMatchObject({
      error: 'conversation_roster_exceeded',
      details: { maxParticipants: doc.multiPartyConversation.maxParticipants },
    });
    expect((await api.get(`/v1/runs?workflowId=${OVERSIZE}`)).body.runs).toEqual([]);
  });
});
