// Guarantees (issue 14, acceptance "the approval appears in the console"), with Debian's Chromium driven by
// playwright-core against a real `mhs-host serve` and the official MCP client at `/mcp`: an R2 tool call of an
// agent token waits; the operator's console shows the approval card at once, naming the agent that asked; the
// operator approves it there and the same, still open tool call returns the completed receipt.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { startMhsHost } from '../helpers/mhs-host.js';
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
});
