import Router from '@koa/router';

import type { SvcStore } from '../../adapters/store.js';

/** How long `/readyz` waits for the store. */
const READY_TIMEOUT_MS = 2000;

/** `/healthz` (liveness: always 200 while the process serves) and `/readyz` (the store answers). */
export function createHealthRouter(store: SvcStore): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        store.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
      ctx.body = { status: 'ready' };
    } catch {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', error: 'store_unavailable', error_description: 'the provider store does not answer' };
    } finally {
      clearTimeout(timer);
    }
  });
  return router;
}
