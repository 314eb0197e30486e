// The JSON types OpenID Connect Core 5.1 gives its standard claims, and the Identity Assurance Schema Definition 1.0
// its claims about End-Users. A module's value of another type fails the request: a whole record under `given_name`,
// a promise it forgot to await (`{}`), would otherwise travel under a name the person approved for less.

// No import of the provider: the users file's checks (examples/users-file.ts) run without loading it.
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const string = (v: unknown): boolean => typeof v === 'string';
const strings = (v: unknown): boolean => Array.isArray(v) && v.every(string);
/** An object of string members, only those named. */
const parts = (names: readonly string[]) => (v: unknown): boolean =>
  isObject(v) && Object.entries(v).every(([name, part]) => names.includes(name) && string(part));

const STRINGS = [
  ...['name', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username', 'profile', 'picture', 'website'],
  ...['email', 'gender', 'zoneinfo', 'locale', 'phone_number'],
  ...['birth_family_name', 'birth_given_name', 'birth_middle_name', 'salutation', 'title', 'msisdn', 'also_known_as'],
];

const TYPES: ReadonlyMap<string, (v: unknown) => boolean> = new Map([
  ...STRINGS.map((name): [string, (v: unknown) => boolean] => [name, string]),
  // YYYY-MM-DD, the year maybe 0000, or YYYY alone: a Date's text is a moment, maybe of the day before where it was made.
  ['birthdate', (v) => typeof v === 'string' && /^\d{4}(?:-\d{2}-\d{2})?$/.test(v)],
  ['email_verified', (v) => typeof v === 'boolean'],
  ['phone_number_verified', (v) => typeof v === 'boolean'],
  ['updated_at', (v) => typeof v === 'number'],
  ['address', parts(['formatted', 'street_address', 'locality', 'region', 'postal_code', 'country'])],
  ['nationalities', strings],
  ['place_of_birth', parts(['country', 'region', 'locality'])],
]);

/**
 * What a claim module is failed with when its answer does not have the type its claim or schema member has: named
 * `ClaimModuleAnswerInvalid`, with the claim or member name as its code, never the value.
 */
export function invalidAnswer(member: string): Error {
  return Object.assign(new TypeError('a claim module answered a value of another type than its claim has'), { name: 'ClaimModuleAnswerInvalid', code: member });
}

/**
 * Whether `value` (as its JSON) has the type the specifications give `claim`; any JSON fits a name they do not
 * define (svc.* claims, a deployment's own names).
 */
export function fitsClaimType(claim: string, value: unknown): boolean {
  return TYPES.get(claim)?.(value) ?? true;
}

/**
 * Checks a module's value of `claim`, as its JSON, with {@link fitsClaimType}.
 * @throws {@link invalidAnswer} naming `claim`.
 */
export function assertClaimType(claim: string, value: unknown): void {
  if (!fitsClaimType(claim, value)) throw invalidAnswer(claim);
}
