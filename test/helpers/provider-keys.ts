import { generateProviderKeys, type PrivateJwks } from '../../lib/provider/keys.js';
import { runShared } from './run-shared.js';

let shared: Promise<PrivateJwks> | undefined;

/**
 * One provider key set for the whole test run ({@link runShared}), which test apps used to generate at every
 * start. Tests of key generation itself start without it.
 */
export function testProviderKeys(): Promise<PrivateJwks> {
  shared ??= runShared('provider-keys', generateProviderKeys);
  return shared;
}
