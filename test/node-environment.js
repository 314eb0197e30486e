/**
 * Jest's Node environment, with the process's undici dispatcher shared into the test context.
 *
 * oidc-provider builds its SSRF-checking dispatcher from the dispatcher Node's `fetch` installs on
 * the global object (`Symbol.for('undici.globalDispatcher.1')`). In a Jest test context that symbol
 * lives on the outer global, not the context's, so oidc-provider warned "failed to setup SSRF
 * protection for fetch" in tests only (a real process has it). Our own `fetch` replaces
 * oidc-provider's outgoing requests anyway (lib/net/provider-fetch.ts); this keeps test output
 * to what a real process prints.
 */
/* global Response */
import { TestEnvironment } from 'jest-environment-node';

const DISPATCHER = Symbol.for('undici.globalDispatcher.1');

export default class SharedDispatcherEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    // Creating a Response loads Node's undici, which installs the global dispatcher.
    void new Response('');
    if (globalThis[DISPATCHER]) this.global[DISPATCHER] = globalThis[DISPATCHER];
  }
}
