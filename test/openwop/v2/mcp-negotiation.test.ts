// Guarantees (v2 interop.md §The facets, §Negotiation is a protocol; RFC 0204 `mcp.client`; RFC 0242 §A, §B.1), over
// real HTTP against `mhs-host serve --mcp-servers` with real MCP servers (the echo fixture over Streamable HTTP), on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL:
// - the v2 root advertises the `mcp` record of the client facet, valid against the vendored v2 capabilities schema,
//   whose ladder is the MCP SDK's (its supported revisions at or above the floor, plus the modern one), whose floor
//   is the configured one, and whose `refreshedAt` is within the 90-day window;
// - a run whose node opens an MCP connection carries `negotiation.decided` on its own log (a v2 event, valid against
//   the vendored run-event schema) naming the revision negotiated, what was asked for, the floor and a digest of the
//   peer (never its address); v1 reads show the same event under the same name; a later run reusing the pooled
//   connection negotiates nothing and records nothing;
// - a server that speaks only a revision below the floor is refused: the node fails `interop_version_unsupported`,
//   the log carries `negotiation.decided {outcome: refused, reason: below-floor}`, and the server received nothing but
//   the handshake (no tools/call, no message at a revision below the floor).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { startEchoHttp } from '../../helpers/mcp-echo.js';
import type { EchoHttp } from '../../helpers/mcp-echo.js';
import { ROOT, client, makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2EventProblems, v2Problems } from './v2-kit.js';

const FLOOR = '2025-03-26';
const MODERN = '2026-07-28';
const BELOW = '2024-11-05';
const DAY_MS = 86_400_000;

describe.each(BACKENDS)('the v2 mcp record and negotiation.decided on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let current: EchoHttp;
  let old: EchoHttp;
  const dir = mkdtempSync(join(tmpdir(), 'mhs-mcp-neg-'));
  const oldLog = join(dir, 'old.log');

  const run = async (inputs: Record<string, unknown>) => {
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-mcp-client', inputs },
    });
    expect(created.status).toBe(201);
    const { events } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    const snap = await call(srv.url, 'GET', created.body.statusUrl, { token, version: '2' });
    return { runId: created.body.runId as string, events, snap: snap.body };
  };

  beforeAll(async () => {
    writeFileSync(oldLog, '');
    current = await startEchoHttp();
    old = await startEchoHttp(['--only-revision', BELOW, '--log', oldLog]);
    const cfg = join(dir, 'servers.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        servers: {
          current: { transport: 'streamable-http', url: current.url },
          old: { transport: 'streamable-http', url: old.url },
        },
        minimumRevision: FLOOR,
      }),
    );
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-mhs', '--no-workflows', '--mcp-servers', cfg]);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
    await current?.stop();
    await old?.stop();
  });

  it('advertises the mcp client facet with the SDK ladder, the floor and a fresh refreshedAt, valid against the v2 schema', async () => {
    const res = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(res.status).toBe(200);
    expect(v2Problems('capabilities', res.body)).toEqual([]);
    const mcp = res.body.mcp;
    // The witness the v2 declaration gives the family (`core/capabilities.md#mcp — witness: …;`).
    const schema = JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/schemas/v2/capabilities.schema.json'), 'utf8'));
    expect(mcp.witness).toBe(/witness: ([a-z-]+);/.exec(schema.properties.mcp.description)?.[1]);
    expect(mcp).toMatchObject({
      status: 'stable',
      since: '2.0',
      witness: 'seam-gated',
      client: true,
      preferredVersion: MODERN,
      minimumRevision: FLOOR,
    });
    // Derived from the SDK the host runs: its initialize list at or above the floor, and the modern revision.
    expect(mcp.revisions).toEqual([MODERN, ...SUPPORTED_PROTOCOL_VERSIONS.filter((r) => r >= FLOOR)]);
    expect(mcp.revisions).not.toContain(BELOW);
    const age = Date.now() - Date.parse(`${mcp.refreshedAt}T00:00:00Z`);
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(90 * DAY_MS);
    // The v1 document keeps its own shape.
    const v1 = await call(srv.url, 'GET', '/.well-known/openwop');
    expect(v1.body.mcp).toEqual({ supported: true });
  });

  it('a run that opens the connection records negotiation.decided on its own log; a later run reusing it records none', async () => {
    const first = await run({ method: 'callTool', serverId: 'current', name: 'echo', arguments: { text: 'hi' } });
    expect(first.snap.status).toBe('completed');
    const decided = first.events.filter((e) => e.type === 'negotiation.decided');
    expect(decided).toHaveLength(1);
    const [d] = decided;
    expect(v2EventProblems(d)).toEqual([]);
    expect(d.nodeId).toBeTypeOf('string');
    expect(d.payload).toMatchObject({
      protocol: 'mcp',
      outcome: 'accepted',
      requested: MODERN,
      version: MODERN,
      floor: FLOOR,
    });
    expect(d.payload.peerDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(d.payload)).not.toContain('127.0.0.1');
    // Decided before the call it made possible completed the node.
    const completed = first.events.findIndex((e) => e.type === 'node.completed' && e.nodeId === d.nodeId);
    expect(first.events.indexOf(d)).toBeLessThan(completed);

    // v1 readers see the event under the same name (v1 RunEventType: readers ignore a type they do not know).
    const v1Events = await client(srv.url, token).events(first.runId.replace(/^local\//, '').replace('-', '_'));
    expect(v1Events.filter((e) => e.type === 'negotiation.decided').map((e) => e.payload)).toEqual([d.payload]);

    const second = await run({ method: 'callTool', serverId: 'current', name: 'echo', arguments: { text: 'again' } });
    expect(second.snap.status).toBe('completed');
    expect(second.events.filter((e) => e.type === 'negotiation.decided')).toEqual([]);
  });

  it('a server offering only a revision below the floor fails closed with interop_version_unsupported; nothing is called', async () => {
    const refused = await run({ method: 'callTool', serverId: 'old', name: 'echo', arguments: { text: 'never' } });
    expect(refused.snap.status).toBe('failed');
    const failed = refused.events.find((e) => e.type === 'node.failed');
    expect(JSON.stringify(failed?.payload)).toContain('interop_version_unsupported');
    const decided = refused.events.filter((e) => e.type === 'negotiation.decided');
    expect(decided).toHaveLength(1);
    expect(v2EventProblems(decided[0])).toEqual([]);
    expect(decided[0].payload).toMatchObject({
      protocol: 'mcp',
      outcome: 'refused',
      reason: 'below-floor',
      floor: FLOOR,
    });
    expect(decided[0].payload).not.toHaveProperty('version');

    const received = readFileSync(oldLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method: string | null; protocolVersion: string | null });
    expect(received.map((m) => m.method)).toContain('initialize');
    // Only the handshake reached the server, and nothing at a revision below the floor.
    expect(received.map((m) => m.method).filter((m) => m !== 'server/discover' && m !== 'initialize')).toEqual([]);
    for (const m of received) if (m.protocolVersion !== null) expect(m.protocolVersion >= FLOOR).toBe(true);
  });
});
