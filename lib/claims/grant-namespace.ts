/**
 * The prefix of every name a grant records besides claim names (how data travels, how each claim was approved,
 * verified claims and details). No claim module may provide or verify a name in it: a consent adds each requested
 * claim name to her grant, where such a name would read as an approval the page never showed.
 */
export const GRANT_NAMESPACE = 'svc:';
