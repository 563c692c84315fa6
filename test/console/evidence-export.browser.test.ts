// Guarantees (issue 18 item 4: "export a package from the page"), in Debian's Chromium against a real
// `mhs-host serve` over a real HTTP simulator, with governed commands sent by the MCP gateway: the ledger page's
// "Export evidence package" downloads the package `mhs-host ledger export` writes (one tar of one folder), showing
// its size and status; unpacked by the system's tar, the real offline verifier (`verifyPackage`) accepts it and
// its ledger holds the commands' receipts; the export is recorded as `evidence.export` with the operator. Only an
// operator token may export: a client or agent token gets 403 `forbidden`, none 401, and a client is not offered
// the button. From a tampered store the package is still delivered, and the page and the verifier both say
// `MHS.EVIDENCE.CHAIN_BROKEN` (HOST-053: never "verified").
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { verifyPackage } from '../../src/ledger/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { ARTIFACTS, HAVE_CHROMIUM, launchChromium, signIn, tamperFirstEntry } from './console-kit.js';

const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');

let browser: Browser;
let host: MhsHost<'th'>;

/** Clicks "Export evidence package" and unpacks the download with the system's tar; returns the package folder. */
async function download(page: Page): Promise<{ name: string; tarPath: string; dir: string }> {
  const [d] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export evidence package' }).click(),
  ]);
  const name = d.suggestedFilename();
  const tarPath = join(mkdtempSync(join(tmpdir(), 'mhs-pkg-dl-')), name);
  await d.saveAs(tarPath);
  const out = mkdtempSync(join(tmpdir(), 'mhs-pkg-x-'));
  execFileSync('tar', ['-xf', tarPath, '-C', out]);
  return { name, tarPath, dir: join(out, name.replace(/\.tar$/, '')) };
}

const pageAs = (token: string): Promise<Page> => signIn(browser, host.srv!.url, token);

const exportAs = (token?: string) =>
  fetch(`${host.srv!.url}/v1/operator/ledger/export`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

describe.skipIf(!HAVE_CHROMIUM)('the evidence package from the ledger page (Chromium, real serve)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'pkg',
      sims: { th: ['thermostat', ['--operator-tools']] },
      tokens: { 'lab-agent': 'agent', alice: 'operator', carol: 'client' },
    });
    const client = await gatewayHttp(host.srv!.url, host.tokens['lab-agent'], '2026-07-28');
    try {
      for (const setpoint_c of [21, 23]) {
        const r = await call(client, SETPOINT, { setpoint_c }, { timeout: 60_000 });
        expect(r.body.receipt, JSON.stringify(r.body)).toMatchObject({ status: 'completed' });
      }
    } finally {
      await client.close();
    }
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('downloads the package with its size and status; the offline verifier accepts it; the export is recorded', async () => {
    const page = await pageAs(host.tokens.alice!);
    try {
      await page.locator('a[href="#h-ledger"]').click();
      const { name, tarPath, dir } = await download(page);
      expect(name).toMatch(/^mhs-evidence-seq\d+\.tar$/);
      const bytes = readFileSync(tarPath).byteLength;
      const status = page.locator('#package-status.ok');
      await status.waitFor();
      await expect(status.textContent()).resolves.toContain(`Exported ${name}`);
      await expect(status.textContent()).resolves.toContain('verified');
      await expect(status.textContent()).resolves.toMatch(/\((\d+ B|[\d.]+ [kM]B)\)/);
      await page
        .locator('section[aria-labelledby="h-ledger"]')
        .screenshot({ path: `${ARTIFACTS}package-export-ledger-1280.png` });

      // Unpacked by the system's tar (not by our code), then checked by the verifier from its files alone.
      const v = await verifyPackage(dir);
      expect(v, JSON.stringify(v)).toMatchObject({ ok: true });
      const lines = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').trimEnd().split('\n');
      const receipts = lines.map((l) => JSON.parse(l) as { kind: string }).filter((e) => e.kind === 'receipt');
      expect(receipts).toHaveLength(2);
      expect(bytes).toBeGreaterThan(0);

      const exports = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'evidence.export');
      expect(exports).toHaveLength(1);
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
        manifest_sha256: string;
        ledger: { head_seq: number };
      };
      expect(exports[0]).toMatchObject({
        status: 'verified',
        delivered: 'download',
        out_dir: null,
        manifest_sha256: manifest.manifest_sha256,
        head_seq: manifest.ledger.head_seq,
        operator: { kind: 'human', name: 'alice' },
      });
    } finally {
      await page.close();
    }
  }, 90_000);

  it('only an operator token may export: client and agent 403 forbidden, none 401; a client has no button', async () => {
    const before = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'evidence.export').length;
    for (const token of [host.tokens.carol, host.tokens['lab-agent']]) {
      const res = await exportAs(token);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'forbidden' });
    }
    const anon = await exportAs();
    expect(anon.status).toBe(401);
    // Nothing was exported or recorded for a refused request.
    expect((await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'evidence.export')).toHaveLength(before);

    const page = await pageAs(host.tokens.carol!);
    try {
      await page.locator('#ledger').waitFor();
      await expect(page.getByRole('button', { name: 'Export evidence package' }).count()).resolves.toBe(0);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('HOST-053: from a tampered store the package is delivered unverified, and page and verifier say CHAIN_BROKEN', async () => {
    tamperFirstEntry(host.dbPath);
    const page = await pageAs(host.tokens.alice!);
    try {
      await page.locator('a[href="#h-ledger"]').click();
      const { dir } = await download(page);
      const status = page.locator('#package-status.error');
      await status.waitFor();
      await expect(status.textContent()).resolves.toContain('unverified');
      await expect(status.textContent()).resolves.toContain(`${ErrorCode.EVIDENCE_CHAIN_BROKEN} ledger.jsonl seq 1`);
      const v = await verifyPackage(dir);
      expect(v).toMatchObject({ ok: false, code: ErrorCode.EVIDENCE_CHAIN_BROKEN });
      const [last] = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'evidence.export').slice(-1);
      expect(last).toMatchObject({ status: 'unverified', break: { code: ErrorCode.EVIDENCE_CHAIN_BROKEN, seq: 1 } });
    } finally {
      await page.close();
    }
  }, 60_000);
});
