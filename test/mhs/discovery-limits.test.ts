// Issue 20 item 2 (HOST-010): discovery follows redirects only within the origin it was given (another origin would
// store an endpoint the operator never named), reports each same-origin hop, and limits a descriptor's size and
// time: an oversize or endless body is cut at the limit, a silent server ends at the deadline. Real HTTP servers.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { DISCOVERY_MAX_BYTES } from '../../src/mhs/discovery-sources.js';
import { discoverEndpoints } from '../../src/mhs/discovery.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function server(handler: Handler): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const s: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

let sim: SimHttp;
let descriptor: unknown;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  sim = await startSimHttp('conveyor');
  descriptor = await (await fetch(`${sim.url}/.well-known/mhs.json`)).json();
});
afterAll(async () => {
  for (const c of closers) await c();
  await sim?.stop();
});

const discover = (baseUrl: string, timeoutMs = 5000) =>
  discoverEndpoints({ requestedBy: 'operator', env: {}, endpointsFile: null, baseUrls: [baseUrl], timeoutMs });

describe('discovery limits (issue 20, HOST-010)', { timeout: 60_000 }, () => {
  it('a redirect to another origin is refused, named, and never followed', async () => {
    const other = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(descriptor));
    });
    closers.push(other.close);
    const redirecting = await server((_req, res) => {
      res.writeHead(302, { location: `${other.url}/.well-known/mhs.json` });
      res.end();
    });
    closers.push(redirecting.close);
    const r = await discover(redirecting.url);
    expect(r.endpoints).toEqual([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({
      code: ErrorCode.HOST_DESCRIPTOR_INVALID,
      details: { reason: 'cross_origin_redirect', location: `${other.url}/.well-known/mhs.json` },
    });
    expect(r.errors[0]?.remediation).toContain('another origin');
    expect(other.hits).toEqual([]);
  });

  it('a same-origin redirect is followed and reported', async () => {
    const s = await server((req, res) => {
      if (req.url === '/.well-known/mhs.json') {
        res.writeHead(301, { location: '/v2/.well-known/mhs.json' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(descriptor));
    });
    closers.push(s.close);
    const r = await discover(s.url);
    expect(r.errors).toEqual([]);
    expect(r.endpoints.map((e) => e.endpoint_id)).toEqual([sim.endpointId]);
    expect(r.redirects).toEqual([
      { source: `well-known:${s.url}`, from: `${s.url}/.well-known/mhs.json`, to: `${s.url}/v2/.well-known/mhs.json` },
    ]);
  });

  it('an oversize descriptor and an endless one are cut at the limit; a silent server ends at the deadline', async () => {
    const big = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...(descriptor as object), pad: 'x'.repeat(DISCOVERY_MAX_BYTES) }));
    });
    closers.push(big.close);
    let sent = 0;
    const endless = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked, no length
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      res.write('{"pad":"');
      pump();
    });
    closers.push(endless.close);
    const silent = await server(() => undefined);
    closers.push(silent.close);

    for (const url of [big.url, endless.url]) {
      const r = await discover(url);
      expect(r.endpoints).toEqual([]);
      expect(r.errors[0]).toMatchObject({
        code: ErrorCode.HOST_DESCRIPTOR_INVALID,
        details: { reason: 'too_large', limit: DISCOVERY_MAX_BYTES },
      });
    }
    // The endless body was not read to its end (there is none): the host stopped within a few buffers of the limit.
    expect(sent).toBeLessThan(DISCOVERY_MAX_BYTES * 16);
    const quiet = await discover(silent.url, 300);
    expect(quiet.errors[0]).toMatchObject({ code: ErrorCode.HOST_DESCRIPTOR_INVALID });
    expect(quiet.errors[0]?.message).toContain('no complete answer within 300 ms');
  });
});
