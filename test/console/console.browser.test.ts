// Guarantees (issue 6, browser acceptance), with Debian's Chromium driven by playwright-core against a
// real host slice (simulator over HTTP, engine, SQLite store, ledger, operator API and console):
// an R2 command waits for approval, an operator approves in the console, it runs and its receipt
// shows; a denial; dual control with two operators where the same operator twice is refused; an
// input changed after approval asks again; the e-stop pressed while an approval is pending stops the
// device; a permit revoked in the console is never sent (the simulator's counters show no call);
// the approval view shows when the request expires under the host's policy;
// with the integration disabled the console says so and no endpoint connection exists, and enabling
// it is recorded with the operator, as is allowing a device's trusted e-stop. Screenshots of the
// approval view, and of every view at 1280 and 800 px (no table cut off), go to test-artifacts/.
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H, isoAt } from '../../src/core/index.js';
import type { LedgerEntry } from '../../src/ledger/ledger-types.js';
import { CONNECTOR_ID, startOperatorHost } from '../policy/helpers/operator-host.js';
import type { OperatorHost } from '../policy/helpers/operator-host.js';
import {
  ARTIFACTS,
  HAVE_CHROMIUM,
  launchChromium,
  nextRequest,
  shootViews,
  shot as shotOf,
  signIn,
  statesWithoutWords,
  tamperFirstEntry,
  unreachableByKeyboard,
} from './console-kit.js';

const WAIT_MS = 600_000;

let browser: Browser;
let host: OperatorHost;

function invoke(
  h: OperatorHost,
  deviceId: string,
  capabilityId: string,
  input: Record<string, unknown>,
  extra: { signal?: AbortSignal; runId?: string; nodeId?: string } = {},
) {
  const p = h.engine.invoke({ endpointId: h.endpointId, deviceId, capabilityId, input, ...extra });
  p.catch(() => undefined); // awaited by the test later
  return p;
}

async function entries(h: OperatorHost, pred: (e: LedgerEntry) => boolean): Promise<LedgerEntry[]> {
  return (await h.ledger.range(0)).filter(pred);
}

// One signed-in page per token and host, reused across tests (signing in is the slow part).
const pages = new Map<string, Page>();

async function pageFor(h: OperatorHost, token: string): Promise<Page> {
  const key = `${h.url} ${token}`;
  const have = pages.get(key);
  if (have && !have.isClosed()) return have;
  const page = await signIn(browser, h.url, token, { width: 1280, height: 1400 });
  pages.set(key, page);
  return page;
}

const card = (page: Page, id: string) => page.locator(`article[data-approval-id="${id}"]`);

async function shot(page: Page, locator: ReturnType<typeof card>, name: string): Promise<void> {
  await shotOf(locator, name);
  await page.screenshot({ path: `${ARTIFACTS}${name}-page.png`, fullPage: true });
}

describe.skipIf(!HAVE_CHROMIUM)('operator console in Chromium', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startOperatorHost({
      families: 'liquid-handler,laser,conveyor',
      simFlags: ['--device', new URL('../policy/fixtures/hw-press.json', import.meta.url).pathname],
      projection: { enabled: true, allow_hardware: true },
      policy: { deployment: { enabled: true, allow_hardware: true }, approvalTimeoutMs: WAIT_MS },
      // As `serve` does: the approval cards show the policy's wait limit as their expiry.
      routesPolicy: true,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  it('HOST-003, HOST-040: an R2 command waits; the approval view shows everything; approving runs it and the receipt shows', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 25 });
    const req = await asked;
    const c = card(page, req.approval_id);
    await c.waitFor();
    await expect(c.locator('dd').allTextContents()).resolves.toEqual(
      expect.arrayContaining([
        'Single-channel liquid handler (liquid-handler)',
        'simulated',
        'R2 (capability R2)',
        'actuation, liquid-transfer',
        'required; TTL 60 s; single use',
        'MHS.SAFETY.NOT_CERTIFIED: MHS is not a safety channel.',
      ]),
    );
    await expect(c.locator('td.value').textContent()).resolves.toBe('25');
    await expect(c.locator('td.unit').textContent()).resolves.toBe('uL');
    await expect(c.locator('span.digest[data-digest]').textContent()).resolves.toBe(H({ volume_ul: 25 }).slice(0, 12));
    await expect(c.locator('dd.gaps').textContent()).resolves.toContain('no meniscus detection');
    await expect(c.locator('dd.estop-statement').textContent()).resolves.toContain('Software e-stop');
    await expect(c.getByRole('button', { name: /E-stop/ }).count()).resolves.toBe(1);
    await expect(c.locator('dd.expires').textContent()).resolves.toContain(isoAt(Date.parse(req.created_at) + WAIT_MS));
    await shot(page, c, 'approval-view-r2');
    await c.getByRole('button', { name: 'Approve' }).click();
    const result = await call;
    expect(result.receipt.status).toBe('completed');
    const row = page.locator(`#receipts tr[data-command-id="${result.commandId}"]`);
    await row.waitFor();
    await expect(row.locator('td.status').textContent()).resolves.toBe('completed');
    await expect(card(page, req.approval_id).count()).resolves.toBe(0);
  });

  it('a denial in the console refuses the command and records the reason', async () => {
    const page = await pageFor(host, host.tokens.op2);
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 26 });
    const req = await asked;
    const c = card(page, req.approval_id);
    await c.waitFor();
    await c.getByLabel('Reason (optional)').fill('wrong well');
    await c.getByRole('button', { name: 'Deny' }).click();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
    const row = page.locator(`#decisions tr[data-approval-id="${req.approval_id}"][data-status="denied"]`);
    await row.waitFor();
    const [d] = await entries(host, (e) => e.event === 'decided' && e.approval_id === req.approval_id);
    expect(d).toMatchObject({ decision: 'deny', reason: 'wrong well', principal_names: ['op-bob'] });
    // Issue 18 item 3: a denial shows its denier, its reason, when and on which endpoint.
    await row.locator('td.by', { hasText: 'op-bob' }).waitFor();
    await expect(row.locator('td.reason').textContent()).resolves.toBe('wrong well');
    await expect(row.textContent()).resolves.toContain(host.endpointId);
    await expect(row.locator('td.time').textContent()).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('HOST-044: dual control with two operators; the same operator twice is refused', async () => {
    const alice = await pageFor(host, host.tokens.op1);
    const bob = await pageFor(host, host.tokens.op2);
    const asked = nextRequest(host);
    const call = invoke(host, 'laser', 'cap.laser.pulse.v1', { energy_mj: 3, pulses: 2 });
    const req = await asked;
    const ca = card(alice, req.approval_id);
    await ca.waitFor();
    await expect(ca.locator('dd.estop-statement').textContent()).resolves.toContain('red mushroom button E1');
    await shot(alice, ca, 'approval-view-r3-dual');
    await ca.getByRole('button', { name: 'Approve' }).click();
    await ca.locator('dd.method', { hasText: 'so far: op-alice' }).waitFor();
    await ca.getByRole('button', { name: 'Approve' }).click();
    await alice.locator('#status.error', { hasText: 'refused (forbidden)' }).waitFor();
    expect((await host.services.gate.get(req.approval_id))?.status).toBe('pending');
    const cb = card(bob, req.approval_id);
    await cb.locator('dd.method', { hasText: 'so far: op-alice' }).waitFor();
    await cb.getByRole('button', { name: 'Approve' }).click();
    expect((await call).receipt.status).toBe('completed');
    const [d] = await entries(host, (e) => e.event === 'decided' && e.approval_id === req.approval_id);
    expect(d).toMatchObject({ method: 'dual_control', principal_names: ['op-alice', 'op-bob'] });
  });

  it('HOST-041: an input changed after approval voids it and asks again', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const step = { runId: 'run_01CONSOLETEST0000000000000', nodeId: 'transfer' };
    let asked = nextRequest(host);
    const ac = new AbortController();
    const first = invoke(
      host,
      'liquid-handler',
      'cap.liquid.aspirate.v1',
      { volume_ul: 30 },
      { ...step, signal: ac.signal },
    );
    const reqA = await asked;
    // The run stops waiting (e.g. a restart) while the operator approves 30 uL in the console.
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_REQUIRED });
    await card(page, reqA.approval_id).getByRole('button', { name: 'Approve' }).click();
    await page.locator(`#decisions tr[data-approval-id="${reqA.approval_id}"][data-status="approved"]`).waitFor();
    // The step resumes with a changed input (31 uL): the approval of 30 uL is void; a new one is asked.
    asked = nextRequest(host);
    const second = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 31 }, step);
    const reqB = await asked;
    expect(reqB.approval_id).not.toBe(reqA.approval_id);
    const cb = card(page, reqB.approval_id);
    await cb.waitFor();
    await expect(cb.locator('span.digest[data-digest]').textContent()).resolves.toBe(H({ volume_ul: 31 }).slice(0, 12));
    await page.locator(`#decisions tr[data-approval-id="${reqA.approval_id}"][data-status="voided"]`).waitFor();
    await shot(page, cb, 'approval-view-input-changed');
    await cb.getByRole('button', { name: 'Approve' }).click();
    const r = await second;
    expect(r.receipt).toMatchObject({ status: 'completed', input_digest: H({ volume_ul: 31 }) });
    expect(await entries(host, (e) => e.event === 'voided' && e.approval_id === reqA.approval_id)).toHaveLength(1);
  });

  it('HOST-046, HOST-071: the e-stop pressed on the approval view while the approval is pending stops the device', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 27 });
    const req = await asked;
    const c = card(page, req.approval_id);
    await c.waitFor();
    await c.getByRole('button', { name: /E-stop/ }).click();
    await page.locator('#status.ok', { hasText: /^E-stop liquid-handler: done$/ }).waitFor();
    const safety = await host.engine
      .endpoint(host.endpointId)!
      .callTool('mhs__safety', { device_id: 'liquid-handler' });
    expect(safety.structuredContent).toMatchObject({ estop: { engaged: true } });
    expect((await host.services.gate.get(req.approval_id))?.status).toBe('pending');
    const pair = await entries(host, (e) => e.kind === 'estop.request' || e.kind === 'estop.receipt');
    expect(pair.map((e) => e.kind)).toEqual(['estop.request', 'estop.receipt']);
    // Approving afterwards cannot make the stopped device run (refused before sending); reset is the
    // operator's own action.
    const before = (await host.engine.read(host.endpointId, 'liquid-handler', '_counters')).state;
    await c.getByRole('button', { name: 'Approve' }).click();
    await expect(call).rejects.toMatchObject({ code: ErrorCode.SAFETY_ESTOP_ACTIVE });
    expect((await host.engine.read(host.endpointId, 'liquid-handler', '_counters')).state).toEqual(before);
    expect(await entries(host, (e) => e.kind.startsWith('reset.'))).toEqual([]);
    await page
      .locator('li[data-device-id="liquid-handler"]')
      .getByRole('button', { name: /^Reset/ })
      .click();
    await page.locator('#status.ok', { hasText: 'Reset liquid-handler: done' }).waitFor();
    const after = await host.engine.endpoint(host.endpointId)!.callTool('mhs__safety', { device_id: 'liquid-handler' });
    expect(after.structuredContent).toMatchObject({ estop: { engaged: false } });
  });

  it('HOST-047: a permit revoked in the console is never sent (the simulator counted no call)', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const actor = host.engine.endpoint(host.endpointId)!;
    let release!: () => void;
    // An earlier job still occupies the device's lane, so the approved command waits to be sent.
    const blocker = actor.runInLane('liquid-handler', () => new Promise<void>((r) => (release = r)));
    const asked = nextRequest(host);
    const call = invoke(host, 'liquid-handler', 'cap.liquid.aspirate.v1', { volume_ul: 28 });
    const req = await asked;
    await card(page, req.approval_id).getByRole('button', { name: 'Approve' }).click();
    const row = page.locator('#permits tr[data-permit-id]');
    await row.waitFor();
    const permitId = (await row.getAttribute('data-permit-id'))!;
    const before = (await host.engine.read(host.endpointId, 'liquid-handler', '_counters')).state;
    await row.getByRole('button', { name: `Revoke ${permitId}` }).click();
    await page.locator('#status.ok', { hasText: `Revoke ${permitId}: done` }).waitFor();
    await page.locator(`#permits tr[data-permit-id="${permitId}"]`).waitFor({ state: 'detached' });
    release();
    await blocker;
    await expect(call).rejects.toMatchObject({ code: ErrorCode.AUTH_PERMIT_REVOKED });
    const after = (await host.engine.read(host.endpointId, 'liquid-handler', '_counters')).state;
    expect(after).toEqual(before);
    const [intent] = await entries(host, (e) => e.kind === 'command.intent' && e.permit_id === permitId);
    expect(JSON.stringify(after)).not.toContain(intent!.command_id as string);
  });

  it('ledger entries show with a working verify button', async () => {
    const page = await pageFor(host, host.tokens.op1);
    await page.locator('#ledger tr[data-kind="approval"]').first().waitFor();
    await page.getByRole('button', { name: 'Verify ledger' }).click();
    await page.locator('#verify-result.ok', { hasText: 'Chain verified' }).waitFor();
  });

  it('HOST-046: a hardware-only e-stop shows the physical stop location and offers no stop button', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const dev = page.locator('li[data-device-id="hw-press"]');
    await expect(dev.locator('.physical').textContent()).resolves.toContain('yellow pull cord P2, north wall');
    await expect(dev.locator('.physical').textContent()).resolves.toContain('This host cannot stop this device');
    await expect(dev.getByRole('button', { name: /^E-stop/ }).count()).resolves.toBe(0);
  });

  it('issue 18: every view at 1280 and 800 px with records in its tables, and no table cut off at 800 px', async () => {
    const page = await pageFor(host, host.tokens.op1);
    await page.locator('#decisions tbody tr').first().waitFor();
    await page.locator('#receipts tbody tr').first().waitFor();
    expect(await shootViews(page, 'console-records')).toEqual([]);
    // Issue 18 item 7: with records, a permit and approvals' controls on the page, Tab still reaches every control.
    expect(await unreachableByKeyboard(page)).toEqual([]);
    expect(await statesWithoutWords(page)).toEqual([]);
  });

  it('a client token sees the console read-only', async () => {
    const page = await pageFor(host, host.tokens.client);
    await expect(page.locator('#whoami').textContent()).resolves.toContain('read only');
    await expect(page.getByRole('button', { name: 'Verify ledger' }).isEnabled()).resolves.toBe(true);
  });

  it('issue 18 item 4: the ledger browser follows one command from intent to receipt and verifies the chain', async () => {
    const page = await pageFor(host, host.tokens.op1);
    const [receipt] = (await entries(host, (e) => e.kind === 'receipt')).slice(-1);
    const commandId = receipt!.command_id as string;
    const row = page.locator(`#ledger tr[data-kind="receipt"]`, { hasText: commandId });
    await row.waitFor();
    await row.getByRole('button', { name: `Follow command ${commandId}` }).click();
    await expect(page.getByLabel('Command', { exact: true }).inputValue()).resolves.toBe(commandId);
    const want = await entries(host, (e) => e.command_id === commandId);
    const kinds = () =>
      page.locator('#ledger tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    await expect.poll(kinds).toEqual(want.map((e) => e.kind).reverse());
    expect(want.map((e) => e.kind)).toEqual(expect.arrayContaining(['command.intent', 'receipt']));
    // Expanding an entry shows the whole record.
    const intent = page.locator('#ledger tr[data-kind="command.intent"] details');
    await intent.locator('summary').click();
    await expect(intent.locator('pre').textContent()).resolves.toContain(`"input_digest"`);
    await page.getByRole('button', { name: 'Verify ledger' }).click();
    await page.locator('#verify-result[data-result="verified"]', { hasText: 'Chain verified' }).waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
  });

  it('issue 18 item 4: a tampered store is reported CHAIN_BROKEN by the console', async () => {
    const page = await pageFor(host, host.tokens.op1);
    tamperFirstEntry(host.db.location);
    await page.getByRole('button', { name: 'Verify ledger' }).click();
    const broken = page.locator('#verify-result[data-result="broken"]');
    await broken.waitFor();
    await expect(broken.textContent()).resolves.toContain(ErrorCode.EVIDENCE_CHAIN_BROKEN);
  });
});

describe.skipIf(!HAVE_CHROMIUM)('console with the integration disabled', () => {
  let off: OperatorHost;
  beforeAll(async () => {
    browser = await launchChromium();
    // A short busy timeout and probe interval, so a locked store is refused at once and its recovery seen soon.
    off = await startOperatorHost({
      families: 'conveyor',
      enable: false,
      estopDevices: [],
      db: { sqlite: { busyTimeoutMs: 50 } },
      ledger: { probeIntervalMs: 200 },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await off?.close();
  });

  it('HOST-093: a store that cannot be written is shown at once, the refused action changes nothing, and the banner goes when it recovers', async () => {
    const page = await pageFor(off, off.tokens.op1);
    const banner = page.locator('#store-health');
    await expect(banner.isHidden()).resolves.toBe(true);
    const pushed: unknown[] = [];
    const off$ = off.services.events.subscribe((e) => {
      if (e.type === 'ledger.status') pushed.push(e.data.state);
    });
    const locker = new Database(off.db.location);
    try {
      locker.exec('BEGIN IMMEDIATE'); // another writer holds the file
      const ep = page.locator(`article[data-connector-id="${CONNECTOR_ID}"]`);
      await ep.getByRole('button', { name: 'Enable' }).click();
      await page.locator('#status.error').waitFor();
      await page.locator('#store-health[data-state="unavailable"]').waitFor();
      await expect(banner.textContent()).resolves.toContain(ErrorCode.HOST_LEDGER_UNAVAILABLE);
      await expect(ep.locator('.enabled-state').textContent()).resolves.toBe('disabled');
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    await expect.poll(() => banner.getAttribute('data-state'), { timeout: 15_000 }).toBe('available');
    await expect(banner.isHidden()).resolves.toBe(true);
    expect(await entries(off, (e) => e.kind === 'operator.enable')).toEqual([]);
    expect(off.engine.endpoints()).toEqual([]);
    off$();
    expect(pushed).toEqual(['unavailable', 'available']); // pushed over SSE, not left to the 5 s re-read
  });

  it('HOST-066, HOST-067, HOST-068, HOST-094: says MHS is disabled with no endpoint connection; enabling is recorded with the operator', async () => {
    const page = await pageFor(off, off.tokens.op1);
    await expect(page.locator('#integration').textContent()).resolves.toContain('is disabled');
    const ep = page.locator(`article[data-connector-id="${CONNECTOR_ID}"]`);
    await expect(ep.locator('.enabled-state').textContent()).resolves.toBe('disabled');
    await expect(ep.textContent()).resolves.toContain('experimental');
    expect(off.engine.endpoints()).toEqual([]);
    await ep.getByRole('button', { name: 'Enable' }).click();
    await ep.locator('.enabled-state', { hasText: /^enabled$/ }).waitFor();
    const [rec] = await entries(off, (e) => e.kind === 'operator.enable');
    expect(rec).toMatchObject({ connector_id: CONNECTOR_ID, operator: { id: 'op-alice' } });
    // HOST-094: the trusted e-stop is operator-enabled per device, then one action.
    const dev = page.locator('li[data-device-id="conveyor-workcell"]');
    await dev.getByRole('button', { name: /^Allow trusted e-stop/ }).click();
    await dev.getByRole('button', { name: /^E-stop/ }).click();
    await page.locator('#status.ok', { hasText: /^E-stop conveyor-workcell: done$/ }).waitFor();
    const rows = await entries(off, (e) => e.device_id === 'conveyor-workcell');
    expect(
      rows.map((e) => e.kind),
      JSON.stringify(rows),
    ).toEqual(['operator.enable', 'estop.request', 'estop.receipt']);
  });
});
