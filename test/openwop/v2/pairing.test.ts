// Guarantee (OpenWOP v2 versioning.md §1.2): a host that advertises a major reaches under it every operation named in
// spec/v2/path-manifest.json that it serves under the other. The pairing is derived from the route table of the app
// `serve` builds (`startHostServer`'s `routes`, the table the v2 OpenAPI document is built from), not from a list in
// this test: the app is started in-process with the families `serve --prompts --agent-packs --enable-test-seams`
// installs (the same `buildServiceFamilies`), every `/v1/<op>` route whose unversioned twin is a manifest operation has
// an unversioned route serving that operation, and against a real `mhs-host serve` process with those flags the twin
// answers under `OpenWOP-Version: 2` (named 2.0 in the response) with the status `/v1/<op>` answers for the same
// request, and that process's v2 OpenAPI document names the operations the in-process table does. Exempt, as §1.2
// exempts them, are routes that name no manifest operation (seams under /v1/host/, proprietary operator routes, and
// v1 operations the manifest does not carry); the test lists them.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../../src/core/index.js';
import { buildServiceFamilies } from '../../../src/cli/service-families.js';
import { openDb } from '../../../src/ledger/index.js';
import type { Db } from '../../../src/ledger/index.js';
import { createTokenStore } from '../../../src/policy/tokens.js';
import { startHostServer } from '../../../src/server/host-server.js';
import type { HostServer } from '../../../src/server/host-server.js';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { ROOT, makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call } from './v2-kit.js';

interface Route {
  method: string;
  url: string;
  operationId?: string;
}
interface Op {
  method: string;
  path: string;
  operationId: string;
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/spec/v2/path-manifest.json'), 'utf8')) as {
  operations: Op[];
};

/** Segment-wise: a router `:param` (or `*`) covers any manifest segment holding a `{param}`; else literal equality. */
function covers(routeUrl: string, manifestPath: string): boolean {
  // `::` is the router's escaped literal colon (`/prompts::render`).
  const r = routeUrl.replace(/::/g, ':').split('/');
  const m = manifestPath.split('/');
  if (r.length !== m.length && !routeUrl.endsWith('*')) return false;
  return m.every((seg, i) => {
    const rs = r[i];
    if (rs === undefined) return false;
    if (rs === '*' || rs.startsWith(':')) return seg.startsWith('{');
    if (seg.includes('{')) {
      // `/runs/{runId}:fork` against `/runs/:runId::fork` style routes.
      const lit = seg.replace(/\{[^}]+\}/, '');
      return rs.includes(':') && rs.endsWith(lit);
    }
    return rs === seg;
  });
}

function opsOf(route: Route, unversionedUrl: string): Op[] {
  return manifest.operations.filter((o) => o.method === route.method && covers(unversionedUrl, o.path));
}

const RUN = 'run_00000000000000000000000000';
// Request bodies the spec's requestBody schemas admit (v2 openapi), so both majors reach the resource lookup.
const BODY: Record<string, unknown> = { forkRun: { mode: 'replay' }, resolveInterruptByRun: { resumeValue: {} } };
/** A concrete request path for a manifest template: unknown ids, in each major's form. */
function concrete(path: string, major: 1 | 2): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'runId' ? (major === 1 ? RUN : 'local~2Frun-00000000000000000000000000') : `no-such-${name.toLowerCase()}`,
  );
}

function packsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-v2-pairing-'));
  mkdirSync(join(dir, 'p'));
  writeFileSync(
    join(dir, 'p', 'pack.json'),
    JSON.stringify({
      name: 'vendor.acme.pair',
      version: '1.0.0',
      engines: { openwop: '>=1.1.0' },
      runtime: { language: 'remote', entry: 'https://packs.example/remote' },
      agents: [{ agentId: 'vendor.acme.pair.clerk', persona: 'Clerk', modelClass: 'general', systemPrompt: 'x' }],
    }),
  );
  return dir;
}

describe.each(BACKENDS)('v1/v2 path pairing on $name', (backend) => {
  let h: StoreHandle;
  let own: StoreHandle;
  let db: Db;
  let inProcess: HostServer;
  let srv: Served;
  let token: string;
  let routes: Route[];

  beforeAll(async () => {
    const packs = packsDir();
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--openwop-v2', '--prompts', '--agent-packs', packs, '--enable-test-seams']);
    // The same app in this process, on a store of its own: its route table is what the router holds.
    own = await backend.fresh();
    db = await openDb(own.location);
    const clock = new RealClock();
    const identity = { hostId: 'pairing-host', wellKnownUrl: () => undefined };
    const families = await buildServiceFamilies({ prompts: true, agentPacks: packs }, db, clock, () => {}, identity);
    inProcess = await startHostServer({
      db,
      clock,
      tokens: createTokenStore(db, clock),
      port: 0,
      families,
      hostId: identity.hostId,
      testSeams: true,
    });
    routes = inProcess.routes.filter((r) => r.method !== 'HEAD');
  });
  afterAll(async () => {
    await inProcess?.close();
    await db?.close();
    await own?.cleanup();
    await srv?.stop();
    await h?.cleanup();
  });

  it('the serve process mounts the v2 operations the in-process table records (its v2 OpenAPI document)', async () => {
    const doc = await call(srv.url, 'GET', '/openapi.json', { version: '2' });
    expect(doc.status).toBe(200);
    const served = Object.values(doc.body.paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((ops) => Object.values(ops).map((o) => o.operationId))
      .sort();
    const recorded = [...new Set(routes.flatMap((r) => (r.operationId ? [r.operationId] : [])))].sort();
    // `getRunEffects` is mounted with the host ledger, which `serve` has (its MHS runtime) and this in-process app,
    // started without one, has not; it has no /v1/ twin, so the pairing does not depend on it.
    expect(served).toContain('getRunEffects');
    expect(recorded).not.toContain('getRunEffects');
    expect(served.filter((op) => op !== 'getRunEffects')).toEqual(recorded);
    expect(recorded.length).toBeGreaterThan(10);
  });

  function pairs(): { paired: Array<{ route: Route; op: Op }>; exempt: Route[] } {
    const paired: Array<{ route: Route; op: Op }> = [];
    const exempt: Route[] = [];
    for (const route of routes.filter((r) => r.url.startsWith('/v1/'))) {
      const ops = opsOf(route, route.url.slice(3));
      if (!ops.length) exempt.push(route);
      for (const op of ops) paired.push({ route, op });
    }
    return { paired, exempt };
  }

  it('the route table holds v1 operations, and every manifest-named one has an unversioned route', () => {
    const { paired, exempt } = pairs();
    expect(paired.length).toBeGreaterThan(0);
    const unversioned = routes.filter((r) => !r.url.startsWith('/v1/') && !r.url.startsWith('/v1'));
    const missing = paired.filter(
      ({ op }) => !unversioned.some((r) => r.method === op.method && covers(r.url, op.path)),
    );
    expect(missing.map(({ route, op }) => `${route.method} ${route.url} → ${op.operationId}`)).toEqual([]);
    // §1.2: seam and proprietary paths are no manifest operation; what is exempt names none.
    for (const r of exempt) expect(opsOf(r, r.url.slice(3))).toEqual([]);
    expect(exempt.some((r) => r.url.startsWith('/v1/host/'))).toBe(true);
  });

  it('each twin answers under OpenWOP-Version 2 as its /v1/ path answers the same request', async () => {
    const { paired } = pairs();
    const seen = new Set<string>();
    const diverging: string[] = [];
    for (const { op } of paired) {
      const key = `${op.method} ${op.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const body = op.method === 'POST' || op.method === 'PUT' ? (BODY[op.operationId] ?? {}) : undefined;
      const headers: Record<string, string> =
        op.operationId === 'streamRunEvents' ? { accept: 'text/event-stream' } : {};
      const o = { token, headers, ...(body !== undefined ? { body } : {}) };
      const v1 = await call(srv.url, op.method, `/v1${concrete(op.path, 1)}`, o);
      const v2 = await call(srv.url, op.method, concrete(op.path, 2), { ...o, version: '2' });
      expect(v2.headers.get('openwop-version'), key).toBe('2.0');
      if (v2.status >= 400)
        expect(Object.keys(v2.body ?? {}).sort(), key).toEqual(expect.arrayContaining(['error', 'message']));
      // §1.2 runs one way: v2 may serve an operation the /v1/ route does not (diff, where v1 answers 404).
      if (v1.status !== v2.status && !(v1.status === 404 && v2.status !== 404))
        diverging.push(`${key}: v1 ${v1.status} ${v1.body?.error} / v2 ${v2.status} ${v2.body?.error}`);
    }
    expect(diverging).toEqual([]);
  });
});
