// Screenshots of the console's views at a laptop and a narrow width, and the check that no table is cut off.
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';

export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** The console's sections, each a view an operator scrolls or jumps to (the nav links). */
export const VIEWS = ['devices', 'approvals', 'runs', 'decisions', 'receipts', 'permits', 'ledger'] as const;

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
