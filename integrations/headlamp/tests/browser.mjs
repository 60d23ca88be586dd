// Opens pages in Debian's chromium (headless, driven by playwright-core; no browser download)
// and prints what each shows, as JSON, for tests/e2e/test_headlamp.py.
// stdin: {"profile": DIR, "pages": [{"url", "wait": CSS selector, "screenshot"?: PATH, "selector"?}]}
// stdout: [{"url", "text", "html", "pwned", "dialogs", "errors"}]
import { chromium } from 'playwright-core';
import { readFileSync } from 'fs';

const input = JSON.parse(readFileSync(0, 'utf8'));
const browser = await chromium.launchPersistentContext(input.profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  viewport: { width: 1100, height: 800 },
});
const results = [];
try {
  for (const spec of input.pages) {
    const page = await browser.newPage();
    const dialogs = [];
    const errors = [];
    page.on('dialog', d => {
      dialogs.push(d.message());
      d.dismiss();
    });
    page.on('pageerror', e => errors.push(String(e)));
    page.on('console', m => m.type() === 'error' && errors.push(`console: ${m.text()}`));
    await page.goto(spec.url);
    let waited = true;
    try {
      await page.waitForSelector(spec.wait, { timeout: 60000 });
    } catch (e) {
      waited = false; // the caller's assertions show what the page shows instead
      errors.push(`${spec.wait} never showed: ${e.message.split('\n')[0]}`);
    }
    await page.waitForTimeout(500); // an onerror handler would have fired by now
    const root = page.locator(spec.selector || '#storybook-root');
    if (spec.screenshot) await root.screenshot({ path: spec.screenshot });
    results.push({
      url: spec.url,
      waited,
      text: await root.innerText(),
      html: await root.innerHTML(),
      // what the hostile strings of the tests would do, had any run
      pwned: await page.evaluate(
        () =>
          window.__pwned ??
          document.body.getAttribute('data-pwned') ??
          (document.title === 'pwned' ? 'title' : null)
      ),
      dialogs,
      errors,
    });
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(results));
