// The console browser tests' shared kit: Debian's Chromium (driven by playwright-core), a signed-in console page, an
// operator REST caller, screenshots of every view at a laptop and a narrow width, and the check that no table is cut
// off (issue 18 items 7 and acceptance).
import { existsSync, mkdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import type { Browser, Locator, Page } from 'playwright-core';
import type { ApprovalRequest } from '../../src/policy/approval-rules.js';
import type { OperatorHost } from '../policy/helpers/operator-host.js';

export const CHROMIUM = process.env.MHS_TEST_CHROMIUM || '/usr/bin/chromium';
/** Whether the browser tests can run here (`describe.skipIf(!HAVE_CHROMIUM)`). */
export const HAVE_CHROMIUM = !!process.env.MHS_TEST_CHROMIUM || existsSync('/usr/bin/chromium');

export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** The console's sections, each a view an operator scrolls or jumps to (the nav links). */
export const VIEWS = ['devices', 'approvals', 'runs', 'hosts', 'decisions', 'receipts', 'permits', 'ledger'] as const;

/** Headless Chromium, as every console test launches it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A new page on `<url>/console/`, signed in with `token` and loaded (its first reads done). */
export async function signIn(
  browser: Browser,
  url: string,
  token: string,
  viewport: { width: number; height: number } = { width: 1280, height: 1000 },
): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${url}/console/`);
  await page.getByLabel('Operator or client token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('body[data-ready="true"]').waitFor();
  return page;
}

/** A REST answer, its body indexed freely as in the other REST tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely
export type RestAnswer = { status: number; body: any };
export type Rest = (method: string, path: string, body?: unknown) => Promise<RestAnswer>;

/** A caller of the host's REST API at `url` with the bearer `token`. */
export function restAs(url: string, token: string): Rest {
  return async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
}

/** Writes `<name>.png` of `locator` to the artefacts folder. */
export async function shot(locator: Locator, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await locator.screenshot({ path: `${ARTIFACTS}${name}.png` });
}

/** Tables whose content runs past their box or the window (a cut-off column), by id or label. */
export function cutOffTables(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const bad: string[] = [];
    for (const t of Array.from(document.querySelectorAll('table'))) {
      const box = t.getBoundingClientRect();
      const wrap = t.parentElement!;
      if (box.right > width + 0.5 || wrap.scrollWidth > wrap.clientWidth + 0.5)
        bad.push(t.id || t.getAttribute('aria-label') || 'table');
    }
    if (document.documentElement.scrollWidth > width + 0.5) {
      // Name what runs off the page (the innermost elements past the right edge).
      const past = Array.from(document.querySelectorAll('body *')).filter(
        (el) => el.getBoundingClientRect().right > width + 0.5 && !el.querySelector('*'),
      );
      bad.push(
        `page: ${past
          .slice(0, 3)
          .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`)
          .join(' ')}`,
      );
    }
    return bad;
  });
}

/** Writes `<name>-<view>-<width>.png` for every view at 1280 and 800 px; returns the tables cut off at 800 px. */
export async function shootViews(page: Page, name: string): Promise<string[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  let cut: string[] = [];
  const size = page.viewportSize() ?? { width: 1280, height: 1000 };
  for (const width of [1280, 800]) {
    await page.setViewportSize({ width, height: 1000 });
    for (const view of VIEWS) {
      const section = page.locator(`section[aria-labelledby="h-${view}"]`);
      await section.screenshot({ path: `${ARTIFACTS}${name}-${view}-${width}.png` });
    }
    if (width === 800) cut = await cutOffTables(page);
  }
  await page.setViewportSize(size);
  return cut;
}

/** The next approval `h` asks for, as its event bus announces it. */
export function nextRequest(h: OperatorHost): Promise<ApprovalRequest> {
  return new Promise((resolve) => {
    const off = h.services.events.subscribe((e) => {
      if (e.type === 'approval.requested') {
        off();
        resolve(e.data.approval as ApprovalRequest);
      }
    });
  });
}

/** Alters the first ledger entry of the SQLite store at `path`, as an attacker with database access would. */
export function tamperFirstEntry(path: string): void {
  const raw = new Database(path);
  try {
    // The append-only trigger dropped first.
    raw.exec('DROP TRIGGER ledger_entries_no_update');
    const line = (raw.prepare('SELECT line FROM ledger_entries WHERE seq = 1').get() as { line: string }).line;
    raw.prepare('UPDATE ledger_entries SET line = ? WHERE seq = 1').run(line.replace(/"ts":"/, '"ts":"1'));
  } finally {
    raw.close();
  }
}

/**
 * Live states that only a colour would tell (issue 18 item 7): every e-stop, gate, interlock, connection, host and
 * run-graph node state must also be said in its text. Returns each element whose text does not say its state.
 */
export function statesWithoutWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const said: Record<string, RegExp> = {
      engaged: /ENGAGED/,
      released: /released/,
      unknown: /not read|unreadable|unknown/,
      open: /open/,
      shut: /shut/,
      closed: /closed/,
      connected: /Connected/,
      recovering: /Reconnected/,
      reconnecting: /Disconnected, reconnecting/,
      connecting: /Connecting/,
      disabled: /Not attached: the endpoint is disabled/,
      not_attached: /Not attached/,
      running: /running/,
      gone: /gone/,
    };
    const rules: Array<[selector: string, state: (el: Element) => string | null, text: (el: Element) => string]> = [
      ['[data-estop]', (el) => el.getAttribute('data-estop'), (el) => el.textContent ?? ''],
      ['[data-gate]', (el) => el.getAttribute('data-gate'), (el) => el.textContent ?? ''],
      ['li[data-interlock-id]', (el) => el.getAttribute('data-state'), (el) => el.textContent ?? ''],
      [
        'article[data-connection]',
        (el) => el.getAttribute('data-connection'),
        (el) => el.querySelector('.connection')?.textContent ?? '',
      ],
      [
        '#hosts tr[data-running]',
        (el) => el.getAttribute('data-running'),
        (el) => el.querySelector('.host-state')?.textContent ?? '',
      ],
      [
        'g.node[data-status]',
        (el) => (el.getAttribute('data-waiting') === 'true' ? 'waiting' : el.getAttribute('data-status')),
        (el) => el.querySelector('.node-status')?.textContent ?? '',
      ],
    ];
    const bad: string[] = [];
    for (const [selector, state, text] of rules)
      for (const el of Array.from(document.querySelectorAll(selector))) {
        const s = state(el);
        if (!s) continue;
        const want = said[s] ?? new RegExp(s.replace(/[^a-z]+/gi, '.'), 'i');
        if (!want.test(text(el))) bad.push(`${selector}[${s}]: "${text(el).trim()}"`);
      }
    return bad;
  });
}

/**
 * The enabled, visible controls of the page that Tab never reaches (issue 18 item 7: keyboard reachable): notes the
 * controls on the page, presses Tab from the top until the focus comes round again, and lists each noted control,
 * still on the page, that it never focused (a control added by a live update meanwhile is not noted).
 */
export async function unreachableByKeyboard(page: Page, most = 600): Promise<string[]> {
  await page.evaluate(() => {
    for (const el of Array.from(document.querySelectorAll('[data-kit-focused], [data-kit-control]'))) {
      el.removeAttribute('data-kit-focused');
      el.removeAttribute('data-kit-control');
    }
    const controls = document.querySelectorAll<HTMLElement>(
      'button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), a[href], summary',
    );
    for (const el of Array.from(controls))
      if (el.getClientRects().length > 0 && !el.closest('[hidden]')) el.setAttribute('data-kit-control', '');
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  for (let i = 0; i < most; i++) {
    await page.keyboard.press('Tab');
    const again = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return false;
      if (el.hasAttribute('data-kit-focused')) return true;
      el.setAttribute('data-kit-focused', '');
      return false;
    });
    if (again) break;
  }
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('[data-kit-control]:not([data-kit-focused])')).map(
      (el) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}"`,
    ),
  );
}

/** Starts a run of `workflowId` from the console's Runs section, waits until its detail shows `status`; its id. */
export async function startRunInConsole(page: Page, workflowId: string, status: string): Promise<string> {
  await page.locator(`#run-workflow option[value="${workflowId}"]`).waitFor({ state: 'attached' });
  await page.getByLabel('Workflow').selectOption(workflowId);
  await page.getByRole('button', { name: 'Start run' }).click();
  const detail = page.locator(`#run-detail[data-status="${status}"]`);
  await detail.waitFor();
  return (await detail.getAttribute('data-run-id'))!;
}

/** The code a refused or failed tool call carries (receipt error, or the gateway's error object). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool result body, indexed freely
export function codeOf(r: { body: Record<string, any> }): unknown {
  return r.body.receipt?.error?.mhs_code ?? r.body.error?.mhs_code ?? r.body.error?.code ?? r.body.code;
}
