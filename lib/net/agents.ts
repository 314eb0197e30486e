import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * The connection agents of the outbound fetch: its own, not node's global ones, because a global
 * agent forwards through `HTTP_PROXY`/`HTTPS_PROXY` when node runs with `NODE_USE_ENV_PROXY=1` or
 * `--use-env-proxy` (Node 24). A proxy resolves the host name again and connects wherever its answer
 * points, past the address vetted here (and `NO_PROXY` hosts go direct by another rule): these
 * agents have no `proxyEnv`, so every fetch connects directly to the address it vetted.
 */
export const outboundAgents: { readonly http: HttpAgent; readonly https: HttpsAgent } = {
  http: new HttpAgent(),
  https: new HttpsAgent(),
};
