// Guarantees (issue 18 item 3, approvals with context), in Debian's Chromium driven by playwright-core against a
// real host slice (simulator over HTTP, engine, SQLite store, operator API and console): two pending approvals of
// two different capabilities each have a plain-words headline naming what the command does and its values, show
// the allowed range of their numeric input from the binding's input JSON Schema in the stored manifest next to the
// value requested, flag in words a value the stored manifest no longer allows, and show when they expire (the
// host policy's approvalTimeoutMs from created_at). The approval list response carries that context. A headline
// names the binding's required inputs first (the schema's order), then the others alphabetically.
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, isoAt, RealClock } from '../../src/core/index.js';
import { registerConsole } from '../../src/console/index.js';
import type { CapabilityBinding } from '../../src/mhs/index.js';
import type { ApprovalRequest } from '../../src/policy/approval-rules.js';
import { DEFAULT_POLICY } from '../../src/policy/index.js';
import type { PolicyConfig } from '../../src/policy/index.js';
import type { EndpointDirectory, EndpointSummary } from '../../src/policy/ports.js';
import { registerOperatorRoutes } from '../../src/server/operator-routes.js';
import { startOperatorHost } from '../policy/helpers/operator-host.js';
import type { OperatorHost } from '../policy/helpers/operator-host.js';
import { HAVE_CHROMIUM, launchChromium, nextRequest, signIn } from './console-kit.js';

const WAIT_MS = 600_000;
/** A device whose capability takes four inputs, two required (`speed_rpm`, `cycles`, in that order). */
const MIXER = new URL('./fixtures/plate-mixer.json', import.meta.url).pathname;

let browser: Browser;
let host: OperatorHost;
let served: FastifyInstance;
let url: string;
let page: Page;
const policy: PolicyConfig = { ...DEFAULT_POLICY, approvalTimeoutMs: WAIT_MS, estopAllow: [] };

async function ask(
  capabilityId: string,
  volume: number,
  device: { deviceId: string; input: Record<string, unknown> } = {
    deviceId: 'liquid-handler',
    input: { volume_ul: volume },
  },
): Promise<{ req: ApprovalRequest; call: Promise<unknown> }> {
  const asked = nextRequest(host);
  const call = host.engine.invoke({ endpointId: host.endpointId, capabilityId, ...device });
  call.catch(() => undefined); // denied at the end of each test
  return { req: await asked, call };
}

/**
 * The host's stored manifests as its own operator API lists them; the dispense binding's maximum is lowered to
 * 20 uL, as if the endpoint had re-announced a narrower manifest after the request was made.
 */
function narrowedDirectory(h: OperatorHost): EndpointDirectory {
  const list = async (): Promise<EndpointSummary[]> => {
    const res = await h.api(h.tokens.client, 'GET', '/v1/operator/endpoints');
    const endpoints = res.body.endpoints as EndpointSummary[];
    for (const e of endpoints) {
      for (const d of e.devices) {
        const b = d.capabilities.find((c: CapabilityBinding) => c.capability_id === 'cap.liquid.dispense.v1');
        const props = (b?.input_schema as { properties?: Record<string, Record<string, unknown>> } | undefined)
          ?.properties;
        if (props?.volume_ul) props.volume_ul.maximum = 20;
      }
    }
    return endpoints;
  };
  return {
    list,
    async device(endpointId, deviceId) {
      return (await list()).find((e) => e.endpoint_id === endpointId)?.devices.find((d) => d.device_id === deviceId);
    },
  };
}

const card = (id: string) => page.locator(`article[data-approval-id="${id}"]`);

describe.skipIf(!HAVE_CHROMIUM)('approvals with context in Chromium', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startOperatorHost({ families: 'liquid-handler', simFlags: ['--device', MIXER], policy });
    // The same host's services, with the policy and a directory the operator routes read (as `serve` wires them).
    served = Fastify({ forceCloseConnections: true });
    const clock = new RealClock();
    const deps = {
      ...host.services,
      ledger: host.ledger,
      directory: narrowedDirectory(host),
      enablement: host.enablement,
      clock,
      policy,
    };
    await registerOperatorRoutes(served, deps);
    await registerConsole(served, deps);
    await served.listen({ port: 0, host: '127.0.0.1' });
    const addr = served.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    page = await signIn(browser, url, host.tokens.op1, { width: 1280, height: 1400 });
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await host?.close();
  });

  it('two pending approvals of two capabilities: headlines, allowed ranges, a flagged value, expiry', async () => {
    const aspirate = await ask('cap.liquid.aspirate.v1', 50);
    const dispense = await ask('cap.liquid.dispense.v1', 30);
    const a = card(aspirate.req.approval_id);
    const d = card(dispense.req.approval_id);
    await a.waitFor();
    await d.waitFor();

    await expect(a.locator('h3').textContent()).resolves.toContain(
      'Aspirate a volume from the source well into the tip: Volume to aspirate 50 uL, on Single-channel liquid handler',
    );
    await expect(d.locator('h3').textContent()).resolves.toContain(
      'Dispense a volume from the tip into the destination well: Volume to dispense 30 uL, on Single-channel liquid handler',
    );
    // The digest stays the binding, beside the headline.
    await expect(a.locator('h3 .digest').textContent()).resolves.toBe(`#${aspirate.req.input_digest.slice(0, 12)}`);

    // Allowed range from the stored manifest next to the requested value.
    const aRow = a.locator('tr[data-path="volume_ul"]');
    await expect(aRow.locator('td.value').textContent()).resolves.toBe('50');
    await expect(aRow.locator('td.allowed').textContent()).resolves.toBe('more than 0 and at most 1000 uL');
    await expect(aRow.locator('td.range-check').textContent()).resolves.toBe('✓ within range');
    const dRow = d.locator('tr[data-path="volume_ul"]');
    await expect(dRow.locator('td.value').textContent()).resolves.toBe('30');
    await expect(dRow.locator('td.allowed').textContent()).resolves.toBe('more than 0 and at most 20 uL');
    await expect(dRow.locator('td.range-check').textContent()).resolves.toBe(
      '⚠ Out of range: above the allowed maximum (at most 20 uL)',
    );

    // Expiry: created_at + the policy's wait limit, absolute and remaining.
    for (const [c, req] of [
      [a, aspirate.req],
      [d, dispense.req],
    ] as const) {
      const text = await c.locator('dd.expires').textContent();
      expect(text).toContain(isoAt(Date.parse(req.created_at) + WAIT_MS));
      expect(text).toMatch(/\d+ min \d+ s left/);
      expect(text).toContain('wait limit 600 s');
    }

    for (const [c, x] of [
      [a, aspirate],
      [d, dispense],
    ] as const) {
      await c.getByRole('button', { name: 'Deny' }).click();
      await expect(x.call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
    }
  });

  it('issue 18 item 4: the headline names the required inputs first, in the schema order, then the rest alphabetically', async () => {
    // Asked in another order: optional fields first, the required ones last and reversed.
    const input = { label: 'batch 7', delay_s: 5, cycles: 3, speed_rpm: 1200 };
    const { req, call } = await ask('cap.mix.run.v1', 0, { deviceId: 'plate-mixer', input });
    const c = card(req.approval_id);
    await c.waitFor();
    await expect(c.locator('h3').textContent()).resolves.toContain(
      'Mix the plate: Speed 1200 rpm, Number of cycles 3, Delay before mixing 5 s and 1 more, on Plate mixer',
    );
    await c.getByRole('button', { name: 'Deny' }).click();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
  });

  it('the approval list carries the input schema and the wait limit; without a known limit it says none', async () => {
    const { req, call } = await ask('cap.liquid.aspirate.v1', 40);
    const withPolicy = await fetch(`${url}/v1/operator/approvals?status=pending`, {
      headers: { authorization: `Bearer ${host.tokens.client}` },
    }).then((r) => r.json() as Promise<{ approvals: Array<Record<string, unknown>> }>);
    const listed = withPolicy.approvals.find((x) => x.approval_id === req.approval_id);
    expect(listed?.input_schema).toMatchObject({ properties: { volume_ul: { maximum: 1000, 'x-unit': 'uL' } } });
    expect(listed?.wait_limit).toMatchObject({
      timeout_ms: WAIT_MS,
      expires_at: isoAt(Date.parse(req.created_at) + WAIT_MS),
      source: 'policy.approvalTimeoutMs',
    });
    // The test host's own routes are registered without the policy: the limit is not known there.
    const plain = await host.api(host.tokens.client, 'GET', '/v1/operator/approvals?status=pending');
    const other = (plain.body.approvals as Array<Record<string, unknown>>).find(
      (x) => x.approval_id === req.approval_id,
    );
    expect(other?.wait_limit).toBeNull();
    const c = card(req.approval_id);
    await c.waitFor();
    await c.getByRole('button', { name: 'Deny' }).click();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
  });
});
