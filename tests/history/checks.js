// The checks every backend's run of tests/history/scenario.js passes (Node
// runs them on memory and sqlite, and on what Chromium's OPFS Worker and
// workerd's Durable Object answer).

import assert from "node:assert/strict";

// The seqs of the outbox records that match a filter, as the test reads them.
function expectedSeqs(outbox, { owner, actor, from = 1, to = Infinity }) {
  return outbox
    .filter((r) => r.seq >= from && r.seq <= to)
    .filter((r) => owner === undefined || r.owner === owner)
    .filter((r) => actor === undefined || Object.entries(actor).every(([k, v]) => r.actor?.[k] === v))
    .map((r) => r.seq);
}


/** The checks every backend's run of the history passes (also used by the browser and workerd tests' expectations). */
export function checkHistory(run) {
  assert.equal(run.head, 11);
  assert.deepEqual(run.views.map((v) => v.seq), run.live.map((l) => l.seq));
  for (const [i, v] of run.views.entries()) {
    assert.deepEqual(v.state, run.live[i].state, `the view at seq ${v.seq} reads what the store read then`);
    assert.equal(v.fingerprint, run.fingerprints[i], `the view's fingerprint at seq ${v.seq}`);
  }
  // Document history is visible in views: the first note lived from seq 3 to seq 10.
  assert.equal(run.views.find((v) => v.seq === 2).n1, null);
  assert.equal(run.views.find((v) => v.seq === 5).n1.value.title, "Plan v2");
  assert.deepEqual(run.views.find((v) => v.seq === 8).n1.value, { title: "Plan v2", body: "step 1", tags: ["draft"] });
  assert.equal(run.views.find((v) => v.seq === 10).state.note.value.title, "Second plan");
  const { log } = run;
  assert.deepEqual(log.records, log.outbox);
  const seven = log.records[5];
  assert.equal(seven.owner, "notes");
  assert.deepEqual(seven.actor, { kind: "agent", id: "bot" });
  assert.equal(seven.ops[0].op, "delete");
  assert.ok("where" in seven.ops[0], "a deleteWhere is a delete with a where");
  assert.equal(seven.ops[0].count, 2);
  assert.equal(typeof seven.at, "number");
  const o = log.outbox;
  assert.deepEqual(log.byOwner.seqs, expectedSeqs(o, { owner: "notes" }));
  assert.ok(log.byOwner.calls >= 3, "owner pages of 2 follow their cursors");
  assert.deepEqual(log.byChatAddress.seqs, expectedSeqs(o, { owner: "h:chat" }));
  assert.deepEqual(log.byAna.seqs, expectedSeqs(o, { actor: { id: "ana" } }));
  assert.deepEqual(log.byAgentKind.seqs, expectedSeqs(o, { actor: { kind: "agent" } }));
  assert.deepEqual(log.notesByBot.seqs, expectedSeqs(o, { owner: "notes", actor: { kind: "agent", id: "bot" } }));
  assert.deepEqual(log.range.seqs, [4, 5, 6, 7, 8]);
  assert.ok(log.byAna.seqs.length >= 4 && log.notesByBot.seqs.length >= 2);
}

export function checkTrim(t) {
  assert.deepEqual(t, {
    removed: 3,
    atTrimmed: "not_found",
    atHead: "not_found",
    atZero: "ok",
    logTrimmed: "not_found",
    logKept: 4,
    logBeyond: "not_found",
    filtered: [4, 5, 6, 7, 8, 9, 10, 11],
  });
}

