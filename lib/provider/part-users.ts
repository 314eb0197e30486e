/**
 * How many open svc-connect instances use a store or mailer: one given to several (a host replacing its instance by a
 * new one on the same store) is closed by the last of them to close, and a start that fails closes none another uses.
 */
const usersOf = new WeakMap<object, number>();

/** Counts one more instance using `part`. */
export function takeUp(part: object): void {
  usersOf.set(part, (usersOf.get(part) ?? 0) + 1);
}

/** Counts one instance less using `part`; whether none is left (then the one letting go closes it). */
export function letGo(part: object): boolean {
  const left = (usersOf.get(part) ?? 1) - 1;
  usersOf.set(part, left);
  return left <= 0;
}
