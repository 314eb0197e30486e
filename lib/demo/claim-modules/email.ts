import type { ClaimModule } from '../../claims/modules.js';
import type { PersonLookup } from './demo-data.js';

/** Provides `email` and `email_verified` (scope `email`). */
export function emailModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'email',
    provides: ['email', 'email_verified'],
    async resolve(accountId) {
      const person = await lookup(accountId);
      const out: Record<string, unknown> = {};
      if (person?.email !== undefined) out.email = person.email;
      if (person?.email_verified !== undefined) out.email_verified = person.email_verified;
      return out;
    },
  };
}
