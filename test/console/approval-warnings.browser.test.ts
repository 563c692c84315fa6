// Guarantees (issue 18 item 3, the approval card's warnings), in Debian's Chromium driven by playwright-core against a
// real `mhs-host serve` (its policy asks an operator from R1 up), a real thermostat simulator and the MCP gateway as
// the agent: while an approval waits, another command on the same device in flight shuts the device's gate and the
// waiting card says so, naming that command, pushed without a reload; the e-stop engaged on the device is said on
// the card too; when the stopped command settles the gate warning goes; both are told in words (role alert).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { serve } from '../server/serve-helpers.js';
import { ARTIFACTS, restAs, HAVE_CHROMIUM, launchChromium, signIn } from './console-kit.js';
import type { Rest } from './console-kit.js';

const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');

let browser: Browser;
let host: MhsHost<'th'>;
let page: Page;

/** The operator API with alice's token. */
let rest: Rest;

/** The pending approval bound to `input`, once the host lists it. */
async function pendingFor(input: Record<string, unknown>): Promise<{ approval_id: string }> {
  for (;;) {
    const list = (await rest('GET', '/v1/operator/approvals?status=pending')).body.approvals as Array<{
      approval_id: string;
      input_digest: string;
    }>;
    const found = list.find((a) => a.input_digest === H(input));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!HAVE_CHROMIUM)('approval card warnings under serve (Chromium)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'warn',
      sims: { th: ['thermostat', ['--operator-tools']] },
      // Two agents: the gateway keys a waiting approval by principal and tool, so one agent's second call would
      // withdraw its first (input_changed).
      tokens: { 'lab-agent': 'agent', 'lab-agent-2': 'agent', alice: 'operator' },
      serve: false,
    });
    const policy = join(mkdtempSync(join(tmpdir(), 'mhs-warn-')), 'policy.json');
    writeFileSync(
      policy,
      JSON.stringify({
        requireApprovalFrom: 'R1',
        estopAllow: [{ endpoint_id: host.sims.th.endpointId, device_id: '*' }],
      }),
    );
    host.srv = await serve(host.dbPath, ['--no-workflows', '--policy', policy, '--mcp-approval-wait', '120000']);
    rest = restAs(host.srv.url, host.tokens.alice!);
    page = await signIn(browser, host.srv.url, host.tokens.alice!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('a waiting card says when the gate is shut by another command and when the e-stop is engaged', async () => {
    await page.locator(`article[data-connector-id="${host.connectors.th}"][data-connection="connected"]`).waitFor();
    const agentB = await gatewayHttp(host.srv!.url, host.tokens['lab-agent'], '2026-07-28');
    const agentA = await gatewayHttp(host.srv!.url, host.tokens['lab-agent-2'], '2026-07-28');
    try {
      // B waits for the operator; its card shows no warning while the device is idle.
      const waitingB = call(agentB, SETPOINT, { setpoint_c: 30 }, { timeout: 120_000 });
      const b = await pendingFor({ setpoint_c: 30 });
      const card = page.locator(`article[data-approval-id="${b.approval_id}"]`);
      await card.waitFor();
      await expect(card.locator('.gate-warning, .estop-warning').count()).resolves.toBe(0);

      // A, approved, runs 20 -> 90 degC at 5 degC/s: the device's gate is shut while B still waits.
      const runningA = call(agentA, SETPOINT, { setpoint_c: 90 }, { timeout: 120_000 });
      const a = await pendingFor({ setpoint_c: 90 });
      expect((await rest('POST', `/v1/operator/approvals/${a.approval_id}/approve`, {})).status).toBe(200);
      const gateWarning = card.locator('.gate-warning[role="alert"]');
      await gateWarning.waitFor({ timeout: 20_000 });
      const shut = (await rest('GET', '/v1/operator/devices')).body.endpoints[0].devices[0].gate;
      expect(shut.status).toBe('shut');
      await expect(gateWarning.textContent()).resolves.toContain(`command ${shut.command_id}`);
      await card.screenshot({ path: `${ARTIFACTS}approval-warning-gate-shut.png` });

      // The operator stops the device: the card says the e-stop is engaged; A fails and its gate opens again.
      expect(
        (await rest('POST', '/v1/operator/estop', { endpoint_id: host.sims.th.endpointId, device_id: 'thermostat' }))
          .status,
      ).toBe(200);
      const estopWarning = card.locator('.estop-warning[role="alert"]');
      await estopWarning.waitFor({ timeout: 20_000 });
      await expect(estopWarning.textContent()).resolves.toContain('e-stop is engaged');
      const r = await runningA;
      expect(r.body.receipt, JSON.stringify(r.body)).toMatchObject({
        status: 'failed',
        error: { mhs_code: ErrorCode.SAFETY_ESTOP_ACTIVE },
      });
      await gateWarning.waitFor({ state: 'detached', timeout: 20_000 });
      await card.screenshot({ path: `${ARTIFACTS}approval-warning-estop.png` });

      await card.getByRole('button', { name: 'Deny' }).click();
      const denied = await waitingB;
      expect(JSON.stringify(denied.body)).toContain(ErrorCode.HOST_APPROVAL_DENIED);
      expect(
        (await rest('POST', '/v1/operator/reset', { endpoint_id: host.sims.th.endpointId, device_id: 'thermostat' }))
          .status,
      ).toBe(200);
    } finally {
      await agentA.close();
      await agentB.close();
    }
  }, 120_000);
});
