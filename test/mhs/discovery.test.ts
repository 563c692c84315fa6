// Guarantees (HOST-010, HOST-011), against real simulator processes: endpoints are discovered from
// MHS_ENDPOINTS, endpoints.json, the local registry, well-known base URLs and (only when enabled)
// federated registries, in that fixed precedence, each listed once with the source that won and every
// source that listed it; stdio endpoints are `local`; discovery spawns nothing; a malformed
// MHS_ENDPOINTS entry, endpoints.json or descriptor yields an error naming its source and never stops
// the other sources; a discovered endpoint connects once enabled, with its descriptor checked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostError } from '../../src/core/index.js';
import { ErrorCode } from '../../src/core/index.js';
import { connect } from '../../src/mhs/connector.js';
import { connectorIdFor } from '../../src/mhs/connector-row.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { discoverEndpoints, sourceTrust } from '../../src/mhs/discovery.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

const STDIO_LINE = 'node --import tsx src/cli/main.ts sim conveyor --stdio';
const STDIO_ARGV = STDIO_LINE.split(' ');

function tmpFile(name: string, text: string): string {
  const p = join(mkdtempSync(join(tmpdir(), 'mhs-disc-')), name);
  writeFileSync(p, text);
  return p;
}

function childCount(): number {
  return execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((s) => s.trim()).length;
}

/** A tiny HTTP server answering fixed JSON by path, counting requests. */
async function jsonServer(
  routes: Record<string, unknown>,
): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    const body = routes[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits, server };
}

describe('discovery (HOST-010)', { timeout: 120_000 }, () => {
  let a: SimHttp;
  let b: SimHttp;
  const servers: Server[] = [];
  beforeAll(async () => {
    [a, b] = await Promise.all([startSimHttp('laser'), startSimHttp('thermostat,liquid-handler')]);
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('lists each endpoint once under the highest source, records every source, and spawns nothing', async () => {
    const file = tmpFile(
      'endpoints.json',
      JSON.stringify({
        endpoints: [{ url: a.url, auth: { scheme: 'bearer', token_env: 'LASER_TOKEN' } }, { command: STDIO_ARGV }],
      }),
    );
    const registryRow: ConnectorRow = {
      connector_id: connectorIdFor({ endpoint_id: a.endpointId }),
      transport: 'http',
      url: a.mcpUrl,
      endpoint_id: a.endpointId,
      enabled: false,
      source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
      auth: { scheme: 'none' },
    };
    const children = childCount();
    const r = await discoverEndpoints({
      requestedBy: 'operator',
      env: { MHS_ENDPOINTS: `${a.url}, stdio:${STDIO_LINE}` },
      endpointsFile: file,
      registry: async () => [registryRow],
      baseUrls: [a.url, b.url],
    });
    expect(r.errors).toEqual([]);
    expect(childCount()).toBe(children);
    expect(r.endpoints).toHaveLength(3);
    const laser = r.endpoints.find((e) => e.endpoint_id === a.endpointId)!;
    expect(laser).toMatchObject({
      connector_id: connectorIdFor({ endpoint_id: a.endpointId }),
      transport: 'http',
      url: a.mcpUrl,
      source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
      // Credentials come from the source that states them and stay with this endpoint (HOST-011).
      auth: { scheme: 'bearer', token_env: 'LASER_TOKEN' },
    });
    expect(laser.seen_in.map((s) => s.kind)).toEqual(['env', 'file', 'registry', 'well-known']);
    const stdio = r.endpoints.find((e) => e.transport === 'stdio')!;
    expect(stdio).toMatchObject({
      command: STDIO_ARGV,
      auth: { scheme: 'local' },
      endpoint_id: null,
      source: { kind: 'env' },
      connector_id: connectorIdFor({ command: STDIO_ARGV }),
    });
    expect(stdio.seen_in.map((s) => s.kind)).toEqual(['env', 'file']);
    const multi = r.endpoints.find((e) => e.endpoint_id === b.endpointId)!;
    expect(multi.source).toEqual({ kind: 'well-known', ref: b.url });
    expect(sourceTrust(multi.source.kind)).toBe('unauthenticated descriptor');

    // Without the env and file, the registry row is what lists the laser endpoint.
    const fromRegistry = await discoverEndpoints({
      requestedBy: 'config',
      env: {},
      endpointsFile: null,
      registry: async () => [registryRow],
      baseUrls: [a.url],
    });
    expect(fromRegistry.endpoints.map((e) => [e.source.kind, e.seen_in.map((s) => s.kind)])).toEqual([
      ['registry', ['registry', 'well-known']],
    ]);
  });

  it('reports malformed MHS_ENDPOINTS entries, endpoints.json and descriptors by source and keeps the rest', async () => {
    const bad = await jsonServer({ '/.well-known/mhs.json': { mhs_version: '0.9', endpoint_id: 'not a uri' } });
    const notJson = await jsonServer({ '/.well-known/mhs.json': '{oops' });
    servers.push(bad.server, notJson.server);
    const brokenFile = tmpFile('endpoints.json', '{"endpoints": [');
    const r1 = await discoverEndpoints({
      requestedBy: 'operator',
      env: { MHS_ENDPOINTS: `ftp://nowhere,stdio:   ,${a.url},${bad.url}` },
      endpointsFile: brokenFile,
      baseUrls: [notJson.url, 'http://127.0.0.1:1', b.url],
      timeoutMs: 3000,
    });
    expect(r1.endpoints.map((e) => e.endpoint_id).sort()).toEqual([a.endpointId, b.endpointId].sort());
    const bySource = r1.errors.map((e) => [e.code, e.details.source]);
    expect(bySource).toEqual(
      expect.arrayContaining([
        [ErrorCode.HOST_CONFIG_INVALID, 'env:MHS_ENDPOINTS'],
        [ErrorCode.HOST_CONFIG_INVALID, `file:${brokenFile}`],
        [ErrorCode.HOST_DESCRIPTOR_INVALID, 'env:MHS_ENDPOINTS'],
        [ErrorCode.HOST_DESCRIPTOR_INVALID, `well-known:${notJson.url}`],
        [ErrorCode.HOST_DESCRIPTOR_INVALID, 'well-known:http://127.0.0.1:1'],
      ]),
    );
    expect(r1.errors).toHaveLength(6);
    expect(r1.errors.find((e) => e.details.url === `${bad.url}/.well-known/mhs.json`)?.code).toBe(
      ErrorCode.HOST_DESCRIPTOR_INVALID,
    );

    // One bad entry in endpoints.json is reported by index; its good entries still count.
    const partly = tmpFile('endpoints.json', JSON.stringify({ endpoints: [{ url: 'gopher://x' }, { url: b.url }] }));
    const r2 = await discoverEndpoints({ requestedBy: 'operator', env: {}, endpointsFile: partly });
    expect(r2.endpoints.map((e) => e.endpoint_id)).toEqual([b.endpointId]);
    expect(r2.errors.map((e) => [e.code, e.details.source, e.details.index])).toEqual([
      [ErrorCode.HOST_CONFIG_INVALID, `file:${partly}`, 0],
    ]);
  });

  it('HOST-011: a bearer endpoint takes its token from the source that states it, and only that endpoint gets it', async () => {
    const descriptor = (await (await fetch(`${a.url}/.well-known/mhs.json`)).json()) as Record<string, unknown>;
    const guarded = await jsonServer({
      '/.well-known/mhs.json': { ...descriptor, endpoint_id: 'mhs://guarded:1', auth: { scheme: 'bearer' } },
    });
    servers.push(guarded.server);
    const file = tmpFile(
      'endpoints.json',
      JSON.stringify({ endpoints: [{ url: guarded.url, auth: { scheme: 'bearer', token_env: 'GUARDED_TOKEN' } }] }),
    );
    const r = await discoverEndpoints({
      requestedBy: 'operator',
      env: { MHS_ENDPOINTS: `${guarded.url},${b.url}` },
      endpointsFile: file,
    });
    const g = r.endpoints.find((e) => e.endpoint_id === 'mhs://guarded:1')!;
    expect(g.source.kind).toBe('env');
    expect(g.auth).toEqual({ scheme: 'bearer', token_env: 'GUARDED_TOKEN' });
    expect(r.endpoints.find((e) => e.endpoint_id === b.endpointId)!.auth).toEqual({ scheme: 'none' });
  });

  it('never runs because a model asked', async () => {
    const err = await discoverEndpoints({ requestedBy: 'model' as 'operator', env: {} }).catch((e: unknown) => e);
    expect((err as HostError).code).toBe(ErrorCode.HOST_POLICY_DENIED);
  });

  it('reads federated registries only when the operator enabled them', async () => {
    const reg = await jsonServer({ '/registry.json': { endpoints: [{ url: b.url }] } });
    servers.push(reg.server);
    const off = await discoverEndpoints({
      requestedBy: 'operator',
      env: {},
      endpointsFile: null,
      federated: { enabled: false, registries: [`${reg.url}/registry.json`] },
    });
    expect(off.endpoints).toEqual([]);
    expect(reg.hits()).toBe(0);
    const on = await discoverEndpoints({
      requestedBy: 'operator',
      env: {},
      endpointsFile: null,
      federated: { enabled: true, registries: [`${reg.url}/registry.json`] },
    });
    expect(on.endpoints.map((e) => [e.endpoint_id, e.source.kind])).toEqual([[b.endpointId, 'federated']]);
    expect(sourceTrust('federated')).toBe('untrusted registry record');
  });

  it('a discovered endpoint connects once enabled, with its descriptor digest and claim checked (HOST-073)', async () => {
    const r = await discoverEndpoints({ requestedBy: 'operator', env: { MHS_ENDPOINTS: b.url }, endpointsFile: null });
    const { key: _k, ...found } = r.endpoints[0]!;
    const row: ConnectorRow = { ...found, enabled: true };
    const c = await connect(row, { descriptor: row.descriptor ?? null });
    expect(c.manifest.manifest_digest).toBe(row.descriptor?.manifest_digest);
    expect(c.manifest.devices.map((d) => d.device_id).sort()).toEqual(['liquid-handler', 'thermostat']);
    await c.close();
    // A descriptor announcing another manifest digest is refused.
    const stale = { ...row.descriptor!, manifest_digest: 'f'.repeat(64) };
    const err = (await connect(row, { descriptor: stale }).catch((e: unknown) => e)) as HostError;
    expect(err.code).toBe(ErrorCode.HOST_MANIFEST_INVALID);
    expect(err.details.reason).toBe('descriptor_digest_mismatch');
  });
});
