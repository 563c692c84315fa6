// Guarantees (issue 18 item 2, acceptance), with Debian's Chromium driven by playwright-core against a real
// `mhs-host serve`: a run started from the console runs to an approval gate; the run list says what it waits
// on; the gate is answered in the console and the run completes; the timeline shows each event as it arrives
// (the interrupt before the answer, the completion after it, without a reload) and in the log's order; a second
// run is cancelled from the console; a clarification gate's questions are answered in the console; the run's node graph draws each node and edge of its definition, layered, and
// each node's state follows the run live.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import {
  ARTIFACTS,
  HAVE_CHROMIUM,
  launchChromium,
  restAs,
  shootViews,
  signIn,
  startRunInConsole,
  statesWithoutWords,
} from './console-kit.js';
import type { Rest } from './console-kit.js';

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

/** Two branches from `start` joining at `finish`: one through an approval gate, one straight through. */
const BRANCHED = {
  ...GATED,
  id: 'console-branched',
  name: 'Branched transfer',
  nodes: [
    { id: 'start', typeId: 'core.noop', name: 'Start', position: { x: 0, y: 0 }, config: {}, inputs: {} },
    { ...GATED.nodes[0]!, id: 'check' },
    { id: 'side', typeId: 'core.noop', name: 'Side step', position: { x: 0, y: 0 }, config: {}, inputs: {} },
    { id: 'finish', typeId: 'core.noop', name: 'Finish', position: { x: 0, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [
    { id: 's-c', sourceNodeId: 'start', targetNodeId: 'check' },
    { id: 's-s', sourceNodeId: 'start', targetNodeId: 'side' },
    { id: 'c-f', sourceNodeId: 'check', targetNodeId: 'finish' },
    { id: 's-f', sourceNodeId: 'side', targetNodeId: 'finish' },
  ],
};

/** A clarification gate asking two questions before a noop. */
const ASKING = {
  ...GATED,
  id: 'console-asking',
  name: 'Asks first',
  nodes: [
    {
      id: 'ask',
      typeId: 'core.clarificationGate',
      name: 'Which plate?',
      position: { x: 0, y: 0 },
      config: {
        questions: [
          { id: 'plate', question: 'Which plate goes in?' },
          { id: 'why', question: 'Why now?' },
        ],
      },
      inputs: {},
    },
    GATED.nodes[1]!,
  ],
  edges: [{ id: 'a-a', sourceNodeId: 'ask', targetNodeId: 'after' }],
};

let browser: Browser;
let host: MhsHost<'th'>;
let page: Page;

/** The operator API with alice's token. */
let rest: Rest;

const detail = (status?: string) => page.locator(status ? `#run-detail[data-status="${status}"]` : '#run-detail');

describe.skipIf(!HAVE_CHROMIUM)('runs in the console (Chromium, real serve)', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    host = await startMhsHost({
      prefix: 'runs',
      sims: { th: ['thermostat', ['--operator-tools']] },
      tokens: { alice: 'operator' },
    });
    rest = restAs(host.srv!.url, host.tokens.alice!);
    expect((await rest('POST', '/v1/workflows', GATED)).status).toBe(201);
    expect((await rest('POST', '/v1/workflows', BRANCHED)).status).toBe(201);
    expect((await rest('POST', '/v1/workflows', ASKING)).status).toBe(201);
    page = await signIn(browser, host.srv!.url, host.tokens.alice!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('a run started in the console waits at its approval gate, is answered there, and its timeline follows it live', async () => {
    const runId = await startRunInConsole(page, 'console-gated', 'waiting-approval');
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

  it("issue 18 item 2: the run's node graph draws every node and edge of its definition, layered, and follows the run", async () => {
    await startRunInConsole(page, 'console-branched', 'waiting-approval');
    const def = (await rest('GET', '/v1/workflows/console-branched')).body as typeof BRANCHED;
    const graph = page.locator('#run-graph');
    const node = (id: string) => graph.locator(`g.node[data-node-id="${id}"]`);
    await node('check').locator('xpath=self::*[@data-waiting="true"]').waitFor();
    const ids = await graph.locator('g.node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-node-id')));
    expect(ids.sort()).toEqual(def.nodes.map((n) => n.id).sort());
    const edges = await graph
      .locator('path[data-edge-id]')
      .evaluateAll((ps) => ps.map((p) => `${p.getAttribute('data-source')}>${p.getAttribute('data-target')}`));
    expect(edges.sort()).toEqual(def.edges.map((e) => `${e.sourceNodeId}>${e.targetNodeId}`).sort());
    // Layered from the edges: each edge's target is drawn below its source.
    const top = async (id: string) => (await node(id).locator('rect').boundingBox())!.y;
    for (const e of def.edges) expect(await top(e.targetNodeId)).toBeGreaterThan(await top(e.sourceNodeId));
    // While the gate waits: the branch before it is done, the join has not run; states said in words too.
    await expect(node('start').getAttribute('data-status')).resolves.toBe('completed');
    await expect(node('finish').getAttribute('data-status')).resolves.toBe('pending');
    await expect(node('check').locator('text.node-status').textContent()).resolves.toContain('waiting');
    expect(await statesWithoutWords(page)).toEqual([]);
    await graph.screenshot({ path: `${ARTIFACTS}runs-graph-waiting.png` });
    const gate = page.locator('article.interrupt[data-node-id="check"]');
    await gate.getByRole('button', { name: 'Accept' }).click();
    // Live, without a reload: the gate and the join turn completed as the run advances.
    await node('finish').locator('xpath=self::*[@data-status="completed"]').waitFor();
    await expect(node('check').getAttribute('data-status')).resolves.toBe('completed');
    await expect(node('check').getAttribute('data-waiting')).resolves.toBe('false');
    await expect(node('finish').locator('text.node-status').textContent()).resolves.toContain('✔ completed');
    const snap = (await rest('GET', `/v1/runs/${(await detail().getAttribute('data-run-id'))!}`)).body;
    for (const id of ids)
      await expect(node(id!).getAttribute('data-status')).resolves.toBe(snap.nodeStates[id!].status);
    await graph.screenshot({ path: `${ARTIFACTS}runs-graph-completed.png` });
  });

  it("a clarification gate's questions are answered in the console and the run goes on with the answers", async () => {
    const runId = await startRunInConsole(page, 'console-asking', 'waiting-input');
    await expect(page.locator(`#runs tr[data-run-id="${runId}"]`).textContent()).resolves.toContain('an answer');
    const form = page.locator('article.interrupt[data-node-id="ask"][data-kind="clarification"]');
    await form.getByLabel('Which plate goes in?').fill('P-17');
    await form.getByLabel('Why now?').fill('the incubator is free');
    await form.getByRole('button', { name: 'Send answers' }).click();
    await detail('completed').waitFor();
    await page.locator('#run-timeline tr[data-type="run.completed"]').waitFor();
    const snap = (await rest('GET', `/v1/runs/${runId}`)).body;
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.ask.outputs.answers).toEqual({ plate: 'P-17', why: 'the incubator is free' });
  });

  it('a run is cancelled from the console', async () => {
    const runId = await startRunInConsole(page, 'console-gated', 'waiting-approval');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await detail('cancelled').waitFor();
    await page.locator('#run-timeline tr[data-type="run.cancelled"]').waitFor();
    await page.locator(`#runs tr[data-run-id="${runId}"][data-status="cancelled"]`).waitFor();
    expect((await rest('GET', `/v1/runs/${runId}`)).body.status).toBe('cancelled');
    expect(await shootViews(page, 'runs-cancelled')).toEqual([]);
  });
});
