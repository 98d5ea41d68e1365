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
  const { and, eq, gt, inArray, lt, ne, not, or } = api;
  const range = (f) => Array.from({ length: terms }, (_, i) => f(i));
  // An inArray whose values are about 3.5 MB as JSON, above the 2 MB a
  // Durable Object's SQLite takes in one value: names that match none,
  // with three that match at its end (in the list's last part).
  const long = [...Array.from({ length: 150_000 }, (_, i) => `absent-name-${i}-${"p".repeat(8)}`), "name-3", "name-17", "name-49"];
  return {
    longInArray: (e) => inArray(e.name, long),
    notLongInArray: (e) => not(inArray(e.name, long)),
    equalities: (e) => or(...range((i) => eq(e.n, i * 6))),
    numsUnderOr: (e) => or(...range((i) => (i % 2 ? and(gt(e.n, i * 3), lt(e.n, i * 3 + 2)) : eq(e.name, `name-${i % 7}`)))),
    underAnd: (e) => and(...range((i) => ne(e.n, i * 9))),
  };
}
