// Guarantees (v2 idempotency.md §"Layer 2": Provider key, Attempts; seam `http.remote-run`), with the real
// `mhs.remoteRun` node, the real effect guard over a real SQLite file (and PostgreSQL when MHS_TEST_PG_URL is set), and
// a real HTTP peer: the peer's `POST /v1/runs` is one effect record, completed, whose provider key is the
// `Idempotency-Key` the peer received; the node re-executed after a restart is answered from the record (the peer sees
// no second request); an attempt whose process died mid-call is sent again as attempt 2 of the same effect under the
// same key (the peer dedupes on it), the dead attempt released; a peer that takes the request and never answers is
// given up per attempt (not waited on forever): two attempts under the same key, then `external_call_failed`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { remoteRunNode } from '../../src/openwop/causation/remote-run-node.js';
import { TRANSPORT_ATTEMPTS } from '../../src/openwop/effects/http-effect.js';
import { NodeFailure } from '../../src/openwop/node-registry.js';
import { effectGuard } from '../../src/openwop/effects/effect-guard.js';
import { RunEffectRecords, ensureRunEffects } from '../../src/openwop/effects/effect-records.js';
import type { NodeContext } from '../../src/openwop/node-registry.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';

const clock = new RealClock();
const scope = { runId: 'run_parent', nodeId: 'remote', activation: 1 };

/** A peer that answers `POST /v1/runs` with 201 and keeps every Idempotency-Key it received. */
let peer: http.Server;
let peerUrl: string;
const keys: string[] = [];
beforeAll(async () => {
  peer = http.createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']));
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ runId: 'run_remote', status: 'pending' }));
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', () => r()));
  peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
});
/** A peer that reads each request and never answers (its keys kept); closed with every connection it holds. */
let stalled: http.Server;
let stalledUrl: string;
const stalledKeys: string[] = [];
beforeAll(async () => {
  stalled = http.createServer((req) => {
    stalledKeys.push(String(req.headers['idempotency-key']));
    req.resume();
  });
  await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', () => r()));
  stalledUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => peer.close(() => r()));
  stalled.closeAllConnections();
  await new Promise<void>((r) => stalled.close(() => r()));
});

/** The node's context for one execution: its own history, the guard over `records`. */
function context(records: RunEffectRecords): NodeContext {
  const history: RunEvent[] = [];
  let n = 0;
  return {
    ...scope,
    node: { id: 'remote', typeId: 'mhs.remoteRun', name: 'remote', config: { peer: 'b', workflowId: 'wf' } },
    inputs: {},
    variables: {},
    resumed: false,
    history,
    signal: new AbortController().signal,
    clock,
    traceparent: undefined,
    emit: async (inputs: Array<{ type: string; payload: Record<string, unknown> }>) => {
      const out = inputs.map((i) => ({ ...i, eventId: `evt_${++n}`, runId: scope.runId }) as unknown as RunEvent);
      history.push(...out);
      return out;
    },
    effects: effectGuard(records, scope, async () => false),
  } as unknown as NodeContext;
}

describe.each(BACKENDS)('mhs.remoteRun as a Layer-2 effect on $name', (backend) => {
  let h: StoreHandle;
  let db: Db;
  afterEach(async () => {
    await db?.close();
    await h?.cleanup();
    keys.length = 0;
  });

  /** A fresh store with the effect table, and the node sending to the peer at `url`. */
  async function setup(url: string, attemptTimeoutMs?: number) {
    h = await backend.fresh();
    db = await openDb(h.location);
    await ensureRunEffects(db);
    const records = new RunEffectRecords(db, clock);
    const node = remoteRunNode({
      hostId: 'host-a',
      peers: { b: { url, token: 't' } },
      wellKnownUrl: () => undefined,
      ...(attemptTimeoutMs !== undefined ? { attemptTimeoutMs } : {}),
    });
    return { records, node };
  }

  it('one completed record keyed by the Idempotency-Key; re-executed: no second request; a dead attempt retried', async () => {
    const { records, node } = await setup(peerUrl);
    const first = await node.execute(context(records));
    expect(first.outputs).toMatchObject({ remoteRunId: 'run_remote', remoteStatus: 'pending' });
    expect(keys).toEqual(['host-a:run_parent:remote:1']);
    const rows = await records.forRun('run_parent');
    expect(rows.map((r) => [r.seam, r.attempt, r.state, r.providerKey])).toEqual([
      ['http.remote-run', 1, 'completed', 'host-a:run_parent:remote:1'],
    ]);
    // Re-executed (a restart before the node's outcome was logged): answered from the record.
    expect((await node.execute(context(records))).outputs).toEqual(first.outputs);
    expect(keys).toHaveLength(1);

    // An attempt left claimed by a process that died mid-call is sent again, under the same key.
    await db.run(`UPDATE openwop_run_effects SET state = 'claimed', outcome = NULL WHERE effect_id = ?`, [
      rows[0]!.effectId,
    ]);
    await node.execute(context(records));
    expect(keys).toEqual(['host-a:run_parent:remote:1', 'host-a:run_parent:remote:1']);
    expect((await records.forRun('run_parent')).map((r) => [r.effectId, r.attempt, r.state])).toEqual([
      [rows[0]!.effectId, 1, 'released'],
      [rows[0]!.effectId, 2, 'completed'],
    ]);
  });

  it('a peer that never answers is given up per attempt: two attempts under one key, then external_call_failed', async () => {
    const { records, node } = await setup(stalledUrl, 300);
    stalledKeys.length = 0;
    const err = await node.execute(context(records)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NodeFailure);
    expect((err as NodeFailure).code).toBe('external_call_failed');
    expect(stalledKeys).toEqual(Array(TRANSPORT_ATTEMPTS).fill('host-a:run_parent:remote:1'));
    const rows = await records.forRun('run_parent');
    expect(rows.map((r) => r.attempt)).toEqual([1, 2]);
    expect(new Set(rows.map((r) => r.effectId)).size).toBe(1);
    expect(rows.some((r) => r.state === 'completed')).toBe(false);
  });
});
