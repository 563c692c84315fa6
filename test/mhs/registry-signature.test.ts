// Guarantee (issue 20 item 2, HOST-014): federated registry records are verified when signed. A real registry over
// HTTP serves records signed by the configured key, by another key, signed then edited, and unsigned; with the
// operator's `--registry-key`, `mhs-host endpoints list --enable-federated` lists the good signature as signed by that
// key and the unsigned record as unsigned, refuses each bad signature with MHS.HOST.REGISTRY_SIGNATURE_INVALID (no
// connector row is stored for it) and records each refusal as a ledger `error` entry; without a key a signed record is
// shown as unverified. Nothing discovered is enabled or connected (HOST-066): stdio records are never spawned.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON output of the CLI is read loosely in assertions */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { discoverEndpoints } from '../../src/mhs/discovery.js';
import { registryKeyOf, signRegistryRecord } from '../../src/mhs/registry-signature.js';
import { cli, ledgerEntries } from '../helpers/mhs-host.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-registry-sig-'));
const trusted = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const pubPem = trusted.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const pubFile = join(dir, 'registry.pub.pem');
writeFileSync(pubFile, pubPem);
// A marker each stdio record would create if discovery ever spawned it.
const marker = (name: string) => join(dir, `spawned-${name}`);
const record = (name: string) => ({ command: ['touch', marker(name)] });

const good = signRegistryRecord(record('good'), trusted.privateKey);
const forged = signRegistryRecord(record('forged'), other.privateKey);
const edited = { ...signRegistryRecord(record('edited'), trusted.privateKey), command: ['touch', marker('edited-2')] };
const plain = record('plain');

let srv: Server;
let url: string;

beforeAll(async () => {
  srv = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ endpoints: [good, forged, edited, plain] }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/registry.json`;
});
afterAll(async () => {
  await new Promise<void>((r) => srv.close(() => r()));
});

const noFile = { endpointsFile: null as unknown as string, env: {} };

describe('federated registry record signatures', () => {
  it('with the registry key: signed, refused, unsigned', async () => {
    const key = registryKeyOf(pubPem, pubFile);
    const r = await discoverEndpoints({
      requestedBy: 'operator',
      ...noFile,
      federated: { enabled: true, registries: [url], keys: [key] },
    });
    const byCmd = new Map(r.endpoints.map((e) => [e.command?.[1], e.source]));
    expect(byCmd.get(marker('good'))).toEqual({ kind: 'federated', ref: url, record: 'signed', key_id: key.id });
    expect(byCmd.get(marker('plain'))).toEqual({ kind: 'federated', ref: url, record: 'unsigned' });
    expect(byCmd.has(marker('forged'))).toBe(false);
    expect(byCmd.has(marker('edited-2'))).toBe(false);
    expect(r.errors.map((e) => [e.code, e.details.index])).toEqual([
      [ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID, 1],
      [ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID, 2],
    ]);
  });

  it('without a key a signed record is listed as unverified, never as signed', async () => {
    const r = await discoverEndpoints({
      requestedBy: 'operator',
      ...noFile,
      federated: { enabled: true, registries: [url] },
    });
    expect(r.errors).toEqual([]);
    expect(r.endpoints.map((e) => e.source.record).sort()).toEqual([
      'unsigned',
      'unverified',
      'unverified',
      'unverified',
    ]);
  });

  it('`endpoints list --registry-key` shows each record’s trust, stores no refused record, and records the refusals', async () => {
    const db = join(dir, 'host.db');
    const args = ['endpoints', 'list', '--db', db, '--enable-federated', '--federated', url, '--registry-key', pubFile];
    const out = await cli([...args, '--json'], { MHS_ENDPOINTS_FILE: join(dir, 'none.json'), MHS_ENDPOINTS: '' });
    expect(out.code, out.stderr).toBe(0);
    const listed = JSON.parse(out.stdout) as { endpoints: any[]; errors: any[] };
    const sources = listed.endpoints.map((e) => e.source as string).sort();
    const id = registryKeyOf(pubPem, pubFile).id;
    expect(sources).toEqual([`federated:${url} (signed ${id})`, `federated:${url} (unsigned)`]);
    expect(listed.endpoints.every((e) => e.enabled === false)).toBe(true);
    expect(listed.errors.map((e) => e.mhs_code ?? e.code)).toEqual([
      ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID,
      ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID,
    ]);
    // The table on a store of its own (on `db` the rows are now the host registry's, the higher source).
    const fresh = args.map((a) => (a === db ? join(dir, 'table.db') : a));
    const table = await cli(fresh, { MHS_ENDPOINTS_FILE: join(dir, 'none.json'), MHS_ENDPOINTS: '' });
    expect(table.stdout).toContain(`(signed ${id})`);
    expect(table.stdout).toContain('(unsigned)');
    expect(table.stderr).toContain(ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID);
    const refusals = (await ledgerEntries(db)).filter(
      (e: any) => e.kind === 'error' && e.stage === 'discovery',
    ) as any[];
    // Two refused records, each one ledger entry.
    expect(refusals).toHaveLength(2);
    expect(refusals[0].error).toMatchObject({ details: { index: 1, source: `federated:${url}` } });
    // Discovery never spawned a stdio record (HOST-066: listed, never connected).
    for (const name of ['good', 'forged', 'edited', 'edited-2', 'plain']) expect(existsSync(marker(name))).toBe(false);
  });
});
