// Guarantees (issue 18 item 1, HOST-091), in Debian's Chromium against a real `mhs-host serve` and a real conveyor
// simulator that executes the first command and never answers it: the agent's call ends MHS.OUTCOME.UNKNOWN, and the
// devices panel shows the device's gate shut by that command's unknown outcome, awaiting reconciliation, in words,
// pushed without a reload; the gate refuses the next command and stays shown shut. (Reopening it is reconciliation's
// part, `mhs-host reconcile`, shown in test/engine/unknown-outcome.test.ts.)
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { codeOf, HAVE_CHROMIUM, launchChromium, shootViews, signIn, statesWithoutWords } from './console-kit.js';

const STEP = capabilityToolName('conveyor-workcell', 'cap.world.step.v1');

let browser: Browser;
let host: MhsHost<'cv'>;
let page: Page;

describe.skipIf(!HAVE_CHROMIUM)('a gate shut by an unknown outcome, in the devices panel (Chromium)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'unk',
      sims: { cv: ['conveyor', ['--operator-tools', '--drop-reply', '1']] },
      tokens: { 'lab-agent': 'agent', alice: 'operator' },
    });
    page = await signIn(browser, host.srv!.url, host.tokens.alice!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('HOST-091: shown shut by the unknown outcome of the command, awaiting reconciliation; the next command is refused', async () => {
    const dev = page.locator('li[data-device-id="conveyor-workcell"]');
    await dev.locator('[data-gate="open"]').waitFor();
    const client = await gatewayHttp(host.srv!.url, host.tokens['lab-agent'], '2026-07-28');
    try {
      const r = await call(client, STEP, { ticks: 1 }, { timeout: 60_000 });
      expect(r.isError, JSON.stringify(r.body)).toBe(true);
      expect(codeOf(r), JSON.stringify(r.body)).toBe(ErrorCode.OUTCOME_UNKNOWN);
      const [unknown] = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'command.unknown');
      const commandId = unknown!.command_id as string;
      const gate = dev.locator(`[data-gate="shut"][data-gate-reason="unknown"][data-command-id="${commandId}"]`);
      await gate.waitFor();
      await expect(gate.textContent()).resolves.toContain(`unknown outcome of ${commandId}, awaiting reconciliation`);
      expect(await statesWithoutWords(page)).toEqual([]);
      expect(await shootViews(page, 'devices-gate-unknown')).toEqual([]);
      // The gate holds: the next command is refused naming the unsettled one.
      const next = await call(client, STEP, { ticks: 1 });
      expect(codeOf(next), JSON.stringify(next.body)).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
      const kinds = (await ledgerEntries(host.dbPath)).filter((e) => e.command_id === commandId).map((e) => e.kind);
      expect(kinds.filter((k) => k !== 'tool_call')).toEqual(['command.intent', 'command.unknown']);
      // Still shown shut (nothing reconciled it meanwhile): the panel follows the store, not a guess.
      await expect(gate.count()).resolves.toBe(1);
    } finally {
      await client.close();
    }
  }, 150_000);
});
