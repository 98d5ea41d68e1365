// Documents through the public package on memory and a sqlite file:
// tx.documents.create/change/retire commit with the owner's table writes and
// reach adopt hooks and the outbox as doc ops; a patch that does not apply
// fails the whole tx; checkpointWhen decides where bases are written; a
// reopened file keeps its documents and mints ids above them; and a
// differential random test applies random JSON Patches through the store and
// to a plain value here, comparing after every commit and at random past
// seqs.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, importStore, int, openReplica, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Items = defineTable("items", { columns: { id: int(), title: str() }, key: ["id"] });

let dir;
let counter = 0;
const backends = {
  memory: () => ({ backend: "memory" }),
  "sqlite file": () => {
    dir ??= tempDir("onestore-documents-");
    return { backend: "sqlite", path: join(dir, `d${counter++}.sqlite`) };
  },
};

for (const [label, options] of Object.entries(backends)) {
  describe(`documents on ${label}`, () => {
    // The low-level seam took any owner in a doc op ("session:w", a name
    // with a "/"), and such a document was out of every owner's reach; an
    // id of 2^53-1 left no id to mint, and each later create failed with a
    // message about an id the caller never gave.
    test("store.commit's doc ops name their owner as store.object does; after the largest id, a create is refused with limit", async () => {
      const store = await openStore(options());
      const head = store.head;
      await rejectsWith(store.commit([{ op: "doc.create", owner: "session:w", id: 10, kind: "k", value: 1 }]), "invalid/args", ["ops[0].owner", '"session:w"', '"<type>"']);
      await rejectsWith(store.commit([{ op: "doc.create", owner: "bad/name", id: 11, kind: "k", value: 1 }]), "invalid/args", ["ops[0].owner", '"bad/name"']);
      await rejectsWith(store.commit([{ op: "doc.create", owner: "", id: 12, kind: "k", value: 1 }]), "invalid/args", ["ops[0].owner"]);
      assert.equal(store.head, head);
      // The names store.object gives are taken, and reach the owner's documents.
      await store.commit([{ op: "doc.create", owner: "w", id: 10, kind: "k", value: "S" }, { op: "doc.create", owner: "agent:w", id: 11, kind: "k", value: "A" }]);
      assert.equal((await store.object({ host: "session", type: "w" }).documents.find({ kind: "k" }))?.value, "S");
      assert.equal((await store.object({ host: "agent", type: "w" }).documents.load(11))?.value, "A");
      await store.commit([{ op: "doc.create", owner: "w", id: Number.MAX_SAFE_INTEGER, kind: "max", value: 1 }]);
      const other = store.object({ type: "other" });
      const headBefore = store.head;
      await rejectsWith(other.tx((tx) => tx.documents.create({ kind: "x" }, 1)), "limit", ["no document id is left", "2^53-1"]);
      assert.equal(store.head, headBefore);
      assert.equal((await store.object({ type: "w" }).documents.load(Number.MAX_SAFE_INTEGER))?.value, 1);
      await store.close();
    });

    // A create was never held to a document's bounds: one past 128 MiB was
    // accepted (far past it, the copies stopped the wasm core), and one of
    // 998 levels was accepted and could then never be changed.
    test("a create is held to a document's bounds as a change is: its footprint (limit) and its nesting (invalid/args)", async () => {
      const store = await openStore(options());
      const notes = store.object({ type: "notes" });
      const head = store.head;
      // 4.5M numbers: 9 MB of JSON, about 137 MiB as the core would hold them.
      const big = new Array(4_500_000).fill(0);
      await rejectsWith(notes.tx((tx) => tx.documents.create({ kind: "big" }, big)), "limit", ["value", "MiB", "128 MiB a document may hold"]);
      const nest = (n) => { let v = 0; for (let i = 0; i < n; i++) v = [v]; return v; };
      await rejectsWith(notes.tx((tx) => tx.documents.create({ kind: "deep" }, { a: nest(997) })), "invalid/args", ["value", "nest 998 levels", "997"]);
      assert.equal(store.head, head, "nothing committed");
      // At the bound: created, and changed after.
      const id = await notes.tx((tx) => tx.documents.create({ kind: "deep" }, { a: nest(996) }));
      await notes.tx((tx) => tx.documents.change(id, [{ op: "add", path: "/b", value: 1 }]));
      assert.equal((await notes.documents.load(id)).value.b, 1);
      await store.close();
    });

    test("a tx creates and changes a document with a table write in one commit, seen by adopt and the outbox", async () => {
      const store = await openStore(options());
      const seen = [];
      const notes = store.object({ type: "notes" }, { adopt: (seq, ops) => seen.push({ seq, ops }) });
      const items = notes.table(Items);
      const id = await notes.tx(async (tx) => {
        await tx.put(items, { id: 1, title: "x" });
        const id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan", body: "" });
        await tx.documents.change(id, [{ op: "replace", path: "/title", value: "Plan v2" }]);
        return id;
      });
      const last = seen.at(-1);
      assert.deepEqual(last.ops.map((o) => o.op), ["put", "doc.create", "doc.change"]);
      assert.deepEqual(last.ops[2], { op: "doc.change", owner: "notes", id, patch: [{ op: "replace", path: "/title", value: "Plan v2" }], base: false, version: 2 });
      const { commits } = await store.outbox.read(last.seq - 1, 1);
      assert.deepEqual(commits[0].ops, last.ops);
      const doc = await notes.documents.find({ kind: "note", key: "n1" });
      assert.deepEqual(doc, { id, address: { kind: "note", key: "n1" }, version: 2, seq: last.seq, value: { title: "Plan v2", body: "" } });
      assert.deepEqual(await notes.documents.load(id), doc);
      assert.deepEqual((await notes.documents.versions(id)).map((v) => [v.version, v.seq, v.op]), [[1, last.seq, "create"], [2, last.seq, "change"]]);
      assert.equal(await store.object({ type: "other" }).documents.load(id), undefined);
      await store.close();
    });

    test("a patch that does not apply rejects the tx with invalid/args and commits none of it", async () => {
      const store = await openStore(options());
      const notes = store.object({ type: "notes" });
      const items = notes.table(Items);
      const id = await notes.tx((tx) => tx.documents.create({ kind: "note" }, { a: 1 }));
      const head = store.head;
      await rejectsWith(notes.tx(async (tx) => {
        await tx.put(items, { id: 2, title: "y" });
        await tx.documents.change(id, [{ op: "replace", path: "/a", value: 2 }, { op: "test", path: "/a", value: 1 }]);
      }), "invalid/args", ["patch[1]", "test"]);
      await rejectsWith(notes.tx((tx) => tx.documents.create({ kind: "note" }, { b: 1 })), "invalid/args", ["already holds"]);
      assert.equal(store.head, head);
      assert.equal(await items.get(2), undefined);
      assert.deepEqual((await notes.documents.load(id)).value, { a: 1 });
      await rejectsWith(notes.tx((tx) => tx.documents.change(id, { op: "add" })), "invalid/args", ["array"]);
      await rejectsWith(notes.documents.find({ kind: 3 }), "invalid/args", ["kind"]);
      assert.throws(() => store.object({ type: "x" }, { checkpointWhen: { deltas: -1 } }), /checkpointWhen.deltas/);
      await store.close();
    });

    test("checkpointWhen writes a base once the deltas since the last one pass it", async () => {
      const store = await openStore(options());
      const bases = [];
      const notes = store.object({ type: "notes" }, {
        checkpointWhen: { deltas: 3, bytes: 1000 },
        adopt: (seq, ops) => { for (const o of ops) if (o.op === "doc.change" && o.base) bases.push(o.version); },
      });
      const id = await notes.tx((tx) => tx.documents.create({ kind: "k" }, { s: "" }));
      for (let i = 0; i < 10; i++) await notes.tx((tx) => tx.documents.change(id, [{ op: "replace", path: "/s", value: "x".repeat(i * 60) }]));
      // Version 5: a fourth delta after the base would pass deltas: 3;
      // versions 8 and 11: the patches since the last base would pass 1000 bytes.
      assert.deepEqual(bases, [5, 8, 11]);
      assert.equal((await notes.documents.load(id)).value.s.length, 540);
      await store.close();
    });

    test("the differential random test: random patches through the store and on a plain value agree at every commit and at past seqs", async () => {
      const store = await openStore(options());
      const notes = store.object({ type: "notes" }, { checkpointWhen: { deltas: 4, bytes: 2048 } });
      let seed = label.length * 7919 + 17;
      const rand = (n) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return Math.floor(seed / 65536) % n;  // the high bits: the low ones cycle
      };
      const id = await notes.tx((tx) => tx.documents.create({ kind: "doc" }, {}));
      let model = {};
      const history = [[store.head, structuredClone(model)]];
      const kinds = new Set();
      let refused = 0;
      for (let step = 0; step < 120; step++) {
        const patch = [];
        let expected = structuredClone(model);
        let fails = false;
        for (let k = 1 + rand(3); k > 0; k--) {
          const op = randomOp(expected, rand);
          if (op.fails) fails = true;
          else expected = applyOp(expected, op);
          delete op.fails;
          kinds.add(op.op);
          patch.push(op);
        }
        if (fails) {
          await rejectsWith(notes.tx((tx) => tx.documents.change(id, patch)), "invalid/args");
          refused++;
        } else {
          await notes.tx((tx) => tx.documents.change(id, patch));
          model = expected;
          history.push([store.head, structuredClone(model)]);
        }
        assert.deepEqual((await notes.documents.load(id)).value, model, `step ${step}: ${JSON.stringify(patch)}`);
        const [seq, value] = history[rand(history.length)];
        assert.deepEqual((await notes.documents.load(id, { at: seq })).value, value, `step ${step}: at ${seq}`);
      }
      assert.ok(history.length > 60 && refused > 5, `${history.length} commits, ${refused} refused`);
      assert.deepEqual([...kinds].sort(), ["add", "copy", "move", "remove", "replace", "test"]);
      await store.close();
    });
  });
}

test("a reopened sqlite file keeps its documents and mints new ids above them", async () => {
  const opts = backends["sqlite file"]();
  let store = await openStore(opts);
  let notes = store.object({ type: "notes" });
  const a = await notes.tx((tx) => tx.documents.create({ kind: "k", key: "a" }, [1]));
  await store.close();
  store = await openStore(opts);
  notes = store.object({ type: "notes" });
  assert.deepEqual((await notes.documents.find({ kind: "k", key: "a" })).value, [1]);
  const b = await notes.tx((tx) => tx.documents.create({ kind: "k", key: "b" }, [2]));
  assert.ok(b > a);
  const { rows } = await notes.documents.list({ kind: "k" }, 10);
  assert.deepEqual(rows.map((d) => d.address.key), ["a", "b"]);
  await store.close();
});

// ---- the plain model: random valid (and sometimes failing) patch ops ----

function paths(v, at = "") {
  const out = [at];
  if (Array.isArray(v)) v.forEach((e, i) => out.push(...paths(e, `${at}/${i}`)));
  else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) out.push(...paths(v[k], `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`));
  return out;
}
function containers(v) {
  return paths(v).filter((p) => { const x = get(v, p); return x !== null && typeof x === "object"; });
}
function tokens(p) {
  return p === "" ? [] : p.slice(1).split("/").map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}
function get(v, p) {
  for (const t of tokens(p)) v = v[Array.isArray(v) ? Number(t) : t];
  return v;
}
const keys = ["a", "b", "c/d", "e~f", "g"];
const leaves = [1, "s", null, true, [], {}, [1, 2], { x: { y: 2 } }, -5, "ü"];

function randomOp(doc, rand) {
  const all = paths(doc);
  const inner = all.filter((p) => p !== "");
  const pick = (list) => list[rand(list.length)];
  switch (rand(7)) {
    case 0:
    case 1: {  // add into an object or an array
      const c = pick(containers(doc));
      const target = get(doc, c);
      const last = Array.isArray(target)
        ? (rand(2) ? "-" : String(rand(target.length + 1)))
        : pick(keys).replaceAll("~", "~0").replaceAll("/", "~1");
      return { op: "add", path: `${c}/${last}`, value: structuredClone(pick(leaves)) };
    }
    case 2:
      if (!inner.length) return { op: "remove", path: "/nothing", fails: true };
      return { op: "remove", path: pick(inner) };
    case 3:  // the root stays an object: never replaced or removed
      if (!inner.length) return { op: "add", path: "/a", value: 1 };
      return { op: "replace", path: pick(inner), value: structuredClone(pick(leaves)) };
    case 4: {  // copy to a new key of an object not inside the source; move to the root
      if (!inner.length) return { op: "test", path: "", value: structuredClone(doc) };
      const from = pick(inner);
      if (rand(2)) return { op: "move", from, path: `/m${rand(100)}` };
      const objects = containers(doc).filter((c) => !Array.isArray(get(doc, c)) && !(c === from || c.startsWith(`${from}/`)));
      return { op: "copy", from, path: `${pick(objects)}/n${rand(100)}` };
    }
    case 5: {
      const p = pick(all);
      return { op: "test", path: p, value: structuredClone(get(doc, p)) };
    }
    default:  // one that does not apply
      return rand(2) ? { op: "test", path: "", value: "never", fails: true } : { op: "remove", path: "/no/such/path", fails: true };
  }
}

function applyOp(doc, op) {
  const root = { r: doc };
  const at = (p) => ["r", ...tokens(p)];
  const parentOf = (ts) => { let v = root; for (const t of ts.slice(0, -1)) v = v[Array.isArray(v) ? Number(t) : t]; return v; };
  const put = (ts, value) => {
    const parent = parentOf(ts), last = ts.at(-1);
    if (Array.isArray(parent)) parent.splice(last === "-" ? parent.length : Number(last), 0, value);
    else parent[last] = value;
  };
  const remove = (ts) => {
    const parent = parentOf(ts), last = ts.at(-1);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  };
  const read = (p) => structuredClone(get(doc, p));
  switch (op.op) {
    case "add": put(at(op.path), structuredClone(op.value)); break;
    case "remove": remove(at(op.path)); break;
    case "replace": { const ts = at(op.path); const parent = parentOf(ts); parent[Array.isArray(parent) ? Number(ts.at(-1)) : ts.at(-1)] = structuredClone(op.value); break; }
    case "copy": put(at(op.path), read(op.from)); break;
    case "move": { const v = read(op.from); remove(at(op.from)); put(at(op.path), v); break; }
    default: break;  // test
  }
  return root.r;
}

// A restore rewrites the documents' tables. A replica (or a store.at view,
// which replays the same records) kept the state of the documents it had
// touched in the batch, and checked the change after the restore against a
// version the restore had taken back: it diverged ("document 1 is at
// version 2, so this op makes version 3, not 2"), and so did every view
// after the restore.
test("a replica and store.at replay a restore between document changes in one batch", async () => {
  for (const options of [{ backend: "memory" }, { backend: "sqlite", path: join(tempDir("onestore-docs-restore-"), "s.sqlite") }]) {
    const store = await openStore(options);
    const notes = store.object({ type: "notes" });
    const id = await notes.tx((tx) => tx.documents.create({ kind: "d" }, { v: 1 }));
    const snap = await store.snapshot();
    await notes.tx((tx) => tx.documents.change(id, [{ op: "replace", path: "/v", value: 2 }]));
    await notes.tx((tx) => tx.documents.create({ kind: "new" }, 1));
    await store.restore(snap.id);
    await notes.tx((tx) => tx.documents.change(id, [{ op: "replace", path: "/v", value: 3 }]));
    await notes.tx((tx) => tx.documents.create({ kind: "new" }, 2));
    assert.deepEqual((await notes.documents.load(id)).value, { v: 3 });
    const replica = await openReplica({ backend: "memory" });
    await replica.applyBatch(await store.outbox.read(0, 100));
    assert.equal(replica.head, store.head);
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    const view = await store.at(store.head);
    assert.equal(await view.fingerprint(), await store.fingerprint());
    await view.close();
    await replica.close();
    await store.close();
  }
});

// A restore takes the documents' tables back to its snapshot's, versions
// and all. A load or find at a seq between the snapshot and the restore
// answered from that older history: the document as it was at the
// snapshot, or nothing for one created since, where store.at gave the
// truth. Now such a read is not_found, naming the restore; a restore of a
// snapshot from before it (its undo) brings that history back.
test("after a restore, documents' reads at a seq it took back are not_found; its undo gives them back; a reopened file and an import keep this", async () => {
  const dir = tempDir("onestore-docs-restore-at-");
  for (const options of [{ backend: "memory" }, { backend: "sqlite", path: join(dir, "s.sqlite") }]) {
    const store = await openStore(options);
    const notes = store.object({ type: "notes" });
    const id = await notes.tx((tx) => tx.documents.create({ kind: "d" }, { v: 1 }));      // seq 1
    const snap = await store.snapshot();
    const fingerprint = await store.fingerprint();
    await notes.tx((tx) => tx.documents.change(id, [{ op: "replace", path: "/v", value: 2 }]));  // 2
    const later = await notes.tx((tx) => tx.documents.create({ kind: "later" }, "L"));     // 3
    assert.deepEqual((await notes.documents.load(id, { at: 2 })).value, { v: 2 });
    const r = await store.restore(snap.id);                                                 // 4
    assert.equal(r.seq, 4);
    assert.equal(await store.fingerprint(), fingerprint, "the snapshot's fingerprint, as before");

    const gone = ["at seq 2", "restore at seq 4", "snapshot of seq 1", "store.at(2)"];
    await rejectsWith(notes.documents.load(id, { at: 2 }), "not_found", gone);
    await rejectsWith(notes.documents.find({ kind: "later" }, { at: 3 }), "not_found", ["at seq 3", "restore at seq 4"]);
    await rejectsWith(notes.documents.load(later, { at: 3 }), "not_found", ["at seq 3"]);
    // The seqs the restore did not take back answer as before.
    assert.deepEqual((await notes.documents.load(id, { at: 1 })).value, { v: 1 });
    assert.deepEqual((await notes.documents.load(id, { at: 4 })).value, { v: 1 });
    assert.deepEqual((await notes.documents.load(id)).value, { v: 1 });
    assert.equal(await notes.documents.load(later), undefined);
    // store.at replays the outbox: it has the truth of seq 2.
    const view = await store.at(2);
    assert.deepEqual((await view.documents("notes").load(id)).value, { v: 2 });
    assert.throws(() => view.documents(123), (e) => e.code === "invalid/args" && /^view\.documents: .*got 123/.test(e.message));
    await view.close();

    // An archive of the store, imported, and the file reopened, refuse the same.
    const archive = new Uint8Array(await new Response(store.export()).arrayBuffer());
    const imported = await importStore(archive, { backend: "memory" });
    await rejectsWith(imported.object({ type: "notes" }).documents.load(id, { at: 2 }), "not_found", gone);
    await imported.close();
    if (options.backend === "sqlite") {
      await store.close();
      const again = await openStore(options);
      await rejectsWith(again.object({ type: "notes" }).documents.load(id, { at: 2 }), "not_found", gone);
      await again.close();
      continue;
    }

    // The undo (the snapshot taken just before the restore, at seq 3)
    // brings back the history of 2 and 3; the seq of the restore itself is
    // now the one taken back.
    const u = await store.restore(r.undo);                                                  // 5
    assert.deepEqual((await notes.documents.load(id, { at: 2 })).value, { v: 2 });
    assert.equal((await notes.documents.find({ kind: "later" }, { at: 3 })).value, "L");
    await rejectsWith(notes.documents.load(id, { at: 4 }), "not_found", ["at seq 4", `restore at seq ${u.seq}`, "snapshot of seq 3"]);
    assert.deepEqual((await notes.documents.load(id)).value, { v: 2 });
    // A replica of the whole outbox ends where the store is.
    const replica = await openReplica({ backend: "memory" });
    await replica.applyBatch(await store.outbox.read(0, 100));
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
    await store.close();
  }
});

// Found by the JSON Patch hunt of session 58: a "__proto__" member of a
// document (an own member, as JSON.parse makes it) was lost on load once
// the document's text held a run of 16 digits (which sends the answer
// through the package's exact reader): the loaded value had no such key,
// and inherited its members (value.admin === true). And a move of the root
// onto itself, which RFC 6902 allows, was refused.
for (const [label, options] of Object.entries(backends)) {
  test(`documents on ${label}: a __proto__ member loads as an own member; a move of the root onto itself does nothing`, async () => {
    const store = await openStore(options());
    try {
      const notes = store.object({ type: "notes" });
      const id = await notes.tx((tx) => tx.documents.create({ kind: "p" }, JSON.parse('{"__proto__":{"admin":true},"s":"x"}')));
      await notes.tx((tx) => tx.documents.change(id, [{ op: "replace", path: "/s", value: "1234567890123456" }, { op: "move", from: "", path: "" }]));
      for (const doc of [await notes.documents.load(id), await notes.documents.load(id, { at: store.head })]) {
        assert.deepEqual(Object.keys(doc.value), ["__proto__", "s"]);
        assert.equal(Object.getPrototypeOf(doc.value), Object.prototype);
        assert.equal(doc.value.admin, undefined);
        assert.deepEqual(Object.getOwnPropertyDescriptor(doc.value, "__proto__").value, { admin: true });
        assert.equal(doc.version, 2);
      }
    } finally {
      await store.close();
    }
  });
}
