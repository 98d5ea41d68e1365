// Checks that the put path's optimized code outlives a full collection
// taken with no transaction open (js/tx.js, Tx's kept instance and its
// state). V8's optimized code holds the hidden classes it was compiled for
// weakly; the classes of a frozen tx and of its state were held only by
// live transactions, so each bulk transaction after a full GC ran tx.put
// in the interpreter until V8 compiled it again
// (docs/performance.md, "Issue 13, the class of a frozen tx"). The fixture
// runs under --trace-opt and --trace-deopt, which name what V8 compiles
// and each optimized function it throws away, and why; none of tx.put's
// may go for "weak objects". V8 only: the figures it saves are in the
// bench, not here.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const fixture = fileURLToPath(new URL("./fixtures/put-loop-deopts.mjs", import.meta.url));

test("tx.put's optimized code is not thrown away by a full GC between bulk transactions", () => {
  const out = execFileSync(process.execPath, ["--expose-gc", "--trace-opt", "--trace-deopt", fixture], { encoding: "utf8", maxBuffer: 64 << 20 });
  assert.match(out, /round 5/, "the fixture ran its six transactions");
  assert.match(out, /\ndone\n/);
  // V8 did compile tx.put (else nothing could be thrown away, and the
  // check below would hold for nothing).
  assert.match(out, /completed optimizing [^\n]*<JSFunction put /, "V8 optimized tx.put in the fixture's loop");
  // The functions of the put path that hold a tx's class or its state's:
  // the method, and the checks every method of a tx runs (Tx.#of,
  // Tx.#open, liveTx). Before the kept tx, put, #of and #open went in
  // every round after the first, and put, #open and liveTx once in a run
  // before its state was kept too.
  const dropped = out.split("\n").filter((l) => /reason: weak objects/.test(l) && /SharedFunctionInfo (put|#of|#open|liveTx)>/.test(l));
  assert.deepEqual(dropped, [], "optimized code of the put path thrown away because a class it was compiled for died");
  // The trace does name what it throws away: the fixture's deopts of other
  // kinds are printed in the same form (so the filter above reads real lines).
  assert.match(out, /marking dependent code|bailout \(kind: deopt/);
});
