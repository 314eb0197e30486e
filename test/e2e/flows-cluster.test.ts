import { describeEachStore } from '../helpers/stores.js';
import { clientCacheFlows } from './flows/client-cache.js';
import { codeFlows } from './flows/code-flow.js';
import { races } from './flows/races.js';
import { tokenRaces } from './flows/token-races.js';
import { twoProcessFlows } from './flows/two-processes.js';

/**
 * Whole flows on a 3-master Redis Cluster started for this file (the feature suites run on the
 * memory store; the adapter contract suites, test/adapters/, on every store; Redis standalone's
 * flows are in test/e2e/flows-redis.test.ts): a code flow with a real relying party, single-use
 * tokens raced across spellings and 20 times over, clients cached in two processes, and two example-server
 * processes acting as one provider.
 */
describeEachStore(
  'whole flows',
  (kind, properties) => {
    for (const flows of [codeFlows, tokenRaces, races, clientCacheFlows, twoProcessFlows]) flows(kind, properties);
  },
  ['redis cluster'],
);
