import { createApp, createHttpServer, loadSettings } from '../../lib/index.js';
let broken = false;
const boom = (e: string) => { if (broken) throw new Error('log disk full ' + e); };
const logger = { info: boom, warn: boom, error: boom };
const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:4799', 'svc.demo.enabled': true } });
const app = await createApp(settings, { logger });
const server = createHttpServer(app.callback());
await new Promise<void>((r) => server.listen(4799, '127.0.0.1', r));
process.on('exit', (c) => console.log('EXIT', c));
broken = true;
for (const [m, p, body] of [['GET', '/healthz'], ['GET', '/nope'], ['POST', '/oidc/v1/token', 'grant_type=x'], ['GET', '/oidc/v1/.well-known/openid-configuration'], ['GET', '/oidc/v1/interaction/abc']] as const) {
  try {
    const r = await fetch(`http://127.0.0.1:4799${p}`, { method: m, body, headers: body ? { 'content-type': 'application/x-www-form-urlencoded' } : {} });
    console.log(m, p, r.status, (await r.text()).slice(0, 100));
  } catch (e) { console.log(m, p, 'FETCH ERR', (e as Error).message); }
}
server.close(); await app.svc.close();
