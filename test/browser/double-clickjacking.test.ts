import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium, screenshot } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

const rp: ClientMetadata = { client_id: 'dcj-rp', client_name: 'Some App', client_secret: 'dcj-rp-secret-that-is-long-enough-0123456789', redirect_uris: ['http://rp.localhost/cb'] };
const ALLOW = '#consent-allow button';

/**
 * Double-clickjacking (Paulos Yibelo, 2024): a hostile page asks for a double-click and, on its first click, puts the
 * consent page under her still pointer (here: navigates its window there; a popup closing over it is alike), so the
 * second click lands on Allow. No frame is involved, so `frame-ancestors` does not help: Allow stays off until the
 * page has seen her move the pointer or press a key.
 */
describe('double-clickjacking of the consent page', () => {
  let running: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [rp] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  /**
   * A fresh browser signed in (her consent to `rp` not given), with every step that matters recorded in order: each
   * post of the consent form (`confirm`), each answer reaching the relying party (`code` or the error; `answered`
   * resolves at the first), and what the test pushes. The hostile page, at http://evil.localhost/, sends the window to
   * `url()` on the first press.
   */
  async function signedIn(options: BrowserContextOptions = {}): Promise<{ page: Page; context: BrowserContext; steps: string[]; url: () => string; answered: Promise<void> }> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const steps: string[] = [];
    const url = (): string => codeFlowUrl(running.issuer, rp, { scope: 'openid email' });
    await context.route(/^http:\/\/rp\.localhost\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
    await context.route(/^http:\/\/evil\.localhost\//, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: `<!DOCTYPE html><title>Prize</title><button id="bait" style="position:fixed;inset:0;width:100%;font-size:2rem">Double-click to claim</button><script>bait.onmousedown = () => { location.href = ${JSON.stringify(url())}; };</script>`,
      }),
    );
    // Chromium may request one callback URL twice (a first attempt it gives up before the route answers): recorded once.
    const callbacks = new Set<string>();
    let reached!: () => void;
    const answered = new Promise<void>((resolve) => (reached = resolve));
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/confirm')) steps.push('confirm');
      if (!request.url().startsWith('http://rp.localhost/') || callbacks.has(request.url())) return;
      callbacks.add(request.url());
      steps.push(new URL(request.url()).searchParams.has('code') ? 'code' : String(new URL(request.url()).searchParams.get('error')));
      reached();
    });
    await page.goto(url());
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector(ALLOW);
    return { page, context, steps, url, answered };
  }

  /** The middle of the button `selector` on the page shown now. */
  const middleOf = async (page: Page, selector = ALLOW): Promise<{ x: number; y: number }> => {
    const box = await page.locator(selector).boundingBox();
    if (!box) throw new Error(`${selector} is not shown`);
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };

  /** A press and release at `at`, sent as Chromium's input (trusted), with no pointer move before or between them. */
  const pressInPlace = async (page: Page, at: { x: number; y: number }): Promise<void> => {
    const cdp = await page.context().newCDPSession(page);
    for (const type of ['mousePressed', 'mouseReleased'] as const) await cdp.send('Input.dispatchMouseEvent', { type, ...at, button: 'left', clickCount: 1 });
    await cdp.detach();
  };

  it('attack: the consent page put under her still pointer by the first click of a double-click does not take the second', async () => {
    const { page, context, steps, answered } = await signedIn();
    const spot = await middleOf(page);
    await page.goto('http://evil.localhost/');
    await page.mouse.move(spot.x, spot.y);
    // First click: on the bait, whose press sends the window to the consent page; the pointer stays where it is.
    await Promise.all([page.waitForURL(/\/interaction\//), page.mouse.down()]);
    await page.mouse.up();
    await page.waitForSelector(ALLOW);
    // Second click, where Allow now is; the system may report the pointer again where it already was.
    await page.mouse.move(spot.x, spot.y);
    await page.mouse.down();
    await page.mouse.up();
    expect(await page.locator(ALLOW).isDisabled()).toBe(true);
    await screenshot(page, 'consent-allow-held-off');
    steps.push('she moves the pointer');
    await allow(page);
    await answered;
    expect(steps).toEqual(['she moves the pointer', 'confirm', 'code']);
    await context.close();
  });

  it('attack: a click at load, before any pointer move (only a press, or a jump to the spot and a press), does not grant', async () => {
    const { page, context, steps, url, answered } = await signedIn();
    await pressInPlace(page, await middleOf(page));
    await page.goto(url());
    const spot = await middleOf(page);
    await page.mouse.click(spot.x, spot.y);
    expect(await page.locator(ALLOW).isDisabled()).toBe(true);
    steps.push('she moves the pointer');
    await allow(page);
    await answered;
    expect(steps).toEqual(['she moves the pointer', 'confirm', 'code']);
    await context.close();
  });

  it('attack: a click on Allow before the page held it off (still being parsed) is not sent; Allow turns off and she is told how to turn it on', async () => {
    const { page, context, steps, answered } = await signedIn();
    const spot = await middleOf(page);
    // As before DOMContentLoaded, when the button is parsed but the script has not yet turned it off.
    await page.locator(ALLOW).evaluate((button) => ((button as HTMLButtonElement).disabled = false));
    await pressInPlace(page, spot);
    expect({ disabled: await page.locator(ALLOW).isDisabled(), hint: await page.locator('#seen-gate-hint').isVisible(), steps }).toEqual({ disabled: true, hint: true, steps: [] });
    steps.push('she moves the pointer');
    await allow(page);
    await answered;
    expect(steps).toEqual(['she moves the pointer', 'confirm', 'code']);
    await context.close();
  });

  it('attack: a key held down since before the page appeared (its repeats: "hold Shift and double-click") is no key press', async () => {
    const { page, context, steps, answered } = await signedIn();
    const spot = await middleOf(page);
    await page.goto('http://evil.localhost/');
    await page.mouse.move(spot.x, spot.y);
    await page.keyboard.down('Shift');
    await Promise.all([page.waitForURL(/\/interaction\//), page.mouse.down()]);
    await page.mouse.up();
    await page.waitForSelector(ALLOW);
    // The key she still holds repeats, now on the consent page.
    await page.keyboard.down('Shift');
    await page.keyboard.down('Shift');
    expect(await page.locator(ALLOW).isDisabled()).toBe(true);
    await page.keyboard.up('Shift');
    steps.push('she moves the pointer');
    await allow(page);
    await answered;
    expect(steps).toEqual(['she moves the pointer', 'confirm', 'code']);
    await context.close();
  });

  /** Allow as assistive technology sees it (Chromium's accessibility tree): whether it is unavailable, and its description. */
  const allowAsAssistiveTechnologySees = async (page: Page): Promise<{ disabled: boolean; description: string }> => {
    const cdp = await page.context().newCDPSession(page);
    const { root } = await cdp.send('DOM.getDocument');
    const { nodes } = await cdp.send('Accessibility.queryAXTree', { nodeId: root.nodeId, accessibleName: 'Allow', role: 'button' });
    await cdp.detach();
    expect(nodes).toHaveLength(1);
    const [node] = nodes;
    return { disabled: node?.properties?.some((p) => p.name === 'disabled' && p.value.value === true) ?? false, description: String(node?.description?.value ?? '') };
  };

  it('honest: with no pointer to move (voice control, switch access, a screen reader), she is told on the page and in Allow\'s description how to turn it on; a key press ("press Tab"), then Allow by its accessibility action, allows', async () => {
    const { page, context, steps, answered } = await signedIn();
    const hint = 'Allow turns on once you move the pointer or press a key, such as Tab.';
    expect(await allowAsAssistiveTechnologySees(page)).toEqual({ disabled: true, description: hint });
    expect(await page.getByText(hint).isVisible()).toBe(true);
    await screenshot(page, 'consent-allow-held-off-hint');
    // Her voice command "press Tab": the key reaches the page; no pointer moved.
    await page.keyboard.press('Tab');
    expect(await allowAsAssistiveTechnologySees(page)).toEqual({ disabled: false, description: '' });
    expect(await page.getByText(hint).isVisible()).toBe(false);
    // "Click Allow": an accessibility action clicks with no pointer event and no key.
    await page.locator(ALLOW).evaluate((button) => (button as HTMLButtonElement).click());
    await answered;
    expect(steps).toEqual(['confirm', 'code']);
    await context.close();
  });

  it('honest: she moves the mouse and clicks Allow; the form sends no field the script set', async () => {
    const { page, context, steps, answered } = await signedIn();
    await page.mouse.move(5, 5);
    await page.mouse.move(40, 60, { steps: 4 });
    expect(await page.locator('#consent-allow input').evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).name))).toEqual(['delivery']);
    await page.click(ALLOW);
    await answered;
    expect(steps).toEqual(['confirm', 'code']);
    await context.close();
  });

  it('honest: with the keyboard alone, the first Tab lands on Allow and Enter allows', async () => {
    const { page, context, steps, answered } = await signedIn();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Allow');
    await page.keyboard.press('Enter');
    await answered;
    expect(steps).toEqual(['confirm', 'code']);
    await context.close();
  });

  it('honest: Deny is never held off', async () => {
    const { page, context, steps, answered } = await signedIn();
    await pressInPlace(page, await middleOf(page, '#consent-deny button'));
    await answered;
    expect(steps).toEqual(['access_denied']);
    await context.close();
  });

  it('on a touch-only phone: a tap at load does not grant; shown a second, Allow takes her tap', async () => {
    const { page, context, steps, answered } = await signedIn({ hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });
    await page.clock.install();
    await page.reload();
    expect(await page.evaluate(() => matchMedia('(any-hover: none)').matches)).toBe(true);
    const spot = await middleOf(page);
    await page.touchscreen.tap(spot.x, spot.y);
    expect(await page.locator(ALLOW).isDisabled()).toBe(true);
    steps.push('a second passes');
    await page.clock.runFor(1000);
    expect(await page.locator(ALLOW).isEnabled()).toBe(true);
    await page.touchscreen.tap(spot.x, spot.y);
    await answered;
    expect(steps).toEqual(['a second passes', 'confirm', 'code']);
    await context.close();
  });

  it('without JavaScript, Allow is a plain button: one click allows (a hostile page cannot swap windows without scripts either)', async () => {
    const { page, context, steps, answered } = await signedIn({ javaScriptEnabled: false });
    await page.click(ALLOW);
    await answered;
    expect(steps).toEqual(['confirm', 'code']);
    await context.close();
  });
});
