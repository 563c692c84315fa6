// Guarantees (host-sample-test-seams.md §23 under the v2 seams profile; v2 interop.md §The floor, §The audit event;
// RFC 0175 §D.3, RFC 0242 §A.2, §B.1), over real HTTP against `mhs-host serve --enable-test-seams --mcp-servers` with
// real MCP servers over Streamable HTTP that log what reaches them, on SQLite and, when MHS_TEST_PG_URL is set,
// PostgreSQL:
// - `POST /conformance/seams/sample/mcp/invoke {serverUrl}` makes the host's MCP client call a server the operator did
//   not configure, once: `200 {negotiatedVersion, runId}`, where `negotiatedVersion` is the revision on every message
//   the server received (stateless under 2026-07-28: no `initialize`), and the run's log carries one
//   `negotiation.decided` (accepted, that version, `requested` the revision asked for, the SHA-256 of the server's
//   origin, never the origin);
// - a `requestVersion` on the ladder is asked for (an `initialize` rung by the `initialize` handshake);
// - a `requestVersion` below the floor is refused before anything is sent: `400 interop_version_unsupported` with
//   `details {protocol: "mcp", requested, supported, retriable: false, runId}` and a refused record on that run; a
//   server speaking only a revision below the floor is refused the same way after its handshake;
// - a body outside §23's request is `400 validation_error`; without the `mcp` family the seam is not served.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, sqliteBackend } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { startEchoHttp } from '../../helpers/mcp-echo.js';
import type { EchoHttp } from '../../helpers/mcp-echo.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2EventProblems, v2Problems } from './v2-kit.js';

const INVOKE = '/conformance/seams/sample/mcp/invoke';
const FLOOR = '2025-03-26';
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const BELOW = '2024-11-05';

type Received = { method: string | null; protocolVersion: string | null };

describe.each(BACKENDS)('the v2 MCP invoke seam on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let suite: EchoHttp;
  let old: EchoHttp;
  const dir = mkdtempSync(join(tmpdir(), 'mhs-mcp-invoke-'));
  const suiteLog = join(dir, 'suite.log');
  const oldLog = join(dir, 'old.log');
  const received = (file: string): Received[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Received);
  const invoke = (body: unknown) => call(srv.url, 'POST', INVOKE, { token, version: '2', body });
  const decidedOn = async (runId: string) => {
    const { events } = await pollToEnd(srv.url, `/runs/${encodeURIComponent(runId)}/events`, token);
    return events.filter((e) => e.type === 'negotiation.decided');
  };

  beforeAll(async () => {
    writeFileSync(suiteLog, '');
    writeFileSync(oldLog, '');
    suite = await startEchoHttp(['--log', suiteLog]);
    old = await startEchoHttp(['--only-revision', BELOW, '--log', oldLog]);
    // The operator configures another server; the seam's server is the suite's own.
    const other = await startEchoHttp();
    const cfg = join(dir, 'servers.json');
    writeFileSync(
      cfg,
      JSON.stringify({ servers: { other: { transport: 'streamable-http', url: other.url } }, minimumRevision: FLOOR }),
    );
    await other.stop();
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--enable-test-seams', '--no-mhs', '--no-workflows', '--mcp-servers', cfg]);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
    await suite?.stop();
    await old?.stop();
  });

  it('calls the named server once through the host client and records the negotiation on the run it names', async () => {
    const before = received(suiteLog).length;
    const r = await invoke({ serverUrl: suite.url });
    expect(r.status).toBe(200);
    expect(r.headers.get('openwop-version')).toBe('2.0');
    expect(r.body).toEqual({ negotiatedVersion: MODERN, runId: expect.any(String) });
    expect(v2Problems('ids#/$defs/runId', r.body.runId)).toEqual([]);
    const got = received(suiteLog).slice(before);
    expect(got.map((m) => m.method)).toContain('tools/list');
    expect(got.map((m) => m.method)).not.toContain('initialize');
    for (const m of got) expect(m.protocolVersion).toBe(r.body.negotiatedVersion);
    const decided = await decidedOn(r.body.runId);
    expect(decided).toHaveLength(1);
    expect(v2EventProblems(decided[0])).toEqual([]);
    expect(decided[0].payload).toMatchObject({
      protocol: 'mcp',
      outcome: 'accepted',
      version: MODERN,
      requested: MODERN,
      floor: FLOOR,
      peerDigest: createHash('sha256').update(new URL(suite.url).origin).digest('hex'),
    });
    expect(JSON.stringify(decided[0].payload)).not.toContain(new URL(suite.url).host);
  });

  it('asks for an initialize rung named in requestVersion by the initialize handshake', async () => {
    const before = received(suiteLog).length;
    const r = await invoke({ serverUrl: suite.url, requestVersion: LEGACY });
    expect(r.status).toBe(200);
    expect(r.body.negotiatedVersion).toBe(LEGACY);
    const got = received(suiteLog).slice(before);
    expect(got.map((m) => m.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    expect(got.map((m) => m.method)).not.toContain('server/discover');
    expect(got.find((m) => m.method === 'tools/list')?.protocolVersion).toBe(LEGACY);
    const [d] = await decidedOn(r.body.runId);
    expect(d.payload).toMatchObject({ outcome: 'accepted', version: LEGACY, requested: LEGACY });
  });

  it('refuses a requestVersion below the floor before sending anything, and records the refusal', async () => {
    const before = received(suiteLog).length;
    const r = await invoke({ serverUrl: suite.url, requestVersion: BELOW });
    expect(r.status).toBe(400);
    expect(v2Problems('error-envelope', r.body)).toEqual([]);
    expect(r.body.error).toBe('interop_version_unsupported');
    expect(r.body.details).toMatchObject({
      protocol: 'mcp',
      requested: BELOW,
      retriable: false,
      reason: 'below-floor',
    });
    expect(r.body.details.supported).toContain(MODERN);
    expect(r.body.details.supported).not.toContain(BELOW);
    expect(received(suiteLog).length).toBe(before);
    const decided = await decidedOn(r.body.details.runId);
    expect(decided).toHaveLength(1);
    expect(v2EventProblems(decided[0])).toEqual([]);
    expect(decided[0].payload).toMatchObject({ outcome: 'refused', requested: BELOW, reason: 'below-floor' });
  });

  it('refuses a server that speaks only a revision below the floor, and records the refusal', async () => {
    const r = await invoke({ serverUrl: old.url });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('interop_version_unsupported');
    expect(r.body.details.protocol).toBe('mcp');
    const decided = await decidedOn(r.body.details.runId);
    expect(decided.map((e) => e.payload.outcome)).toEqual(['refused']);
    expect(received(oldLog).map((m) => m.method)).not.toContain('tools/list');
  });

  it('refuses a body outside the §23 request', async () => {
    for (const body of [
      {},
      { serverUrl: 'not a url' },
      { serverUrl: suite.url, requestVersion: 'latest' },
      { serverUrl: suite.url, tool: 'x' },
    ]) {
      const r = await invoke(body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([400, 'validation_error']);
    }
  });
});

describe('the MCP invoke seam without the mcp family', () => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await sqliteBackend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--enable-test-seams', '--no-mhs', '--no-workflows']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('is not served', async () => {
    const r = await call(srv.url, 'POST', INVOKE, { token, version: '2', body: { serverUrl: 'http://127.0.0.1:1/' } });
    expect(r.status).toBe(404);
  });
});
