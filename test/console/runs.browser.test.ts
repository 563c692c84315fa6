// Guarantees (issue 18 item 2, acceptance), with Debian's Chromium driven by playwright-core against a real
// `mhs-host serve`: a run started from the console runs to an approval gate; the run list says what it waits
// on; the gate is answered in the console and the run completes; the timeline shows each event as it arrives
// (the interrupt before the answer, the completion after it, without a reload) and in the log's order; a second
// run is cancelled from the console.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { shootViews } from './console-shots.js';

const CHROMIUM = process.env.MHS_TEST_CHROMIUM || '/usr/bin/chromium';
const HAVE_CHROMIUM = !!process.env.MHS_TEST_CHROMIUM || existsSync('/usr/bin/chromium');

const GATED = {
  id: 'console-gated',
  name: 'Gated transfer',
  version: '1.0',
  nodes: [
    {
      id: 'gate',
      typeId: 'core.approvalGate',
      name: 'Proceed?',
      position: { x: 0, y: 0 },
      config: { title: 'Proceed with the transfer?' },
      inputs: {},
    },
    { id: 'after', typeId: 'core.noop', name: 'After the gate', position: { x: 200, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'g-a', sourceNodeId: 'gate', targetNodeId: 'after' }],
  triggers: [{ id: 'manual', type: 'manual', enabled: true }],
  variables: [],
  metadata: {},
  settings: { timeout: 0 },
};

let browser: Browser;
let host: MhsHost<'th'>;
let page: Page;

/** A REST call with the operator's token (bodies indexed freely, as in the other REST tests). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${host.srv!.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${host.tokens.alice}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const detail = (status?: string) => page.locator(status ? `#run-detail[data-status="${status}"]` : '#run-detail');

describe.skipIf(!HAVE_CHROMIUM)('runs in the console (Chromium, real serve)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    host = await startMhsHost({
      prefix: 'runs',
      sims: { th: ['thermostat', ['--operator-tools']] },
      tokens: { alice: 'operator' },
    });
    expect((await rest('POST', '/v1/workflows', GATED)).status).toBe(201);
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`${host.srv!.url}/console/`);
    await page.getByLabel('Operator or client token').fill(host.tokens.alice!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('body[data-ready="true"]').waitFor();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('a run started in the console waits at its approval gate, is answered there, and its timeline follows it live', async () => {
    await page.locator('#run-workflow option[value="console-gated"]').waitFor({ state: 'attached' });
    await page.getByLabel('Workflow').selectOption('console-gated');
    await page.getByRole('button', { name: 'Start run' }).click();
    await detail('waiting-approval').waitFor();
    const runId = (await detail().getAttribute('data-run-id'))!;
    // Live: the interrupt is on the timeline before anyone answers it.
    await page.locator('#run-timeline tr[data-type="interrupt.requested"]').waitFor();
    const row = page.locator(`#runs tr[data-run-id="${runId}"][data-status="waiting-approval"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('an approval');
    const gate = page.locator('article.interrupt[data-node-id="gate"]');
    await expect(gate.textContent()).resolves.toContain('Proceed with the transfer?');
    await shootViews(page, 'runs-waiting-approval');
    await gate.getByLabel('Comment (optional)').fill('looks right');
    await gate.getByRole('button', { name: 'Accept' }).click();
    await detail('completed').waitFor();
    await page.locator('#run-timeline tr[data-type="run.completed"]').waitFor();
    await page.locator('#run-nodes tr[data-node-id="after"][data-status="completed"]').waitFor();
    // Every event of the log, once each and in order, as the host stored it.
    const log = (await rest('GET', `/v1/runs/${runId}/events`)).body.events as Array<{ type: string }>;
    const shown = await page
      .locator('#run-timeline tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')));
    expect(shown).toEqual(log.map((e) => e.type));
    const snap = (await rest('GET', `/v1/runs/${runId}`)).body;
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.gate.outputs).toMatchObject({ approved: true, action: 'accept', comment: 'looks right' });
  });

  it('a run is cancelled from the console', async () => {
    await page.getByLabel('Workflow').selectOption('console-gated');
    await page.getByRole('button', { name: 'Start run' }).click();
    await detail('waiting-approval').waitFor();
    const runId = (await detail().getAttribute('data-run-id'))!;
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await detail('cancelled').waitFor();
    await page.locator('#run-timeline tr[data-type="run.cancelled"]').waitFor();
    await page.locator(`#runs tr[data-run-id="${runId}"][data-status="cancelled"]`).waitFor();
    expect((await rest('GET', `/v1/runs/${runId}`)).body.status).toBe('cancelled');
    expect(await shootViews(page, 'runs-cancelled')).toEqual([]);
  });
});
