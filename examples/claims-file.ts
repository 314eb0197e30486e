/**
 * A claim module for `svc.claims.modules`: the `claims` of each person in the users file
 * (examples/users-file.ts; `AUTH_USERS_FILE`, default `users.json`), read at start. It provides
 * every claim name the file uses, so discovery offers the scopes those names complete (C5).
 *
 *   SVC_CLAIMS_MODULES=examples/claims-file.ts AUTH_USERS_FILE=/etc/svc-connect/users.json npm start
 */
import type { ClaimModule, ModuleContext } from '../lib/index.js';
import { readUsersFile, usersFilePath, type FileUser } from './users-file.js';

/** A {@link ClaimModule} providing the claims of `users`, by `sub`. */
export function fileClaimModule(users: readonly FileUser[]): ClaimModule {
  const bySub = new Map(users.map((u) => [u.sub, u.claims ?? {}]));
  const provides = [...new Set(users.flatMap((u) => Object.keys(u.claims ?? {})))].sort();
  return {
    name: 'users-file',
    provides,
    resolve(accountId, claims) {
      const own = bySub.get(accountId) ?? {};
      const out: Record<string, unknown> = {};
      for (const claim of claims) if (Object.hasOwn(own, claim)) out[claim] = own[claim];
      return out;
    },
  };
}

/** `svc.claims.modules`' default export: the claims of `AUTH_USERS_FILE`, read at start. */
export default function createFileClaimModule(context: ModuleContext): ClaimModule {
  const module = fileClaimModule(readUsersFile(usersFilePath()));
  context.logger.info('claims_file_loaded', { provides: module.provides.join(' ') });
  return module;
}
