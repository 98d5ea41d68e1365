// The wheres of tests/edge/big-where.test.js, for Node and for its Worker
// (tests/edge/big-where-worker.js). Not a test itself.

/**
 * Wheres of `terms` terms, from the package's `api`: equalities on one
 * column that fold into an IN list, and comparisons that do not, under or
 * and under and.
 *
 * @example const { equalities } = wheres(api, 2000);
 */
export function wheres(api, terms) {
  const { and, eq, gt, lt, ne, or } = api;
  const range = (f) => Array.from({ length: terms }, (_, i) => f(i));
  return {
    equalities: (e) => or(...range((i) => eq(e.n, i * 6))),
    numsUnderOr: (e) => or(...range((i) => (i % 2 ? and(gt(e.n, i * 3), lt(e.n, i * 3 + 2)) : eq(e.name, `name-${i % 7}`)))),
    underAnd: (e) => and(...range((i) => ne(e.n, i * 9))),
  };
}
