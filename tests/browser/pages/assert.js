// A small assert for code that runs in a browser (the conformance runner in
// a Worker): ok, equal, deepStrictEqual and fail, with node:assert's meaning
// (strict: Object.is for primitives, same prototype and own keys for objects).

export class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = "AssertionError";
  }
}

function show(v) {
  try {
    return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? `${x}n` : x));
  } catch {
    return String(v);
  }
}

function same(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
}

export const assert = {
  ok(value, message) {
    if (!value) throw new AssertionError(message ?? `expected a truthy value, got ${show(value)}`);
  },
  equal(actual, expected, message) {
    if (!Object.is(actual, expected)) throw new AssertionError(`${message ?? "equal"}: got ${show(actual)}, expected ${show(expected)}`);
  },
  deepStrictEqual(actual, expected, message) {
    if (!same(actual, expected)) throw new AssertionError(`${message ?? "deepStrictEqual"}: got ${show(actual)}, expected ${show(expected)}`);
  },
  fail(message) {
    throw new AssertionError(message);
  },
};
