// Guarantees (OpenWOP v2 capabilities.md §1–§4, RFC 0169 §A), over real HTTP against `mhs-host serve` on SQLite
// (the negotiation test validates the default root on PostgreSQL too): the closed v2 discovery root validates against
// the vendored v2 capabilities schema with the optional families installed as well as without them; every family is a
// record `{status, since, witness, …}` with no `supported` flag, whose `witness` is the one the v2 declaration gives
// the family; and what the root advertises is what major 2 serves: the prompt library at the advertised render
// endpoint, the agent inventory, run ancestry, the run list; a family that is not installed is not advertised and its
// v2 operation refuses; idempotency is advertised with its witness `GET /runs/{runId}/effects` served (without the
// host ledger neither is: test/openwop/v2/effects.test.ts);
// replay is advertised with the effect-seams manifest its v2 record names, which is served.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { ROOT, makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { packsDir } from '../manifest-kit.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const SCHEMA = JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/schemas/v2/capabilities.schema.json'), 'utf8')) as {
  properties: Record<string, { description?: string; required?: string[] }>;
};

/** The witness the v2 declaration names for a family (`core/capabilities.md#<family> — witness: <w>; …`). */
function declaredWitness(family: string): string | undefined {
  return /witness: ([a-z-]+);/.exec(SCHEMA.properties[family]?.description ?? '')?.[1];
}

function supportedFlags(v: unknown, path = ''): string[] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [];
  return Object.entries(v).flatMap(([k, x]) =>
    k === 'supported' ? [`${path}/${k}`] : supportedFlags(x, `${path}/${k}`),
  );
}

const root = async (url: string) => (await call(url, 'GET', '/.well-known/openwop', { version: '2' })).body;

describe('the v2 discovery root with the optional families installed', () => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  let doc: any;
  beforeAll(async () => {
    h = await BACKENDS[0]!.fresh();
    client = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--prompts', '--agent-packs', packsDir()]);
    doc = await root(srv.url);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('validates against the vendored v2 capabilities schema', () => {
    expect(v2Problems('capabilities', doc)).toEqual([]);
    expect(doc).toHaveProperty('prompts');
    expect(doc).toHaveProperty('agents.manifestRuntime');
  });

  it('every family is a record with the witness the v2 declaration names, and no supported flag', () => {
    const records = Object.entries(doc).filter(([, v]) => typeof v === 'object' && v !== null && 'witness' in v);
    expect(records.length).toBeGreaterThan(5);
    for (const [family, value] of records as Array<[string, any]>) {
      expect(SCHEMA.properties[family]?.required, family).toEqual(expect.arrayContaining(['status', 'since']));
      expect(value.witness, family).toBe(declaredWitness(family));
      expect(doc.protocolVersions, family).toContain(value.since);
    }
    expect(supportedFlags(doc)).toEqual([]);
  });

  it('the advertised surfaces answer under major 2: render endpoint, agent inventory, run list, ancestry', async () => {
    const render = doc.prompts.library.renderEndpoint as string;
    expect(render.startsWith('/v1/')).toBe(false);
    const list = await call(srv.url, 'GET', '/prompts', { token: client, version: '2' });
    const ref = { templateId: list.body.items[0].templateId };
    const rendered = await call(srv.url, 'POST', render, { token: client, version: '2', body: { ref, variables: {} } });
    expect([200, 400]).toContain(rendered.status);
    expect(rendered.body.error).not.toBe('not_found');

    expect((await call(srv.url, 'GET', '/agents', { token: client, version: '2' })).status).toBe(200);
    expect(doc.runList.maxPageSize).toBeGreaterThan(0);
    const page = await call(srv.url, 'GET', `/runs?limit=${doc.runList.maxPageSize}`, { token: client, version: '2' });
    expect(page.status).toBe(200);

    expect(doc.multiAgent.executionModel.crossHostCausation.ancestryEndpointSupported).toBe(true);
    const run = await call(srv.url, 'POST', '/runs', {
      token: client,
      version: '2',
      body: { workflowId: 'conformance-noop' },
    });
    expect(run.status).toBe(201);
    await pollToEnd(srv.url, run.body.eventsUrl, client);
    const seg = run.body.eventsUrl.split('/')[2];
    expect((await call(srv.url, 'GET', `/runs/${seg}/ancestry`, { token: client, version: '2' })).status).toBe(200);
  });

  it('idempotency is advertised under major 2 while its witness GET /runs/{runId}/effects is served', async () => {
    const v1 = (await call(srv.url, 'GET', '/.well-known/openwop', {})).body;
    expect(v1.idempotency).toBeDefined();
    expect(doc.idempotency).toMatchObject({ witness: declaredWitness('idempotency') });
    const run = await call(srv.url, 'POST', '/runs', {
      token: client,
      version: '2',
      body: { workflowId: 'conformance-noop' },
    });
    const effects = await call(srv.url, 'GET', `${run.body.statusUrl}/effects`, { token: client, version: '2' });
    expect(effects.status).toBe(200);
    expect(v2Problems('effect-ledger-projection', effects.body)).toEqual([]);
  });

  it('replay is advertised with the effect-seams manifest its v2 record requires, and the manifest is served', async () => {
    expect(SCHEMA.properties.replay?.required).toContain('effectSeamsManifest');
    expect(doc.replay).toMatchObject({ witness: declaredWitness('replay'), effectSeamsManifest: '/host/effect-seams' });
    const seams = await call(srv.url, 'GET', '/host/effect-seams', { token: client, version: '2' });
    expect(seams.status).toBe(200);
    expect(v2Problems('effect-seam-manifest', seams.body)).toEqual([]);
  });
});

describe('the v2 discovery root without the optional families', () => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  beforeAll(async () => {
    h = await BACKENDS[0]!.fresh();
    client = await makeToken(h.location, 'client');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('validates, and advertises neither the prompt library nor the agent inventory, whose operations refuse', async () => {
    const doc = await root(srv.url);
    expect(v2Problems('capabilities', doc)).toEqual([]);
    expect(doc).not.toHaveProperty('prompts');
    expect(doc).not.toHaveProperty('agents.manifestRuntime');
    expect((await call(srv.url, 'GET', '/prompts', { token: client, version: '2' })).status).not.toBe(200);
    expect((await call(srv.url, 'GET', '/agents', { token: client, version: '2' })).status).toBe(404);
    // Seeded conformance fixtures are advertised under either major and run under major 2.
    expect(doc.fixtures).toContain('conformance-noop');
  });
});

describe('the v2 discovery root with the AI envelope family installed', () => {
  let h: StoreHandle;
  let srv: Served;
  beforeAll(async () => {
    h = await BACKENDS[0]!.fresh();
    const dir = mkdtempSync(join(tmpdir(), 'mhs-v2-discovery-'));
    const script = { model: 'lab-model-2', turns: [{ final: '{}', usage: { inputTokens: 1, outputTokens: 1 } }] };
    writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
    const kinds = { 'vendor.mhs.note': { type: 'object', properties: { text: { type: 'string' } } } };
    writeFileSync(join(dir, 'envelopes.json'), JSON.stringify(kinds));
    srv = await serve(h.location, [
      '--no-mhs',
      '--ai-script',
      join(dir, 'script.json'),
      '--envelopes',
      join(dir, 'envelopes.json'),
    ]);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('validates, carrying the envelope catalog as the supportedEnvelopes record and the family records', async () => {
    const doc = await root(srv.url);
    expect(v2Problems('capabilities', doc)).toEqual([]);
    expect(doc.supportedEnvelopes.kinds).toContain('vendor.mhs.note');
    expect(doc.aiEnvelope.witness).toBe(declaredWitness('aiEnvelope'));
    expect(doc).toHaveProperty('envelopes.reliability');
    expect(supportedFlags(doc)).toEqual([]);
  });
});
