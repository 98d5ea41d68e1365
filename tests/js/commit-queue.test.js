// Checks the commit queue (js/commit-queue.js) on its own, with fake commits
// and no core: step order, adopt and flush inside the step, steps asked for
// from inside a step, holds, failures, and steps that commit nothing.

import { test } from "node:test";
import assert from "node:assert/strict";

import { makeCommitQueue } from "../../js/commit-queue.js";

// A fake core: each commit takes the next seq; ops() counts its calls.
function fake() {
  const events = [];
  let head = 0;
  const queue = makeCommitQueue({
    flush: (seq, ops) => events.push(["flush", seq, ops]),
  });
  const commit = (label) => () => {
    head++;
    events.push(["commit", label, head]);
    const seq = head;
    return { seq, ops: () => [`ops of ${seq}`] };
  };
  return { queue, events, commit, head: () => head };
}

test("with an idle queue a step commits, adopts and flushes inside the call, before it returns", async () => {
  const f = fake();
  const p = f.queue.step(f.commit("a"), (seq, ops) => f.events.push(["adopt", seq, ops()]));
  f.events.push(["returned"]);
  assert.deepEqual(f.events.map((e) => e.slice(0, 2)), [["commit", "a"], ["adopt", 1], ["flush", 1], ["returned"]]);
  assert.deepEqual(f.events[1][2], ["ops of 1"]);
  assert.equal(typeof f.events[2][2], "function", "the flush gets the lazy ops, not a parsed copy");
  assert.equal(await p, 1);
});

test("a step asked for inside adopt runs right after the current step, so seq order is adopt order", async () => {
  const f = fake();
  let inner;
  const outer = f.queue.step(f.commit("outer"), () => {
    inner = f.queue.step(f.commit("inner"), (seq) => f.events.push(["adopt", seq]));
    f.events.push(["outer adopt ends"]);
  });
  assert.deepEqual(f.events.map((e) => e.slice(0, 2)), [
    ["commit", "outer"], ["outer adopt ends"], ["flush", 1], ["commit", "inner"], ["adopt", 2], ["flush", 2],
  ]);
  assert.deepEqual([await outer, await inner], [1, 2]);
});

test("a hold stops the queue between steps and its release runs the waiting steps in order", async () => {
  const f = fake();
  f.queue.hold();
  const a = f.queue.step(f.commit("a"));
  const b = f.queue.step(f.commit("b"));
  assert.equal(f.queue.waiting, 2);
  assert.equal(f.head(), 0, "nothing committed while held");
  f.queue.hold();
  f.queue.release();
  assert.equal(f.head(), 0, "holds nest: one hold is still on");
  f.queue.release();
  assert.deepEqual([await a, await b], [1, 2]);
  assert.deepEqual(f.events.filter((e) => e[0] === "commit").map((e) => e[1]), ["a", "b"]);
});

test("a failing commit rejects its own step only; neither adopt nor flush runs for it and the next step runs", async () => {
  const f = fake();
  const boom = new Error("core refused");
  let adopted = false;
  const a = f.queue.step(() => { throw boom; }, () => { adopted = true; });
  const b = f.queue.step(f.commit("b"));
  await assert.rejects(a, (e) => e === boom);
  assert.equal(adopted, false);
  assert.equal(await b, 1);
  assert.deepEqual(f.events.map((e) => e.slice(0, 2)), [["commit", "b"], ["flush", 1]]);
});

test("a throwing adopt rejects the step with its error, and the flush still runs: the commit stands", async () => {
  const f = fake();
  const hookError = new Error("view broke");
  const p = f.queue.step(f.commit("a"), () => { throw hookError; });
  await assert.rejects(p, (e) => e === hookError);
  assert.deepEqual(f.events.map((e) => e.slice(0, 2)), [["commit", "a"], ["flush", 1]]);
});

// Before, the error was kept and tested by its truth: a hook that threw
// undefined, null, 0, "" or false let the step resolve as if it had not.
test("an adopt that throws a falsy value rejects the step with that value too", async () => {
  for (const thrown of [undefined, null, 0, "", false]) {
    const f = fake();
    const p = f.queue.step(f.commit("a"), () => { throw thrown; });
    const outcome = await p.then(() => "resolved", (e) => ({ rejected: e }));
    assert.deepEqual(outcome, { rejected: thrown }, `adopt threw ${String(thrown)}`);
    assert.deepEqual(f.events.map((e) => e.slice(0, 2)), [["commit", "a"], ["flush", 1]]);
  }
});

test("after() commits nothing and resolves once every step queued before it has run", async () => {
  const f = fake();
  f.queue.hold();
  const a = f.queue.step(f.commit("a"));
  const later = f.queue.after(() => f.head());
  f.queue.release();
  assert.equal(await later, 1, "it saw the head after the step queued before it");
  assert.equal(await a, 1);
  assert.equal(f.events.filter((e) => e[0] === "flush").length, 1, "after() has no flush");
});

test("a place keeps the steps after it waiting, and its own commit waits for a hold taken meanwhile", async () => {
  const f = fake();
  const slot = await f.queue.place();  // a restore: its place taken, its files being prepared
  const behind = f.queue.step(f.commit("behind"));
  assert.equal(f.head(), 0, "a step asked for after the place waits for it");
  f.queue.hold();  // an export (or a store.read) begins while the files are prepared
  const placed = slot.step(f.commit("placed"));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(f.head(), 0, "the place's commit waits for the hold: the held reads see the store as it was");
  f.queue.release();
  assert.equal(await placed, 1, "released, the place commits first");
  assert.equal(await behind, 2, "then the step that waited behind it");
  assert.deepEqual(f.events.filter((e) => e[0] === "commit").map((e) => e[1]), ["placed", "behind"]);
});

test("a place whose commit waits for a hold still ends when the commit fails, and the queue goes on", async () => {
  const f = fake();
  const slot = await f.queue.place();
  f.queue.hold();
  const failing = slot.step(() => { throw new Error("the restore's commit failed"); });
  const next = f.queue.step(f.commit("next"));
  f.queue.release();
  await assert.rejects(failing, /the restore's commit failed/);
  assert.equal(await next, 1, "the step behind the failed place commits");
});

// Holds taken in turn (store.read, store.export): before, each new hold
// joined at once, so two overlapping readers kept a queued step waiting
// for as long as they ran.
test("a hold taken in turn waits behind the steps queued before it; those steps wait only for the holds already on", async () => {
  const f = fake();
  const first = f.queue.holdInTurn();
  assert.equal(first.ready, null, "nothing queued: on at once");
  const a = f.queue.step(f.commit("a"));
  const second = f.queue.holdInTurn();
  const third = f.queue.holdInTurn();
  assert.ok(second.ready instanceof Promise, "a step is queued: it waits for its turn");
  let secondOn = false;
  second.ready.then(() => { secondOn = true; });
  const b = f.queue.step(f.commit("b"));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(secondOn, false);
  first.release();
  assert.equal(f.head(), 1, "released, the step queued before the waiting holds commits");
  await second.ready;
  await third.ready;
  assert.equal(f.head(), 1, "the two holds queued one after the other are on together, and the step after them waits");
  second.release();
  assert.equal(f.head(), 1);
  third.release();
  third.release();  // a second release does nothing
  assert.deepEqual([await a, await b], [1, 2]);
});

test("a hold taken in turn with `now`, or while a place is open, is on at once; one released before its turn takes nothing", async () => {
  const f = fake();
  const outer = f.queue.holdInTurn();
  const a = f.queue.step(f.commit("a"));
  const nested = f.queue.holdInTurn(true);  // a read inside a read: the outer one awaits it
  assert.equal(nested.ready, null);
  const given = f.queue.holdInTurn();
  given.release();  // an export cancelled before its turn
  nested.release();
  outer.release();
  assert.equal(await a, 1);
  await given.ready;
  assert.equal(await f.queue.step(f.commit("b")), 2, "the turn given up holds nothing");
  const slot = await f.queue.place();
  const behind = f.queue.step(f.commit("behind"));
  const during = f.queue.holdInTurn();
  assert.equal(during.ready, null, "the steps behind the place wait for it anyway");
  const placed = slot.step(f.commit("placed"));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(f.head(), 2, "the place's commit waits for the hold");
  during.release();
  assert.deepEqual([await placed, await behind], [3, 4]);
});
