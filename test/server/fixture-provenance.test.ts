// Guarantees (issue 17 item 2, conformance fixtures.md "servers seed verbatim"): over HTTP against a real
// `mhs-host serve` (SQLite file; PostgreSQL too when MHS_TEST_PG_URL is set), every fixture id the discovery document
// advertises is seeded from a vendored public copy: the file vendor/openwop/fixtures/<id>.json exists, its SHA-256 is
// the one recorded for the public copy (fixtures/SHA256SUMS), vendor/openwop/README.md names its source repository,
// path and commit, and `GET /v1/workflows/{id}` serves exactly that definition. The four fixtures that were no-op
// placeholders are the working public versions (their nodes are the scenario's, not a single noop).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { ROOT, client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const VENDOR = join(ROOT, 'vendor/openwop');
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** `<sha256>  <file>` lines of the recorded public digests. */
function recordedDigests(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(join(VENDOR, 'fixtures/SHA256SUMS'), 'utf8').split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](\S+)$/.exec(line.trim());
    if (m) out.set(m[2]!, m[1]!);
  }
  return out;
}

/** README rows `| \`<file>\` | <repo> | \`<path>\` | \`<commit>\` |` of the fixtures table. */
function provenanceRows(): Map<string, { repo: string; path: string; commit: string }> {
  const out = new Map<string, { repo: string; path: string; commit: string }>();
  const readme = readFileSync(join(VENDOR, 'README.md'), 'utf8');
  for (const m of readme.matchAll(
    /^\| `(conformance-[^`]+\.json)` \| (openwop\/[\w-]+) \| `([^`]+)` \| `([0-9a-f]{7,40})` \|/gm,
  ))
    out.set(m[1]!, { repo: m[2]!, path: m[3]!, commit: m[4]! });
  return out;
}

describe.each(BACKENDS)('advertised fixtures are the public copies ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;
  let advertised: string[];

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-workflows']);
    api = client(srv.url, token);
    advertised = (await api.get('/.well-known/openwop')).body.fixtures as string[];
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  it('each advertised id has a vendored file whose digest is the recorded public one, with its provenance', () => {
    const digests = recordedDigests();
    const rows = provenanceRows();
    expect(advertised.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const id of advertised) {
      const file = `${id}.json`;
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(VENDOR, 'fixtures', file));
      } catch {
        problems.push(`${id}: no vendored file`);
        continue;
      }
      if (digests.get(file) !== sha256(bytes)) problems.push(`${id}: digest is not the recorded public copy's`);
      const row = rows.get(file);
      if (!row) problems.push(`${id}: no provenance row in vendor/openwop/README.md`);
      else if (!row.path.endsWith(file)) problems.push(`${id}: provenance path ${row.path} is another file`);
    }
    expect(problems).toEqual([]);
  });

  it('GET /v1/workflows/{id} serves the vendored definition of every advertised id', async () => {
    for (const id of advertised) {
      const res = await api.get(`/v1/workflows/${id}`);
      expect(res.status, id).toBe(200);
      const vendored = JSON.parse(readFileSync(join(VENDOR, 'fixtures', `${id}.json`), 'utf8')) as unknown;
      expect(res.body, id).toEqual(vendored);
    }
  });

  it('the four former placeholders are advertised as their working versions, not a single no-op', async () => {
    const want: Record<string, string[]> = {
      'conformance-subworkflow-input-mapping': ['core.subWorkflow'],
      'conformance-dispatch-input-mapping': ['core.orchestrator.supervisor', 'core.dispatch'],
      'conformance-dispatch-output-mapping': ['core.orchestrator.supervisor', 'core.dispatch'],
      'conformance-dispatch-cross-worker-handoff': ['core.orchestrator.supervisor', 'core.dispatch'],
    };
    for (const [id, types] of Object.entries(want)) {
      expect(advertised, id).toContain(id);
      const def = (await api.get(`/v1/workflows/${id}`)).body;
      const typeIds = (def.nodes as Array<{ typeId: string }>).map((n) => n.typeId);
      expect(typeIds, id).toEqual(expect.arrayContaining(types));
    }
  });
});
