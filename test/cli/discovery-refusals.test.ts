// Guarantee (issue 20 item 2, HOST-010): `mhs-host endpoints list` refuses a descriptor that redirects to another
// origin and records the refusal: the other origin is never fetched, no connector row is stored, and the host ledger
// holds an `error` entry (stage `discovery`) naming the source and the refused location. Real HTTP servers.
/* eslint-disable @typescript-eslint/no-explicit-any -- ledger entries are read loosely in assertions */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { cli, ledgerEntries } from '../helpers/mhs-host.js';

const servers: Server[] = [];
async function listen(handler: RequestListener): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

describe('a cross-origin redirect on the discovery path', () => {
  it('is refused, never followed, stores nothing and is recorded in the ledger', async () => {
    const hits: string[] = [];
    const other = await listen((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(404).end();
    });
    const base = await listen((_req, res) => {
      res.writeHead(302, { location: `${other}/.well-known/mhs.json` }).end();
    });
    const dir = mkdtempSync(join(tmpdir(), 'mhs-discovery-refusal-'));
    const db = join(dir, 'host.db');
    const env = { MHS_ENDPOINTS_FILE: join(dir, 'none.json'), MHS_ENDPOINTS: '' };
    const out = await cli(['endpoints', 'list', '--db', db, '--base-url', base, '--json'], env);
    expect(out.code, out.stderr).toBe(0);
    const listed = JSON.parse(out.stdout) as { endpoints: unknown[]; errors: any[] };
    expect(listed.endpoints).toEqual([]);
    expect(listed.errors).toHaveLength(1);
    expect(hits).toEqual([]);
    const recorded = (await ledgerEntries(db)).filter(
      (e: any) => e.kind === 'error' && e.stage === 'discovery',
    ) as any[];
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      source: `well-known:${base}`,
      error: {
        mhs_code: ErrorCode.HOST_DESCRIPTOR_INVALID,
        details: { reason: 'cross_origin_redirect', location: `${other}/.well-known/mhs.json` },
      },
    });
  });
});
