// Guarantees (issue 19 item 4, console part), in Debian's Chromium against real `mhs-host serve` processes: the
// console's hosts panel lists the host processes of its store from `GET /v1/operator/hosts`, each with whether it is
// running (in words, not colour alone), its host lease and the runs it drives with their fencing tokens. On SQLite:
// the one process, marked as the console's own. On one PostgreSQL store with two processes A and B (skipped without
// MHS_TEST_PG_URL): a run started through B is listed under B with the token of its lease; once B is killed with
// SIGKILL and its lease lapses, the run is listed under A with a higher token and B is no longer shown running,
// without a reload. The endpoint A attaches (enabled while only A ran) is listed under A with its fencing token.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { makeToken, serve, tempDb } from '../server/serve-helpers.js';
import { enableSims } from '../server/scale-out-helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import type { Served } from '../server/serve-helpers.js';
import {
  HAVE_CHROMIUM,
  launchChromium,
  restAs,
  shootViews,
  signIn,
  statesWithoutWords,
  unreachableByKeyboard,
} from './console-kit.js';

// Short run leases, so a killed owner's run is taken over within seconds (as test/server/scale-out.test.ts).
const LEASE_ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };

/** A run that waits a minute in a delay node: it is still running (and leased) while the test looks. */
const SLOW = {
  id: 'hosts-slow',
  name: 'Waits a minute',
  version: '1',
  nodes: [
    { id: 'first', typeId: 'core.noop', name: 'first', position: { x: 0, y: 0 }, config: {}, inputs: {} },
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'wait',
      position: { x: 1, y: 0 },
      config: { durationMs: 60_000 },
      inputs: {},
    },
  ],
  edges: [{ id: 'e1', sourceNodeId: 'first', targetNodeId: 'wait' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

let browser: Browser;

const row = (page: Page, owner: string) => page.locator(`#hosts tr[data-owner="${owner}"]`);

describe.skipIf(!HAVE_CHROMIUM)('the hosts panel (Chromium, real serve)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('on SQLite: one process', () => {
    let srv: Served;
    let page: Page;
    beforeAll(async () => {
      const db = tempDb();
      const token = await makeToken(db, 'operator', 'alice');
      srv = await serve(db, ['--no-workflows']);
      page = await signIn(browser, srv.url, token);
    }, 120_000);
    afterAll(async () => {
      await page?.close();
      await srv?.stop();
    });

    it('lists the one host process as running, the console’s own, and its host lease or none', async () => {
      const me = page.locator(`#hosts tr[data-owner$=":${srv.child.pid}"]`);
      await me.waitFor();
      await expect(page.locator('#hosts tbody tr').count()).resolves.toBe(1);
      await expect(me.getAttribute('data-running')).resolves.toBe('running');
      await expect(me.locator('td.host-state').textContent()).resolves.toBe('● running');
      await expect(me.locator('td.id').textContent()).resolves.toContain("this console's process");
      await expect(page.locator('#hosts-summary').textContent()).resolves.toBe(
        '1 host process on this store, 1 running.',
      );
      // What the panel shows is what the route answers.
      const token = await page.evaluate(() => sessionStorage.getItem('mhs-token'));
      const { body } = await restAs(srv.url, token!)('GET', '/v1/operator/hosts');
      expect(body.processes).toHaveLength(1);
      const [p] = body.processes;
      await expect(me.getAttribute('data-owner')).resolves.toBe(p.owner);
      if (p.host_lease) await expect(me.locator('td.lease').textContent()).resolves.toContain(p.host_lease.expires_at);
      else await expect(me.locator('td.lease').textContent()).resolves.toBe('no host lease');
      expect(await shootViews(page, 'hosts-sqlite')).toEqual([]);
      expect(await unreachableByKeyboard(page)).toEqual([]);
    });
  });

  describe.skipIf(!PG_URL)('on PostgreSQL: two processes, one killed', () => {
    let store: StoreHandle;
    let a: Served;
    let b: Served;
    let page: Page;
    let sim: SimHttp;
    let token = '';
    beforeAll(async () => {
      store = await postgresBackend.fresh();
      sim = await startSimHttp('thermostat');
      token = await makeToken(store.location, 'operator', 'alice');
      // One after another: the first creates the schema, the second finds it. A claims the endpoint enabled meanwhile.
      a = await serve(store.location, ['--no-workflows'], LEASE_ENV);
      await enableSims(store.location, { thermostat: sim }, 'hosts');
      b = await serve(store.location, ['--no-workflows'], LEASE_ENV);
      expect((await restAs(b.url, token)('POST', '/v1/workflows', SLOW)).status).toBe(201);
      page = await signIn(browser, a.url, token);
    }, 120_000);
    afterAll(async () => {
      await page?.close();
      await a?.stop();
      await b?.kill().catch(() => undefined);
      await sim?.stop();
      await store?.cleanup();
    });

    it('shows the run B drives under B with its fencing token; B killed, A takes the run over with a higher token', async () => {
      const restA = restAs(a.url, token);
      const runId = (await restAs(b.url, token)('POST', '/v1/runs', { workflowId: SLOW.id })).body.runId as string;
      const hosts = (await restA('GET', '/v1/operator/hosts')).body.processes as Array<{
        owner: string;
        runs: Array<{ run_id: string; token: number }>;
      }>;
      const ownerB = hosts.find((h) => h.owner.endsWith(`:${b.child.pid}`))!.owner;
      const ownerA = hosts.find((h) => h.owner.endsWith(`:${a.child.pid}`))!.owner;
      const leased = hosts.find((h) => h.runs.some((r) => r.run_id === runId));
      expect(leased?.owner).toBe(ownerB);
      const first = leased!.runs.find((r) => r.run_id === runId)!.token;

      // Both processes running; the run under B with its token; A is the console's own process.
      const runOfB = row(page, ownerB).locator(`li[data-run-id="${runId}"][data-token="${first}"]`);
      await runOfB.waitFor();
      await expect(runOfB.textContent()).resolves.toContain(`token ${first}`);
      await expect(row(page, ownerB).locator('td.host-state').textContent()).resolves.toBe('● running');
      await expect(row(page, ownerA).locator('td.host-state').textContent()).resolves.toBe('● running');
      await expect(row(page, ownerA).locator('td.id').textContent()).resolves.toContain("this console's process");
      await expect(row(page, ownerB).locator('td.id').textContent()).resolves.not.toContain('this console');
      await page.locator('#hosts-summary', { hasText: '2 host processes on this store, 2 running.' }).waitFor();
      // The endpoint lease: the connector A attaches, listed under A with its endpoint id and fencing token.
      await row(page, ownerA)
        .locator('li[data-connector-id="hosts-thermostat"][data-token="1"]', { hasText: sim.endpointId })
        .waitFor();
      await expect(row(page, ownerB).locator('td.endpoints').textContent()).resolves.toBe('no endpoint lease');
      expect(await shootViews(page, 'hosts-pg-two')).toEqual([]);

      await b.kill();
      // Once B's lease lapses A takes the run over: listed under A with a higher token, without a reload. B holds
      // no host lease (it never held a device gate), so with no run left it is either shown gone or no longer listed.
      const runOfA = row(page, ownerA).locator(`li[data-run-id="${runId}"]`);
      await runOfA.waitFor({ timeout: 30_000 });
      expect(Number(await runOfA.getAttribute('data-token'))).toBeGreaterThan(first);
      await expect(page.locator(`#hosts li[data-run-id="${runId}"]`).count()).resolves.toBe(1);
      await page.locator('#hosts-summary', { hasText: /, 1 running\.$/ }).waitFor();
      await expect(row(page, ownerB).locator('td.host-state', { hasText: 'running' }).count()).resolves.toBe(0);
      expect(await shootViews(page, 'hosts-pg-failover')).toEqual([]);
      expect(await statesWithoutWords(page)).toEqual([]);
      expect((await restA('POST', `/v1/runs/${runId}/cancel`, { reason: 'test done' })).status).toBeLessThan(300);
    }, 120_000);
  });
});
