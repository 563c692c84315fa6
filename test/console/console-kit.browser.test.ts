// Guarantees (the kit's own checks, issue 18 item 7), in Debian's Chromium: `unreachableByKeyboard` names a control
// that Tab skips and `statesWithoutWords` names a state told by a colour and a symbol alone, so the console tests
// that expect both lists empty can fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { HAVE_CHROMIUM, launchChromium, statesWithoutWords, unreachableByKeyboard } from './console-kit.js';

describe.skipIf(!HAVE_CHROMIUM)('the console kit checks', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('name a control Tab never reaches and a state without words, and pass a page without either', async () => {
    const page = await browser.newPage();
    await page.setContent(
      '<button>a</button><button tabindex="-1">skipped</button><input>' +
        '<span data-estop="engaged" style="color:red">■</span><span data-gate="open">Gate open</span>',
    );
    expect(await unreachableByKeyboard(page)).toEqual(['button "skipped"']);
    expect(await statesWithoutWords(page)).toEqual(['[data-estop][engaged]: "■"']);
    await page.setContent('<button>a</button><input><span data-estop="engaged">■ E-stop ENGAGED</span>');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    expect(await statesWithoutWords(page)).toEqual([]);
  });
});
