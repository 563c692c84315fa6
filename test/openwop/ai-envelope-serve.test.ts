// Guarantees (RFC 0144 wiring): `mhs-host serve --prompts DIR --ai-script FILE` installs the promptLibrary and
// aiEnvelope families in the real server process: the discovery document advertises them and validates, a bad
// template file is reported with its stable code while the others load, the conformance-prompt-all-four-kinds
// fixture completes over REST, and a `local.ai.envelope` node returns the scripted model's envelope. The model call is
// metered (RFC 0026 §B): `providerUsage {supported: true, costEstimates: false}` is advertised, the run has exactly
// one `provider.usage` event, valid against the run-event schema, with the script's declared usage verbatim, and the
// snapshot's `metrics.openwopCost` (which validates) and the node's `usage` output (AiEnvelopeResult.usage) carry the
// same counts. Without the flags neither family (nor providerUsage) is advertised.
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

function files(entries: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-serve-fam-'));
  for (const [name, v] of Object.entries(entries))
    writeFileSync(join(dir, name), typeof v === 'string' ? v : JSON.stringify(v));
  return dir;
}

describe('serve with host service families', () => {
  it('advertises promptLibrary and aiEnvelope, runs the prompt fixture and a local.ai.envelope node', async () => {
    const db = tempDb();
    const token = await makeToken(db);
    const prompts = files({
      'ok.json': { templateId: 'acme.note', version: '1.0.0', kind: 'user', text: 'note' },
      'bad.json': { templateId: 'acme.bad', kind: 'user' },
    });
    const dir = files({
      'script.json': {
        model: 'lab-model-2',
        turns: [
          {
            final: JSON.stringify({ type: 'vendor.mhs.note', payload: { text: 'hello' } }),
            usage: { inputTokens: 42, outputTokens: 5 },
          },
        ],
      },
      'envelopes.json': {
        'vendor.mhs.note': { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      },
    });
    const srv = await serve(db, [
      '--no-mhs',
      '--no-workflows',
      '--prompts',
      prompts,
      '--ai-script',
      join(dir, 'script.json'),
      '--envelopes',
      join(dir, 'envelopes.json'),
    ]);
    running.push(srv);
    expect(srv.output()).toMatch(/bad\.json not loaded: prompt_template_invalid/);
    const c = client(srv.url, token);
    const doc = (await c.get('/.well-known/openwop')).body;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.prompts.supported).toBe(true);
    expect(doc.promptLibrary).toEqual({ supported: true });
    expect(doc.aiEnvelope).toEqual({ supported: true });
    expect(doc.supportedEnvelopes).toContain('vendor.mhs.note');
    expect(doc.agentRuntime).toBeUndefined();
    expect(doc.providerUsage).toEqual({ supported: true, costEstimates: false });

    const fixture = await c.post('/v1/runs', { workflowId: 'conformance-prompt-all-four-kinds' });
    expect(fixture.status).toBe(201);
    expect((await c.until(fixture.body.runId, (s) => s.status === 'completed' || s.status === 'failed')).status).toBe(
      'completed',
    );

    const wf = oneNode('note', {
      id: 'gen',
      name: 'gen',
      typeId: 'local.ai.envelope',
      config: { envelopeType: 'vendor.mhs.note', systemPrompt: 'Write a note.', userMessage: 'pumps' },
    });
    expect((await client(srv.url, await makeToken(db, 'operator', 'env-op')).post('/v1/workflows', wf)).status).toBe(
      201,
    );
    const run = await c.post('/v1/runs', { workflowId: 'note' });
    const snap = await c.until(run.body.runId, (s) => s.status === 'completed' || s.status === 'failed');
    expect(snap.status).toBe('completed');
    const events = await c.events(run.body.runId);
    const done = events.find((e) => e.type === 'node.completed')!;
    expect(done.payload.outputs).toMatchObject({
      envelopeType: 'vendor.mhs.note',
      payload: { text: 'hello' },
      usage: { inputTokens: 42, outputTokens: 5 }, // AiEnvelopeResult.usage: the same figures as the event
    });
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

  it('without the flags advertises neither family', async () => {
    const db = tempDb();
    const token = await makeToken(db);
    const srv = await serve(db, ['--no-mhs', '--no-workflows']);
    running.push(srv);
    const doc = (await client(srv.url, token).get('/.well-known/openwop')).body;
    expect([doc.prompts, doc.promptLibrary, doc.aiEnvelope, doc.providerUsage]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(doc.supportedEnvelopes).toEqual([]);
  });
});
