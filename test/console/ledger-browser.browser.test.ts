// Guarantees (issue 18 item 4, the ledger browser), in Debian's Chromium driven by playwright-core against a real
// host slice (conveyor simulator over HTTP, engine, SQLite store, operator API and console): filtering by a run
// shows exactly the entries that carry that run; a time window (since, until) narrows the view to the entries
// stamped inside it; a bad time is refused by the API with `validation_error` naming the field and the console
// says so in words; Export downloads the filtered view as JSON Lines whose lines are the API's answer for the same
// filters, oldest first. A device's commands are drawn on a timeline (uPlot), one per intent the ledger holds for
// it, each with the outcome its receipt recorded (a command stopped by the e-stop shows failed). Paging back through a
// filtered view ("Older entries") shows every matching entry once, newest first.
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import type { LedgerEntry } from '../../src/ledger/ledger-types.js';
import { startOperatorHost } from '../policy/helpers/operator-host.js';
import type { OperatorHost } from '../policy/helpers/operator-host.js';
import { ARTIFACTS, HAVE_CHROMIUM, launchChromium, shootViews, signIn } from './console-kit.js';

const DEVICE = 'conveyor-workcell';
const RUN_A = 'run_01LEDGERBROWSERA000000000';
const RUN_B = 'run_01LEDGERBROWSERB000000000';
const RUN_C = 'run_01LEDGERBROWSERC000000000';

let browser: Browser;
let host: OperatorHost;
let page: Page;

async function step(runId: string, ticks: number): Promise<void> {
  const r = await host.engine.invoke({
    endpointId: host.endpointId,
    deviceId: DEVICE,
    capabilityId: 'cap.world.step.v1',
    input: { ticks },
    runId,
    nodeId: 'move',
  });
  expect(r.receipt.status).toBe('completed');
}

const all = async (): Promise<LedgerEntry[]> => host.ledger.range(0);
/** The seqs the ledger table shows, top to bottom (newest first). */
const shownSeqs = () =>
  page.locator('#ledger tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));

async function filter(values: Record<string, string>): Promise<void> {
  await page.getByRole('button', { name: 'Clear' }).click();
  for (const [label, v] of Object.entries(values)) await page.getByLabel(label, { exact: true }).fill(v);
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
}

describe.skipIf(!HAVE_CHROMIUM)('the ledger browser: run and time filters, export (Chromium)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startOperatorHost({ families: 'conveyor' });
    await step(RUN_A, 1);
    await step(RUN_A, 2);
    await step(RUN_B, 3);
    await step(RUN_B, 4);
    page = await signIn(browser, host.url, host.tokens.op1, { width: 1280, height: 1400 });
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  it('a run filter shows exactly the entries that carry that run: each intent and its receipt', async () => {
    const want = (await all()).filter((e) => e.run_id === RUN_A);
    // Both commands' intents carry the run, and so does each one's receipt (the receipt path threads the run id).
    const intents = want.filter((e) => e.kind === 'command.intent');
    expect(intents).toHaveLength(2);
    const receipts = want.filter((e) => e.kind === 'receipt');
    expect(receipts.map((e) => e.command_id)).toEqual(intents.map((e) => e.command_id));
    await filter({ Run: RUN_A });
    await expect.poll(shownSeqs).toEqual(want.map((e) => e.seq).reverse());
    for (const e of [...intents, ...receipts])
      await page.locator(`#ledger tbody tr[data-seq="${e.seq}"][data-kind="${e.kind}"]`).waitFor();
  });

  it('a time window narrows the view to the entries stamped inside it', async () => {
    const entries = await all();
    const ofB = entries.filter((e) => e.run_id === RUN_B);
    const since = ofB[0]!.ts;
    const until = new Date(Date.parse(ofB[ofB.length - 1]!.ts) + 1).toISOString();
    const inside = (e: LedgerEntry) => Date.parse(e.ts) >= Date.parse(since) && Date.parse(e.ts) < Date.parse(until);
    const want = entries.filter(inside);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(entries.length);
    await filter({ Since: since, Until: until });
    await expect.poll(shownSeqs).toEqual(want.map((e) => e.seq).reverse());
    // With the run filter as well, only run B's entries in the window.
    await filter({ Run: RUN_B, Since: since, Until: until });
    await expect.poll(shownSeqs).toEqual(
      ofB
        .filter(inside)
        .map((e) => e.seq)
        .reverse(),
    );
    await expect(page.locator('#ledger-error').count()).resolves.toBe(0);
  });

  it('a bad time is refused with validation_error naming the field, and the console says so', async () => {
    const res = await host.api(host.tokens.client, 'GET', '/v1/operator/ledger?since=yesterday');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: ErrorCode.VALIDATION_ERROR, details: { errors: [{ path: '/since' }] } });
    const reversed = await host.api(
      host.tokens.client,
      'GET',
      '/v1/operator/ledger?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z',
    );
    expect(reversed.status).toBe(400);
    expect(reversed.body).toMatchObject({
      error: ErrorCode.VALIDATION_ERROR,
      details: { errors: [{ path: '/until' }] },
    });

    await filter({ Since: 'yesterday' });
    const error = page.locator('#ledger-error[role="alert"]');
    await error.waitFor();
    await expect(error.textContent()).resolves.toMatch(/Filter refused \(validation_error\): since: must match format/);
    await expect(page.locator('#ledger tbody tr').count()).resolves.toBe(0);
    await filter({ Since: '2026-01-02T00:00:00Z', Until: '2026-01-01T00:00:00Z' });
    await error.filter({ hasText: 'until: must be after since' }).waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await error.waitFor({ state: 'detached' });
  });

  it('Export downloads the filtered view as JSON Lines: the API answer for the same filters, oldest first', async () => {
    await filter({ Run: RUN_B });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export filtered entries (JSONL)' }).click(),
    ]);
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.trimEnd().split('\n');
    const api = await host.api(
      host.tokens.client,
      'GET',
      `/v1/operator/ledger?run_id=${RUN_B}&limit=500&before=${Number.MAX_SAFE_INTEGER}`,
    );
    expect(api.body.next_before).toBeNull();
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(api.body.entries);
    expect(download.suggestedFilename()).toMatch(/\.jsonl$/);
    await page.locator('#export-status.ok', { hasText: `Exported ${lines.length} entries` }).waitFor();

    // Without a filter: the whole ledger, every seq from the first to the head at the time of the export.
    await page.getByRole('button', { name: 'Clear' }).click();
    const [whole] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export whole ledger (JSONL)' }).click(),
    ]);
    const seqs = readFileSync((await whole.path())!, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as LedgerEntry).seq);
    expect(seqs[0]).toBe((await host.ledger.first()).seq);
    expect(seqs).toEqual((await host.ledger.range(seqs[0]!, seqs[seqs.length - 1])).map((e) => e.seq));
  });

  it("issue 18 item 5: a device's commands on a timeline, as many as the ledger holds, each with its outcome", async () => {
    // One more command, stopped mid-way by the trusted e-stop: its receipt is `failed`.
    const intent = new Promise<void>((resolve) => {
      const off = host.services.events.subscribe((e) => {
        if (e.type === 'ledger.appended' && e.data.kind === 'command.intent') {
          off();
          resolve();
        }
      });
    });
    const stopped = host.engine.invoke({
      endpointId: host.endpointId,
      deviceId: DEVICE,
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 100 },
    });
    stopped.catch(() => undefined); // settled below
    await intent;
    const op = { id: 'op-alice', name: 'op-alice' };
    await host.services.safety.estop(host.endpointId, DEVICE, op);
    await stopped.catch(() => undefined);
    await host.services.safety.reset(host.endpointId, DEVICE, op);

    // What the ledger holds for the device: each intent and the status of its first final receipt.
    const entries = (await all()).filter((e) => e.device_id === DEVICE);
    const want = entries
      .filter((e) => e.kind === 'command.intent')
      .map((i) => {
        const r = entries.find(
          (e) =>
            e.kind === 'receipt' &&
            e.command_id === i.command_id &&
            ['completed', 'failed', 'rejected'].includes((e.receipt as { status: string }).status),
        );
        return [i.command_id, (r?.receipt as { status?: string } | undefined)?.status ?? 'none'];
      });
    expect(want.map((w) => w[1])).toEqual(expect.arrayContaining(['completed', 'failed']));

    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    const dev = page.locator(`li[data-device-id="${DEVICE}"]`);
    await dev.getByRole('button', { name: 'Commands timeline of Conveyor workcell' }).click();
    const fig = dev.locator('figure.commands');
    await fig.locator('canvas').first().waitFor();
    await expect(fig.getAttribute('data-commands')).resolves.toBe(String(want.length));
    await fig.locator('summary').click();
    const listed = await fig
      .locator('li[data-command-id]')
      .evaluateAll((li) => li.map((l) => [l.getAttribute('data-command-id'), l.getAttribute('data-outcome')]));
    expect(listed).toEqual(want);
    await expect(fig.locator('figcaption').textContent()).resolves.toMatch(/✔ completed · ✖ failed/);
    await fig.screenshot({ path: `${ARTIFACTS}devices-commands-timeline.png` });
  });

  it('issue 18 item 4: paging back through a filtered view shows every matching entry once, newest first', async () => {
    // More entries of the device than one page (50) holds.
    for (let i = 0; i < 30; i++) await step(RUN_C, 1);
    await filter({ Device: DEVICE });
    await expect.poll(async () => (await shownSeqs()).length).toBe(50);
    // Every entry of the device up to the newest the view started at (later ones do not shift older pages).
    const top = (await shownSeqs())[0]!;
    const want = (await all())
      .filter((e) => e.device_id === DEVICE && e.seq <= top)
      .map((e) => e.seq)
      .reverse();
    expect(want.length).toBeGreaterThan(50);
    const seen: number[] = [];
    for (let pageNo = 0; ; pageNo++) {
      await expect.poll(async () => (await shownSeqs())[0]).toBe(want[seen.length]);
      const shown = await shownSeqs();
      expect(shown.length).toBe(Math.min(50, want.length - seen.length));
      seen.push(...shown);
      const older = page.getByRole('button', { name: 'Older entries' });
      if (seen.length === want.length) {
        await expect(older.count()).resolves.toBe(0);
        break;
      }
      await older.click();
      expect(pageNo).toBeLessThan(10);
    }
    expect(seen).toEqual(want);
    // Back to the newest page (an entry appended since may head it).
    await page.getByRole('button', { name: 'Newest entries' }).click();
    await expect.poll(async () => (await shownSeqs())[0]).toBeGreaterThanOrEqual(want[0]!);
  }, 60_000);

  it('every view at 1280 and 800 px, and no table cut off at 800 px', async () => {
    await filter({ Run: RUN_A });
    await expect.poll(async () => (await shownSeqs()).length).toBeGreaterThan(0);
    expect(await shootViews(page, 'ledger-browser')).toEqual([]);
  });
});
