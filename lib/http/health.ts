import Router from '@koa/router';

import type { SvcStore } from '../../adapters/store.js';
import { EXACT_PATHS } from '../settings/paths.js';
import { noStore, sendError } from '../web/error-response.js';

/** How long `/readyz` waits for the store. */
const READY_TIMEOUT_MS = 2000;

/** `/healthz` (liveness: always 200 while the process serves) and `/readyz` (the store answers). */
export function createHealthRouter(store: SvcStore): Router {
  const router = new Router(EXACT_PATHS);
  router.get('/healthz', (ctx) => {
    noStore(ctx);
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    noStore(ctx);
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
      sendError(ctx, 503, 'store_unavailable', 'the provider store does not answer', { status: 'unavailable' });
    } finally {
      clearTimeout(timer);
    }
  });
  return router;
}
