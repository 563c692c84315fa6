// Guarantees (RFC 0026 §B over the real server process): `mhs-host serve --ai-script FILE` advertises
// `providerUsage {supported: true, costEstimates: false}` in a discovery document that validates; a
// `local.ai.envelope` run served over REST has exactly one `provider.usage` in `GET /v1/runs/{id}/events`, valid
// against the run-event schema and its payload $def, with the script's declared usage verbatim; the snapshot's
// `metrics.openwopCost.tokens` carries the same counts and validates against run-snapshot.schema.json.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { client, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';
import { oneNode } from './service-test-kit.js';

const running: Served[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

describe('serve --ai-script meters model calls (RFC 0026)', () => {
  it('advertises providerUsage and serves one valid provider.usage per call, rolled up in the snapshot', async () => {
    const db = tempDb();
    const token = await makeToken(db);
    const dir = mkdtempSync(join(tmpdir(), 'mhs-usage-serve-'));
    const answer = JSON.stringify({ type: 'vendor.mhs.note', payload: { text: 'hello' } });
    writeFileSync(
      join(dir, 'script.json'),
      JSON.stringify({ model: 'lab-model-2', turns: [{ final: answer, usage: { inputTokens: 42, outputTokens: 5 } }] }),
    );
    writeFileSync(
      join(dir, 'envelopes.json'),
      JSON.stringify({ 'vendor.mhs.note': { type: 'object', properties: { text: { type: 'string' } } } }),
    );
    const args = ['--no-mhs', '--no-workflows', '--ai-script', join(dir, 'script.json')];
    const srv = await serve(db, [...args, '--envelopes', join(dir, 'envelopes.json')]);
    running.push(srv);
    const c = client(srv.url, token);
    const doc = (await c.get('/.well-known/openwop')).body;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.providerUsage).toEqual({ supported: true, costEstimates: false });

    const wf = oneNode('note', {
      id: 'gen',
      name: 'gen',
      typeId: 'local.ai.envelope',
      config: { envelopeType: 'vendor.mhs.note', systemPrompt: 'Write a note.', userMessage: 'pumps' },
    });
    expect((await c.post('/v1/workflows', wf)).status).toBe(201);
    const run = await c.post('/v1/runs', { workflowId: 'note' });
    const snap = await c.until(run.body.runId, (s) => s.status === 'completed' || s.status === 'failed');
    expect(snap.status).toBe('completed');
    const events = await c.events(run.body.runId);
    const usage = events.filter((e) => e.type === 'provider.usage');
    expect(usage).toHaveLength(1);
    expect(openwopSchemas().checkEvent(usage[0])).toEqual([]);
    expect(usage[0]).toMatchObject({
      nodeId: 'gen',
      payload: { provider: 'scripted', model: 'lab-model-2', inputTokens: 42, outputTokens: 5, totalTokens: 47 },
    });
    expect(openwopSchemas().check(schemaId('run-snapshot'), snap)).toEqual([]);
    expect(snap.metrics).toEqual({
      openwopCost: { tokens: { input: 42, output: 5 }, provider: 'scripted', model: 'lab-model-2' },
    });
  });
});
