import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Where screenshots go (ignored by git). */
export const SCREENSHOT_DIR = new URL('../../test-output/screenshots/', import.meta.url).pathname;

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Launches Debian's Chromium headless with the flags this machine needs, and `extraArgs`. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
}

/** Chromium on a profile of its own with `preferences` (Chromium's `Default/Preferences`), in a temporary directory `close` removes. */
export async function launchChromiumWithPreferences(preferences: Record<string, unknown>, extraArgs: string[] = []): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-chromium-profile-'));
  mkdirSync(join(dir, 'Default'));
  writeFileSync(join(dir, 'Default', 'Preferences'), JSON.stringify(preferences));
  const context = await chromium.launchPersistentContext(dir, { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extraArgs] });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium that lets third-party cookies through, as a person's browser may: the contexts of {@link launchChromium},
 * as Chromium's own profile here, block them.
 */
export function launchChromiumAllowingThirdPartyCookies(extraArgs: string[] = []): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // Chromium's "Third-party cookies" setting: 0 allows them.
  return launchChromiumWithPreferences({ profile: { cookie_controls_mode: 0 } }, extraArgs);
}

/** Chromium that keeps no cookie of any site, as a person may set hers ("Don't allow sites to save data"). */
export function launchChromiumBlockingCookies(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // Chromium's content setting for cookies: 2 blocks them.
  return launchChromiumWithPreferences({ profile: { default_content_setting_values: { cookies: 2 } } });
}

/**
 * She moves the pointer onto the consent page's Allow, as a person does (the page holds Allow off until a pointer
 * moved on it: lib/pages/seen-gate.ts), and clicks it.
 */
export async function allow(page: Page): Promise<void> {
  const button = page.locator('#consent-allow button');
  const held = () => page.evaluate(() => document.querySelector<HTMLButtonElement>('#consent-allow button')?.disabled === true).catch(() => false);
  for (let tries = 0; tries < 3; tries++) {
    // Moved on the page shown before it, the pointer would be first seen on Allow itself: no move on this page.
    await page.mouse.move(0, 0);
    await button.hover();
    // The page may start over (it lost focus, or she clicked before it was parsed): she sees Allow off and moves again.
    if (await button.isEnabled()) await button.click();
    if (!(await held())) return;
  }
  throw new Error('Allow stayed held off after three moves onto it');
}

/** Saves a full-page screenshot as `test-output/screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
