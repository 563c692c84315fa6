// Guarantees (issue 18 items 2-4, acceptance), in Debian's Chromium against a real `mhs-host serve` and a real
// liquid-handler simulator: a run started from the console whose `mhs.invoke` node needs an R2 approval waits at
// that gate; the approval card says which run and node asked; the gate is answered in the run's own view; the
// command runs and the timeline shows the node complete without a reload; the ledger browser filtered to the run
// shows the approval, the command's intent and its receipt (the receipt carries the run), and following the
// command from there shows intent -> receipt. A run cancelled in the console while its approval is pending voids
// that approval: the card goes, the decision row says voided and why, nothing is sent.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import {
  ARTIFACTS,
  HAVE_CHROMIUM,
  launchChromium,
  restAs,
  shootViews,
  shot,
  signIn,
  startRunInConsole,
} from './console-kit.js';
import type { Rest } from './console-kit.js';

let browser: Browser;
let host: MhsHost<'lh'>;
let page: Page;

const detail = (status?: string) => page.locator(status ? `#run-detail[data-status="${status}"]` : '#run-detail');

/** The operator API with alice's token. */
let rest: Rest;

describe.skipIf(!HAVE_CHROMIUM)('a governed command in a console run, followed in the ledger (Chromium)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'runcmd',
      sims: { lh: ['liquid-handler', ['--operator-tools']] },
      tokens: { alice: 'operator' },
    });
    rest = restAs(host.srv!.url, host.tokens.alice!);
    const workflow = {
      id: 'console-aspirate',
      name: 'Aspirate under approval',
      version: '1',
      nodes: [
        {
          id: 'aspirate',
          typeId: 'mhs.invoke',
          name: 'Aspirate',
          position: { x: 0, y: 0 },
          config: {
            endpoint: host.sims.lh.endpointId,
            device: 'liquid-handler',
            capability: 'cap.liquid.aspirate.v1',
            input: { volume_ul: 40 },
          },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    expect((await rest('POST', '/v1/workflows', workflow)).status).toBe(201);
    page = await signIn(browser, host.srv!.url, host.tokens.alice!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('the R2 gate of a console run is answered in the console; the ledger shows the run from approval to receipt', async () => {
    const runId = await startRunInConsole(page, 'console-aspirate', 'waiting-approval');

    // Who asked: the pending approval names the run and the node.
    const card = page.locator('article.approval', { hasText: `by run ${runId} node aspirate` });
    await card.waitFor();
    expect(await shootViews(page, 'run-command-waiting')).toEqual([]);

    const gate = page.locator('#run-detail article.interrupt[data-node-id="aspirate"]');
    await gate.getByRole('button', { name: 'Accept' }).click();
    await detail('completed').waitFor();
    await page.locator('#run-timeline tr[data-type="node.completed"]').waitFor();
    await card.waitFor({ state: 'detached' });

    const mine = (await ledgerEntries(host.dbPath)).filter((e) => e.run_id === runId);
    const intent = mine.find((e) => e.kind === 'command.intent')!;
    const receipt = mine.find((e) => e.kind === 'receipt')!;
    expect(intent).toMatchObject({ node_id: 'aspirate', capability_id: 'cap.liquid.aspirate.v1' });
    expect(receipt).toMatchObject({ command_id: intent.command_id, receipt: { status: 'completed' } });
    expect(mine.some((e) => e.kind === 'approval' && e.event === 'decided')).toBe(true);

    // The ledger browser filtered to the run: every entry of it, the intent and its receipt among them.
    await page.locator('a[href="#h-ledger"]').click();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Run', { exact: true }).fill(runId);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    const seqs = () =>
      page.locator('#ledger tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    await expect.poll(seqs).toEqual(mine.map((e) => e.seq).reverse());
    const cmd = intent.command_id as string;
    await page
      .locator('#ledger tr[data-kind="receipt"]')
      .getByRole('button', { name: `Follow command ${cmd}` })
      .click();
    const kinds = () =>
      page.locator('#ledger tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    const ofCommand = (await ledgerEntries(host.dbPath)).filter((e) => e.command_id === cmd).map((e) => e.kind);
    await expect.poll(kinds).toEqual([...ofCommand].reverse());
    expect(ofCommand.indexOf('command.intent')).toBeLessThan(ofCommand.indexOf('receipt'));
    await page
      .locator('section[aria-labelledby="h-ledger"]')
      .screenshot({ path: `${ARTIFACTS}run-command-ledger-1280.png` });
  }, 90_000);

  it('issue 18 item 3, HOST-045: cancelling a run in the console voids its pending approval, and the console says so', async () => {
    await page.locator('a[href="#h-runs"]').click();
    const runId = await startRunInConsole(page, 'console-aspirate', 'waiting-approval');
    const card = page.locator('article.approval', { hasText: `by run ${runId} node aspirate` });
    await card.waitFor();
    const approvalId = (await card.getAttribute('data-approval-id'))!;
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await detail('cancelled').waitFor();
    // Pushed, no reload: the card is gone and the decision row says voided, and why.
    await card.waitFor({ state: 'detached' });
    const row = page.locator(`#decisions tr[data-approval-id="${approvalId}"][data-status="voided"]`);
    await row.waitFor();
    await expect(row.locator('td.status').textContent()).resolves.toBe('voided: its run or node was cancelled');
    await expect(row.locator('td.reason').textContent()).resolves.toBe('run_cancelled');
    await shot(page.locator('section[aria-labelledby="h-decisions"]'), 'run-cancelled-approval-voided');
    const mine = (await ledgerEntries(host.dbPath)).filter((e) => e.run_id === runId);
    expect(mine.filter((e) => e.kind === 'approval').map((e) => [e.event, e.reason ?? null])).toEqual([
      ['requested', null],
      ['voided', 'run_cancelled'],
    ]);
    // Nothing was sent: no intent, no receipt for the cancelled run.
    expect(mine.filter((e) => e.kind === 'command.intent' || e.kind === 'receipt')).toEqual([]);
    expect((await rest('POST', `/v1/operator/approvals/${approvalId}/approve`, {})).status).toBe(409);
  }, 90_000);
});
