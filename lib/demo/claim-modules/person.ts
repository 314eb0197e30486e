import type { ClaimModule } from '../../claims/modules.js';
import type { PersonLookup } from './demo-data.js';

/** Provides `name`, `given_name`, `family_name` and `birthdate` (scope `profile`). */
export function personModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'person',
    provides: ['name', 'given_name', 'family_name', 'birthdate'],
    async resolve(accountId, claims) {
      const person = await lookup(accountId);
      const out: Record<string, unknown> = {};
      for (const claim of claims) {
        const value = person?.[claim as 'name' | 'given_name' | 'family_name' | 'birthdate'];
        if (value !== undefined) out[claim] = value;
      }
      return out;
    },
  };
}
