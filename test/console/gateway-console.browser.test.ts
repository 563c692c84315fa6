// Guarantees (issue 14, acceptance "the approval appears in the console"), with Debian's Chromium driven by
// playwright-core against a real `mhs-host serve` and the official MCP client at `/mcp`: an R2 tool call of an
// agent token waits; the operator's console shows the approval card at once, naming the agent that asked; the
// operator approves it there and the same, still open tool call returns the completed receipt. A call of
// `mhs-host invoke` waiting for approval says on its card that it came from the CLI and which OS user ran it.
import { userInfo } from 'node:os';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { ledgerEntries, startCli, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { HAVE_CHROMIUM, launchChromium, signIn } from './console-kit.js';

const ASPIRATE = capabilityToolName('liquid-handler', 'cap.liquid.aspirate.v1');

let browser: Browser;
let host: MhsHost<'lh'>;

describe.skipIf(!HAVE_CHROMIUM)('a gateway approval in the console (Chromium)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'gwc',
      sims: { lh: ['liquid-handler', ['--operator-tools']] },
      tokens: { 'lab-agent': 'agent', alice: 'operator' },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('HOST-040: the R2 call of an agent shows up at once, is approved in the console, and the call returns the receipt', async () => {
    const page = await signIn(browser, host.srv!.url, host.tokens.alice!, { width: 1280, height: 1400 });

    const client = await gatewayHttp(host.srv!.url, host.tokens['lab-agent'], '2026-07-28');
    try {
      const pending = call(client, ASPIRATE, { volume_ul: 40 }, { timeout: 90_000 });
      const card = page.locator('article.approval', { hasText: 'cap.liquid.aspirate.v1' });
      await card.waitFor({ timeout: 20_000 });
      await expect(card.locator('span.digest[data-digest]').getAttribute('data-digest')).resolves.toBe(
        H({ volume_ul: 40 }),
      );
      await expect(card.locator('dd.requested-by').textContent()).resolves.toBe('agent lab-agent');
      await card.getByRole('button', { name: 'Approve' }).click();
      const r = await pending;
      expect(r.isError).toBe(false);
      expect(r.body.receipt.status).toBe('completed');
      await expect(card.count()).resolves.toBe(0);
    } finally {
      await client.close();
      await page.close();
    }
  });
  it('issue 18 item 3: a CLI call waiting for approval says it came from `mhs-host invoke` and whom; approved in the console', async () => {
    const page = await signIn(browser, host.srv!.url, host.tokens.alice!, { width: 1280, height: 1400 });
    const inv = startCli([
      'invoke',
      host.connectors.lh,
      'liquid-handler',
      'cap.liquid.aspirate.v1',
      '--input',
      JSON.stringify({ volume_ul: 41 }),
      '--db',
      host.dbPath,
    ]);
    try {
      const [, approvalId] = await inv.waitStderr(/approval needed (apr_[0-9A-HJKMNP-TV-Z]{26})/);
      const card = page.locator(`article.approval[data-approval-id="${approvalId}"]`);
      // The CLI is another process: serve's console sees its request at the next re-read (every 5 s).
      await card.waitFor({ timeout: 20_000 });
      await expect(card.locator('dd.requested-by').textContent()).resolves.toBe(
        `human ${userInfo().username} (mhs-host invoke)`,
      );
      await expect(card.locator('dd.asked').textContent()).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
      await card.getByRole('button', { name: 'Approve' }).click();
      const r = await inv.done;
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed' });
      const [intent] = (await ledgerEntries(host.dbPath)).filter(
        (e) => e.kind === 'command.intent' && e.approval_id === approvalId,
      );
      expect(intent?.principal).toEqual({
        kind: 'human',
        id: `cli:${userInfo().username}`,
        name: `${userInfo().username} (mhs-host invoke)`,
      });
    } finally {
      inv.child.kill('SIGKILL');
      await page.close();
    }
  }, 90_000);
});
