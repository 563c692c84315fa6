// Guarantees (in-process, MCP SDK server over InMemoryTransport, simulated clock): after the transport
// dies the connection retries with exponential backoff timed by the injected clock; a call made while
// it is away and not back by its deadline fails TIMEOUT_PRESEND (nothing was sent); a manifest that
// fails admission on reconnect ends the connection with its code (HOST-073, fail closed); a bounded
// number of attempts ends with DISCONNECTED; the manifest cache drops a profile without a digest (HOST-012).
import { InMemoryTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { HostError } from '../../src/core/index.js';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { ManifestCache } from '../../src/mhs/manifest-cache.js';
import { backoffDelay, connectWithReconnect } from '../../src/mhs/reconnect.js';
import type { ReconnectEvent } from '../../src/mhs/reconnect.js';
import { sampleManifest } from './helpers/fake-endpoint.js';

const row: ConnectorRow = {
  connector_id: 'mhs-mem',
  transport: 'stdio',
  command: ['unused'],
  endpoint_id: null,
  enabled: true,
  source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
  auth: { scheme: 'local' },
};

/** In-memory endpoints: each factory call is a fresh server; `failNext` makes the next N connects fail. */
function memoryEndpoints() {
  let manifest: unknown = sampleManifest();
  let failNext = 0;
  const servers: Transport[] = [];
  const factory = (): Transport => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    if (failNext > 0) {
      failNext--;
      return {
        ...client,
        start: () => Promise.reject(new Error('endpoint not up')),
        send: client.send.bind(client),
        close: client.close.bind(client),
      } as Transport;
    }
    const s = new McpServer({ name: 'mem', version: '1' });
    s.registerTool('mhs__inspect', { inputSchema: fromJsonSchema({ type: 'object' }) }, async () => ({
      content: [{ type: 'text' as const, text: JSON.stringify(manifest) }],
      structuredContent: manifest as Record<string, unknown>,
    }));
    void s.connect(server);
    servers.push(server);
    return client;
  };
  return {
    factory,
    killCurrent: () => servers.at(-1)!.close(),
    failNext: (n: number) => (failNext = n),
    setManifest: (m: unknown) => (manifest = m),
  };
}

const tick = () => new Promise((r) => setImmediate(r));
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await tick();
  if (!cond()) throw new Error('condition not reached');
}

describe('reconnect with backoff (injected clock)', () => {
  it('retries at initial*factor^n on the simulated clock and comes back', async () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 1000 }))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    const clock = new SimulatedClock();
    const ep = memoryEndpoints();
    const events: ReconnectEvent[] = [];
    const conn = await connectWithReconnect(row, {
      clock,
      transport: ep.factory,
      backoff: { initialMs: 100, factor: 2 },
      onEvent: (e) => events.push(e),
    });
    expect(conn.protocolVersion).toBe('2025-11-25');
    ep.failNext(2);
    await ep.killCurrent();
    await until(() => events.some((e) => e.type === 'reconnecting'));
    expect(conn.status).toBe('reconnecting');
    clock.advance(99);
    await tick();
    expect(events.filter((e) => e.type === 'attempt-failed')).toHaveLength(0);
    clock.advance(1);
    await until(() => events.filter((e) => e.type === 'reconnecting').length === 2);
    clock.advance(200);
    await until(() => events.filter((e) => e.type === 'reconnecting').length === 3);
    clock.advance(400);
    await until(() => events.some((e) => e.type === 'reconnected'));
    expect(events.map((e) => (e.type === 'reconnecting' ? `${e.type}:${e.delayMs}` : e.type))).toEqual([
      'disconnected',
      'reconnecting:100',
      'attempt-failed',
      'reconnecting:200',
      'attempt-failed',
      'reconnecting:400',
      'reconnected',
    ]);
    expect(events.at(-1)).toMatchObject({ manifestChanged: false });
    expect(conn.status).toBe('connected');
    expect((await conn.callTool('mhs__inspect', {})).isError).toBe(false);
    await conn.close();
    await expect(conn.closed).resolves.toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED });
  });

  it('a call made while away fails TIMEOUT_PRESEND at its deadline; bounded attempts end DISCONNECTED', async () => {
    const clock = new SimulatedClock();
    const ep = memoryEndpoints();
    const events: ReconnectEvent[] = [];
    const conn = await connectWithReconnect(row, {
      clock,
      transport: ep.factory,
      backoff: { initialMs: 1000, maxAttempts: 1 },
      onEvent: (e) => events.push(e),
    });
    ep.failNext(5);
    await ep.killCurrent();
    await until(() => events.some((e) => e.type === 'reconnecting'));
    const call = conn.callTool('mhs__inspect', {}, { timeoutMs: 500 }).catch((e: unknown) => e);
    await tick();
    clock.advance(500);
    const err = (await call) as HostError;
    expect(err.code).toBe(ErrorCode.TRANSPORT_TIMEOUT_PRESEND);
    expect(err.details.sent).toBe(false);
    clock.advance(500);
    await until(() => events.some((e) => e.type === 'gave-up'));
    await expect(conn.closed).resolves.toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED });
    expect(((await conn.callTool('mhs__inspect', {}).catch((e: unknown) => e)) as HostError).code).toBe(
      ErrorCode.TRANSPORT_DISCONNECTED,
    );
  });

  it('HOST-073: a manifest that fails admission on reconnect ends the connection (fail closed)', async () => {
    const clock = new SimulatedClock();
    const ep = memoryEndpoints();
    const events: ReconnectEvent[] = [];
    const conn = await connectWithReconnect(row, { clock, transport: ep.factory, onEvent: (e) => events.push(e) });
    ep.setManifest({ ...sampleManifest(), display_name: 'tampered' });
    await ep.killCurrent();
    await until(() => events.some((e) => e.type === 'reconnecting'));
    clock.advance(200);
    await until(() => events.some((e) => e.type === 'gave-up'));
    await expect(conn.closed).resolves.toMatchObject({ code: ErrorCode.HOST_MANIFEST_INVALID });
  });
});

describe('manifest cache (HOST-012)', () => {
  it('keys profiles by (endpoint, device, instance, digest), detects a change and drops digest-less profiles', () => {
    const cache = new ManifestCache();
    const m1 = sampleManifest();
    const m2 = sampleManifest({ manifest_version: 2 });
    const p1 = cache.put(m1);
    expect(p1).toMatchObject({ changed: false, previousDigest: null });
    expect(cache.put(m1).changed).toBe(false);
    const p2 = cache.put(m2);
    expect(p2).toMatchObject({ changed: true, previousDigest: m1.manifest_digest });
    expect(p2.keys[0]).toEqual({ ...p1.keys[0], manifest_digest: m2.manifest_digest });
    // Both versions stay addressable: evidence can cite the exact profile the model saw.
    expect(cache.get(p1.keys[0]!)).toEqual(m1.devices[0]);
    expect(cache.profileForSession('mhs://fake:1', 'stage')?.key.manifest_digest).toBe(m2.manifest_digest);
    cache.restore([{ key: { endpoint_id: 'mhs://old:1', device_id: 'stage' }, profile: m1.devices[0]! }]);
    const before = cache.size();
    expect(cache.profileForSession('mhs://old:1', 'stage')).toBeUndefined();
    expect(cache.size()).toBe(before - 1);
  });
});
