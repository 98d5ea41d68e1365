// StoreError and the one helper that turns a wasm answer into a value or a
// thrown StoreError.
//
// The error codes are defined once, in src/onestore/status.h
// (ONESTORE_ERROR_CODES). The list below is its JS twin: keep the two in step.
// tests/js/errors.test.js compares it with the wasm module's errorCodes() and
// with docs/api.md.

/**
 * The stable error codes, by name. The values are what `StoreError.code`
 * holds.
 *
 * @example
 * try { await store.outbox.read(0, 10); }
 * catch (e) { if (e.code === ErrorCodes.Closed) reopen(); }
 */
export const ErrorCodes = Object.freeze({
  InvalidArgs: "invalid/args",
  InvalidCursor: "invalid/cursor",
  ReadAfterBulk: "read_after_bulk",
  StorageFailed: "storage_failed",
  Fenced: "fenced",
  SchemaNewer: "schema/newer",
  SyncGap: "sync/gap",
  SyncDiverged: "sync/diverged",
  NotFound: "not_found",
  Closed: "closed",
  Limit: "limit",
  InvalidArchive: "invalid/archive",
  Unauthorized: "unauthorized",
  LockTimeout: "lock/timeout",
});

const knownCodes = new Set(Object.values(ErrorCodes));

/**
 * Whether `code` is one of ErrorCodes: an error code that came from
 * elsewhere (a link, a relay's answer) is kept only then.
 *
 * @example
 * isErrorCode("fenced")   // true
 * isErrorCode(42)         // false
 */
export function isErrorCode(code) {
  return knownCodes.has(code);
}

/**
 * The one error class of onestore. `code` is one of `ErrorCodes`; the message
 * says what was wrong and with which value; `cause` carries an underlying
 * error when there is one.
 *
 * @example
 * try { await edits.page(q, 10, ctx, { after: "nonsense" }); }
 * catch (e) {
 *   if (e instanceof StoreError && e.code === "invalid/cursor") restart();
 * }
 */
export class StoreError extends Error {
  /**
   * @param {string} code one of ErrorCodes
   * @param {string} message what was wrong, naming the value
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = "StoreError";
    /** @type {string} */
    this.code = code;
  }
}

/**
 * A StoreError with code `invalid/args`.
 *
 * @example
 * if (typeof limit !== "number") throw invalidArgs(`limit: ${limit} is not a number`);
 */
export function invalidArgs(message, options) {
  return new StoreError(ErrorCodes.InvalidArgs, message, options);
}

/**
 * The error for `e`, thrown by the caller's own code while `what` ran (a
 * getter, a Proxy trap, a migrate function): a StoreError as it is, any
 * other as `invalid/args` "<what> threw: <its message><after>" with `e` as
 * its cause (docs/api.md, "Errors").
 * @param {unknown} e
 * @param {string} what
 * @param {string} [after]
 */
export function userThrew(e, what, after = "") {
  if (e instanceof StoreError) return e;
  const text = e && typeof e === "object" && "message" in e ? e.message : String(e);
  return invalidArgs(`${what} threw: ${text}${after}`, { cause: e });
}

/**
 * Refuses an option `what` does not take (a misspelt one would otherwise
 * be ignored silently): `invalid/args` naming it and the ones it takes.
 * @param {object | undefined} options
 * @param {readonly string[]} known
 * @param {string} what  the call, for the message
 */
export function refuseUnknownOptions(options, known, what) {
  for (const key of Object.keys(options ?? {})) {
    if (!known.includes(key)) throw invalidArgs(`${what}: unknown option ${JSON.stringify(key)} (the options are ${known.join(", ")})`);
  }
}

/**
 * Returns the payload of a wasm answer, or throws the StoreError it carries.
 * A failed answer is `!<code> <message>`.
 *
 * @example
 * unwrap('{"seq":3}')                   // '{"seq":3}'
 * unwrap("!fenced another owner holds the store")   // throws StoreError fenced
 */
export function unwrap(answer) {
  if (typeof answer !== "string" || answer.charCodeAt(0) !== 33 /* ! */) return answer;
  const space = answer.indexOf(" ");
  const code = space < 0 ? answer.slice(1) : answer.slice(1, space);
  const message = space < 0 ? code : answer.slice(space + 1);
  if (!knownCodes.has(code)) {
    return failWith(new StoreError(ErrorCodes.StorageFailed, `the core answered an unknown error code: ${answer}`));
  }
  return failWith(new StoreError(code, message));
}

function failWith(error) {
  throw error;
}

/**
 * Turns anything thrown while calling into the wasm module into a
 * StoreError. A StoreError passes through; a wasm trap or abort (the
 * instance is no longer trustworthy) becomes `storage_failed`; a call
 * whose arguments the wasm heap has no room for, refused before it started,
 * becomes `limit`; anything else (a wrong argument type rejected by the
 * binding) becomes `invalid/args`.
 *
 * @example
 * try { core.page(...); } catch (e) { throw asStoreError(e, "page"); }
 */
export function asStoreError(error, what) {
  if (error instanceof StoreError) return error;
  const text = error && typeof error === "object" && "message" in error ? error.message : String(error);
  // A call refused before it started: its arguments do not fit in the wasm
  // heap (wasm/core_post.js, onestoreLimit). The instance is sound.
  if (error?.name === "OnestoreLimitError") return new StoreError(ErrorCodes.Limit, `${what}: ${text}`, { cause: error });
  // An answer longer than a JS string may be (a row of a store written by
  // an older version, read back whole): too large, not a bad argument.
  if (error instanceof RangeError && /string longer than|Invalid string length/.test(text)) {
    return new StoreError(ErrorCodes.Limit, `${what}: the answer is longer than a JavaScript string may be (${text})`, { cause: error });
  }
  if (isTrap(error)) {
    return new StoreError(ErrorCodes.StorageFailed, `${what}: the wasm core stopped (${text}); reopen the store`, { cause: error });
  }
  return new StoreError(ErrorCodes.InvalidArgs, `${what}: ${text}`, { cause: error });
}

/**
 * True when `error` is a wasm trap or an Emscripten abort.
 *
 * @example
 * isTrap(new WebAssembly.RuntimeError("unreachable"))   // true
 * isTrap(new RangeError("Maximum call stack size exceeded"))   // true
 */
export function isTrap(error) {
  if (typeof WebAssembly !== "undefined" && error instanceof WebAssembly.RuntimeError) return true;
  // A wasm stack overflow is a RangeError in V8: the C++ stack was unwound
  // without its destructors (a transaction left open, say), so the instance
  // is no more to be trusted than after a trap.
  if (error instanceof RangeError && /call stack/i.test(String(error.message))) return true;
  const text = error && typeof error === "object" ? String(error.message ?? "") : String(error);
  return /^Aborted\(|abort\(/i.test(text) || error?.name === "ExitStatus";
}
