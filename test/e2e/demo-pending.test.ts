import { describe, expect, it } from '@jest/globals';

import { DEMO_PENDING_FLOWS } from '../../lib/demo/router.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser } from '../helpers/flow.js';

describe('the demo page remembers at most DEMO_PENDING_FLOWS unfinished flows', () => {
  const running = appPerSuite();

  /** Starts one demo flow in a fresh browser; resolves the browser and its state. */
  const start = async (): Promise<{ browser: FormBrowser; state: string }> => {
    const browser = new FormBrowser();
    const origin = running.baseUrl;
    const posted = await browser.post(`${origin}/oidcdemo/login`, { scope: 'email' }, origin);
    expect(posted.status).toBe(303);
    return { browser, state: (browser.cookie('svc_demo_state') ?? '').split('.')[0] ?? '' };
  };
  /** The callback of `flow` as the provider would send it back with an error (no sign-in needed). */
  const callback = async (flow: { browser: FormBrowser; state: string }): Promise<number> => {
    const response = await flow.browser.request(`${running.baseUrl}/oidcdemo/callback?state=${flow.state}&error=access_denied`);
    await response.text();
    return response.status;
  };

  it('an unauthenticated flood forgets the oldest flow, and a flow started last still completes', async () => {
    const first = await start();
    const second = await start();
    expect(await callback(second)).toBe(200);
    for (let i = 0; i < DEMO_PENDING_FLOWS; i += 50) await Promise.all(Array.from({ length: 50 }, () => start()));
    const last = await start();
    expect(await callback(first)).toBe(400);
    expect(await callback(last)).toBe(200);
  });
});
