// Export and import through the public package in Node: store.export() is a
// real POSIX tar (GNU tar lists, extracts and re-packs it) that importStore
// restores on memory and a sqlite file with the same session id, head,
// retained outbox, rows and fingerprint; tables of owners not opened in the
// process are in it; the commit queue is held while it is read; progress is
// reported; an import that fails in the middle, or whose process is killed,
// leaves the previous store whole; and every archive of the attack corpus
// (tests/js/archive/corpus.js) is refused with its code, writing nothing
// outside the new generation. Blobs travel as entries of their own, checked
// against their hash, and are part of the fingerprint.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { describe, test } from "node:test";

import { ErrorCodes, defineTable, exportToFile, importStore, json, openStore, str, StoreError } from "../../js/index.js";
import { rejectsWith, repoRoot, tempDir } from "./helpers.js";
import { Edits, Tags, allRecords, allRows, bytesOf, fill } from "./archive/fixture.js";
import { entriesOf, hostileArchives, tarOf } from "./archive/corpus.js";

let dir;
let counter = 0;
function file(label) {
  dir ??= tempDir("onestore-archive-");
  return join(dir, `${label}-${counter++}.sqlite`);
}

async function filled(options = { backend: "memory" }) {
  const store = await openStore(options);
  await fill(store);
  return store;
}

// What an import must keep: id, head, outbox, rows, fingerprint.
async function sameStore(a, b) {
  assert.equal(b.id, a.id);
  assert.equal(b.head, a.head);
  assert.deepEqual(await allRecords(b), await allRecords(a));
  assert.deepEqual(await allRows(b), await allRows(a));
  assert.equal(await b.fingerprint(), await a.fingerprint());
}

describe("an export", () => {
  test("is a POSIX tar that GNU tar lists and extracts, with the manifest first", async () => {
    const store = await filled();
    const tar = file("listed").replace(/\.sqlite$/, ".tar");
    await exportToFile(store, tar);
    const names = execFileSync("tar", ["-tf", tar], { encoding: "utf8" }).trim().split("\n");
    assert.deepEqual(names, [
      "onestore/manifest.json",
      "onestore/tables/0000/000001.jsonl",
      "onestore/tables/0001/000001.jsonl",
      "onestore/tables/0002/000001.jsonl",
      "onestore/tables/0002/000002.jsonl",
      "onestore/outbox/000001.jsonl",
    ]);
    const out = join(dir, `x${counter++}`);
    mkdirSync(out);
    execFileSync("tar", ["-xf", tar, "-C", out]);
    const manifest = JSON.parse(readFileSync(join(out, "onestore/manifest.json"), "utf8"));
    assert.equal(manifest.format, 2);
    assert.deepEqual(manifest.blobs, []);
    assert.equal(manifest.session, store.id);
    assert.equal(manifest.head, store.head);
    assert.equal(manifest.fingerprint, await store.fingerprint());
    assert.deepEqual(manifest.tables.map((t) => [t.name, t.rows]), [["chat/tags", 1], ["chat/turns", 2], ["file-history/edits", 1202]]);
    assert.match(manifest.tables[2].digest, /^t1-[0-9a-f]{64}$/);
    assert.equal(manifest.outbox.records, store.head);
    // The outbox's digest, as docs/formats.md defines it, from the extracted
    // files: the SHA-256 of the pages' bytes, in page order.
    const pages = Array.from({ length: manifest.outbox.pages }, (_, i) => readFileSync(join(out, `onestore/outbox/${String(i + 1).padStart(6, "0")}.jsonl`)));
    assert.equal(manifest.outbox.digest, `o1-${createHash("sha256").update(Buffer.concat(pages)).digest("hex")}`);
    const rows = readFileSync(join(out, "onestore/tables/0002/000002.jsonl"), "utf8").trim().split("\n");
    assert.equal(rows.length, 202);
    await store.close();
  });

  test("round-trips through GNU tar -xf and tar -cf into memory and a sqlite file, row by row", async () => {
    const store = await filled();
    const tar = file("rt").replace(/\.sqlite$/, ".tar");
    await exportToFile(store, tar);
    const out = join(dir, `x${counter++}`);
    mkdirSync(out);
    execFileSync("tar", ["-xf", tar, "-C", out]);
    // Re-packed by GNU tar itself (folders included, sorted by name).
    const repacked = join(dir, `re${counter++}.tar`);
    execFileSync("tar", ["-cf", repacked, "--sort=name", "-C", out, "onestore"]);
    for (const options of [{ backend: "memory" }, { backend: "sqlite", path: file("rt") }]) {
      const back = await importStore(readFileSync(repacked), options);
      await sameStore(store, back);
      await back.close();
    }
    // The sqlite file stays the imported store when opened again.
    const path = file("again");
    await (await importStore(readFileSync(tar), { backend: "sqlite", path })).close();
    const reopened = await openStore({ backend: "sqlite", path });
    await sameStore(store, reopened);
    // It takes commits on from the archive's head.
    const chat = reopened.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "b" }); });
    assert.equal(reopened.head, store.head + 1);
    await reopened.close();
    await store.close();
  });

  test("holds the tables of owners that this process never opened", async () => {
    const path = file("owners");
    const first = await filled({ backend: "sqlite", path });
    const fp = await first.fingerprint();
    await first.close();
    const cold = await openStore({ backend: "sqlite", path });  // no owner, no table opened
    const back = await importStore(cold.export(), { backend: "memory" });
    assert.equal(await back.fingerprint(), fp);
    assert.equal((await allRows(back))[Edits.name].length, 1202);
    await cold.close();
    await back.close();
  });

  test("is taken at one head: a commit asked for while it is read waits, then runs", async () => {
    const store = await filled();
    const head = store.head;
    const stream = store.export();
    const chat = store.object({ host: "session", type: "chat" });
    let committed = false;
    const commit = chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "late" }); }).then(() => { committed = true; });
    const bytes = await bytesOf(stream);
    await commit;
    assert.ok(committed);
    assert.equal(store.head, head + 1);
    const back = await importStore(bytes, { backend: "memory" });
    assert.equal(back.head, head);
    assert.equal((await allRows(back))[Tags.name].length, 1);
    await back.close();
    await store.close();
  });

  test("that its reader stops reading fails after idleTimeout ms with lock/timeout, and the commits it held run", async () => {
    const store = await filled();
    const head = store.head;
    const stream = store.export({ idleTimeout: 150 });
    const reader = stream.getReader();
    assert.ok((await reader.read()).value.byteLength > 0);
    // The reader goes away without cancelling (a Durable Object's client that
    // disconnected: its Response never cancels the stream). Before, this
    // commit waited for ever.
    const chat = store.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "late" }); });
    assert.equal(store.head, head + 1);
    await assert.rejects(reader.read(), (e) => e instanceof StoreError && e.code === ErrorCodes.LockTimeout && /not read for 150 ms/.test(e.message));
    // A reader that keeps reading is never timed out, however long the
    // export takes; 0 turns the timeout off.
    const slow = store.export({ idleTimeout: 100 }).getReader();
    let chunks = 0;
    for (;;) {
      const { done } = await slow.read();
      if (done) break;
      chunks++;
      if (chunks < 4) await new Promise((resolve) => setTimeout(resolve, 60));
    }
    assert.ok(chunks > 4);
    assert.throws(() => store.export({ idleTimeout: -1 }), (e) => e.code === ErrorCodes.InvalidArgs && /idleTimeout/.test(e.message));
    assert.throws(() => store.export({ idleTimeout: "5" }), (e) => e.code === ErrorCodes.InvalidArgs && /idleTimeout/.test(e.message));
    const off = store.export({ idleTimeout: 0 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok((await bytesOf(off)).byteLength > 0, "read whole after a pause");
    await store.close();
  });

  test("reports progress { done, total, bytes } in rows and outbox records, up to the total", async () => {
    const store = await filled();
    const seen = [];
    const bytes = await bytesOf(store.export({ onProgress: (p) => seen.push(p) }));
    const total = 1202 + 2 + 1 + store.head;
    assert.ok(seen.length >= 4);
    assert.ok(seen.every((p) => p.total === total));
    assert.deepEqual(seen.map((p) => p.done), [...seen.map((p) => p.done)].sort((a, b) => a - b));
    assert.equal(seen.at(-1).done, total);
    // Every entry's header and padded body; the end-of-archive blocks follow.
    assert.equal(seen.at(-1).bytes, (await entriesOf(bytes)).reduce((n, e) => n + 512 + Math.ceil(new TextEncoder().encode(e.text).length / 512) * 512, 0));
    assert.ok(bytes.length - seen.at(-1).bytes >= 1024);
    const imported = [];
    const back = await importStore(bytes, { backend: "memory" }, { onProgress: (p) => imported.push(p) });
    assert.ok(imported.length >= 4);
    assert.ok(imported.every((p) => p.total === total));
    assert.equal(imported.at(-1).done, total);
    assert.ok(imported.at(-1).bytes > 0);
    await back.close();
    await store.close();
  });

  test("of a trimmed outbox keeps the head and only the retained records", async () => {
    const store = await filled();
    await store.outbox.trim(store.head - 1);
    const back = await importStore(store.export(), { backend: "sqlite", path: file("trim") });
    await sameStore(store, back);
    assert.equal((await allRecords(back)).length, 1);
    await store.outbox.trim(store.head);
    const empty = await importStore(store.export(), { backend: "memory" });
    await sameStore(store, empty);
    assert.equal((await allRecords(empty)).length, 0);
    await back.close();
    await empty.close();
    await store.close();
  });
});

describe("an import", () => {
  test("refuses bad arguments with invalid/args", async () => {
    await rejectsWith(importStore(new Uint8Array(0), { backend: "opfs" }), ErrorCodes.InvalidArgs, ["opfs"]);
    await rejectsWith(importStore(new Uint8Array(0), null), ErrorCodes.InvalidArgs, ["openOptions"]);
    await rejectsWith(importStore(42, { backend: "memory" }), ErrorCodes.InvalidArgs, ["42"]);
    await rejectsWith(importStore(new Uint8Array(0), { backend: "memory" }, { onProgress: 1 }), ErrorCodes.InvalidArgs, ["onProgress"]);
    const store = await openStore({ backend: "memory" });
    assert.throws(() => store.export({ onProgress: "x" }), (e) => e.code === ErrorCodes.InvalidArgs);
    // A Node stream with an encoding set gives strings: the archive's bytes
    // decoded as text. Named as such (it used to be read as a cut archive).
    const bytes = Buffer.from(await new Response(store.export()).arrayBuffer());
    await store.close();
    const text = Readable.from([bytes]).setEncoding("latin1");
    await rejectsWith(importStore(text, { backend: "memory" }), ErrorCodes.InvalidArgs, ["chunks must be bytes", "a string"]);
    const imported = await importStore(Readable.from([bytes]), { backend: "memory" });
    assert.equal(imported.head, 0, "the same stream without an encoding imports (an empty store)");
    await imported.close();
  });

  test("refused before reading, it stops the archive: a store.export() given to it does not hold that store's commits", async () => {
    const dir = tempDir("onestore-import-refused-");
    const path = join(dir, "open.sqlite");
    const busy = await openStore({ backend: "sqlite", path });
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "notes" });
    const tags = owner.table(Tags);
    await owner.tx(async (tx) => { await tx.put(tags, { tag: "t0" }); });
    for (const [args, words] of [
      [[{ backend: "memory" }, { onProgres: () => {} }], ["onProgres"]],
      [[{ backend: "opfs" }], ["opfs"]],
      [[{ backend: "sqlite", path: "" }], ["path"]],
      [[{ backend: "sqlite", path }], [path]],
      [[{ backend: "memory" }, { onProgress: 5 }], ["onProgress"]],
    ]) {
      await rejectsWith(importStore(store.export(), ...args), ErrorCodes.InvalidArgs, words);
      // Before, the unread export held the queue: this commit never ran.
      const seq = await Promise.race([
        owner.tx(async (tx) => { await tx.put(tags, { tag: `t${store.head}` }); }).then(() => store.head),
        new Promise((r) => setTimeout(() => r("still waiting after 5 s"), 5000)),
      ]);
      assert.equal(typeof seq, "number", `${JSON.stringify(args)}: ${seq}`);
    }
    await store.close();
    await busy.close();
  });

  test("that fails in the middle of the stream leaves the previous sqlite store whole, and no generation", async () => {
    const source = await filled();
    const bytes = await bytesOf(source.export());
    const path = file("fault");  // sets dir
    const previous = await openStore({ backend: "sqlite", path });
    const chat = previous.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "kept", count: 1 }); });
    const fp = await previous.fingerprint();
    const id = previous.id;
    await previous.close();
    const before = readdirSync(dir).sort();
    let sent = 0;
    const failing = new ReadableStream({
      pull(c) {
        if (sent > bytes.length / 2) return c.error(new Error("the disk went away"));
        c.enqueue(bytes.slice(sent, sent + 4096));
        sent += 4096;
      },
    });
    await rejectsWith(importStore(failing, { backend: "sqlite", path }), ErrorCodes.InvalidArchive, ["the disk went away"]);
    assert.deepEqual(readdirSync(dir).sort(), before);
    const again = await openStore({ backend: "sqlite", path });
    assert.equal(again.id, id);
    assert.equal(await again.fingerprint(), fp);
    await again.close();
    await source.close();
  });

  test("two imports to one sqlite path at once run one after the other, and one over an open store is refused: no raw error, no generation left", async () => {
    const first = await filled();
    const second = await openStore({ backend: "memory" });
    const chat = second.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "second", count: 2 }); });
    const [a, b] = [await bytesOf(first.export()), await bytesOf(second.export())];
    const path = file("twice");
    // Slow sources, so that the two overlap: before, the second's cleanup
    // took the first's generation for a crash's and deleted it under it
    // (a raw ENOTEMPTY, or a half-deleted store).
    const slow = (bytes) => new ReadableStream({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 1));
        if (bytes.length === 0) return c.close();
        c.enqueue(bytes.slice(0, 8192));
        bytes = bytes.slice(8192);
      },
    });
    const settled = await Promise.allSettled([importStore(slow(a), { backend: "sqlite", path }), importStore(slow(b), { backend: "sqlite", path })]);
    // Whichever takes the lock first (the file system decides: both ask
    // for it at once) resolves to its store, open; the other, which waited
    // for it, would switch the file away under that open store: refused.
    const won = settled.findIndex((s) => s.status === "fulfilled");
    assert.ok(won >= 0, settled.map((s) => String(s.reason)).join("; "));
    const lost = settled[1 - won];
    assert.equal(lost.status, "rejected");
    assert.ok(lost.reason instanceof StoreError && lost.reason.code === ErrorCodes.InvalidArgs && /is open/.test(lost.reason.message), String(lost.reason));
    const [winner, loser, loserBytes] = won === 0 ? [first, second, b] : [second, first, a];
    const x = settled[won].value;
    assert.equal(x.id, winner.id);
    await sameStore(winner, x);
    await x.close();
    // Closed, the same import goes through.
    const y = await importStore(slow(loserBytes), { backend: "sqlite", path });
    await sameStore(loser, y);
    await y.close();
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith("twice") && /\.import-|\.locks/.test(n)), []);
    await first.close();
    await second.close();
  });

  test("killed with SIGKILL half way leaves the previous store whole; the next import removes the dead generation", async () => {
    const source = await filled();
    const tar = file("kill").replace(/\.sqlite$/, ".tar");
    await exportToFile(source, tar);
    const path = file("killed");
    const previous = await openStore({ backend: "sqlite", path });
    const chat = previous.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "kept", count: 2 }); });
    const fp = await previous.fingerprint();
    await previous.close();
    // The child imports from a stream that stalls after half the bytes, and
    // says "half" once its generation holds the first page of rows; then it
    // is killed.
    const child = spawn(process.execPath, ["--input-type=module", "-e", `
      import { readFileSync } from "node:fs";
      import { importStore } from ${JSON.stringify(join(repoRoot, "js/index.js"))};
      const bytes = readFileSync(${JSON.stringify(tar)});
      let sent = 0;
      const stream = new ReadableStream({
        pull(c) {
          if (sent > bytes.length / 2) return new Promise(() => {});
          c.enqueue(bytes.slice(sent, sent + 4096)); sent += 4096;
        },
      });
      let said = false;
      const onProgress = ({ done }) => { if (done >= 1000 && !said) { said = true; console.log("half"); } };
      await importStore(stream, { backend: "sqlite", path: ${JSON.stringify(path)} }, { onProgress });
    `], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise((resolve, reject) => {
      child.stdout.on("data", (d) => { if (String(d).includes("half")) resolve(); });
      child.on("exit", (code) => reject(new Error(`the child ended (${code}) before half way`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("exit", resolve));
    const leftovers = () => readdirSync(dir).filter((n) => n.startsWith(path.slice(dir.length + 1) + ".import-"));
    assert.ok(leftovers().length >= 1, "the killed import left its generation");
    const again = await openStore({ backend: "sqlite", path });
    assert.equal(await again.fingerprint(), fp);
    await again.close();
    const back = await importStore(readFileSync(tar), { backend: "sqlite", path });
    assert.deepEqual(leftovers(), []);
    await sameStore(source, back);
    await back.close();
    await source.close();
  });
});

describe("the attack corpus", async () => {
  const source = await filled();
  await source.blobs.put(new TextEncoder().encode("the first blob of the corpus"));
  await source.blobs.put(new Uint8Array(3000).map((_, i) => i * 31));
  const valid = await entriesOf(await bytesOf(source.export()));
  const cases = hostileArchives(valid);

  test("has at least 30 hostile archives, and their valid base imports", async () => {
    assert.ok(cases.length >= 30, `${cases.length} cases`);
    const back = await importStore(tarOf(valid), { backend: "memory" });
    await sameStore(source, back);
    await back.close();
  });

  test("without an outbox digest, as written before 7 December 2026, still imports", async () => {
    const [manifest, ...rest] = valid;
    const m = JSON.parse(manifest.text);
    assert.match(m.outbox.digest, /^o1-[0-9a-f]{64}$/);
    delete m.outbox.digest;
    const back = await importStore(tarOf([{ ...manifest, text: JSON.stringify(m) }, ...rest]), { backend: "memory" });
    await sameStore(source, back);
    await back.close();
  });

  test("is refused case by case, on memory and over a sqlite store that stays whole", async () => {
    const root = tempDir("onestore-corpus-");
    const storeDir = join(root, "a", "b");
    mkdirSync(storeDir, { recursive: true });
    const path = join(storeDir, "s.sqlite");
    const previous = await openStore({ backend: "sqlite", path });
    const chat = previous.object({ host: "session", type: "chat" });
    await chat.tx(async (tx) => { await tx.put(chat.table(Tags), { tag: "previous", count: 3 }); });
    const kept = await previous.blobs.put(new TextEncoder().encode("a blob of the previous store"));
    const fp = await previous.fingerprint();
    const head = previous.head;
    await previous.close();
    const listing = () => JSON.stringify([readdirSync(root, { recursive: true }).sort(), readdirSync("/tmp").filter((n) => n.includes("escape"))]);
    const before = listing();
    writeFileSync(join(root, "marker"), "");  // the listing must see a change
    assert.notEqual(listing(), before);
    const quiet = listing();
    for (const c of cases) {
      for (const options of [{ backend: "memory" }, { backend: "sqlite", path }]) {
        let error;
        try {
          const s = await importStore(c.open(), options);
          await s.close();
        } catch (e) {
          error = e;
        }
        assert.ok(error, `${c.name}: imported on ${options.backend}`);
        assert.equal(error.code, c.code, `${c.name} on ${options.backend}: ${error.code} ${error.message}`);
        assert.equal(listing(), quiet, `${c.name}: files changed`);
      }
    }
    const again = await openStore({ backend: "sqlite", path });
    assert.equal(again.head, head);
    assert.equal(await again.fingerprint(), fp);
    assert.equal(new TextDecoder().decode(await again.blobs.get(kept)), "a blob of the previous store");
    await again.close();
    await source.close();
  });
});

test("documents travel in the archive: an import finds them, loads their past versions and goes on changing them", async () => {
  for (const target of [{ backend: "memory" }, { backend: "sqlite", path: file("docs-target") }]) {
    const store = await openStore({ backend: "sqlite", path: file("docs-source") });
    const notes = store.object({ host: "session", type: "notes" });
    let id;
    await notes.tx(async (tx) => { id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan", tags: [] }); });
    for (let i = 0; i < 4; i++) {
      await notes.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/tags/-", value: `t${i}` }]); });
    }
    const atThree = await notes.documents.load(id, { at: 3 });
    const bytes = new Uint8Array(await new Response(store.export()).arrayBuffer());
    const fingerprint = await store.fingerprint();
    await store.close();

    const copy = await importStore(bytes, target);
    assert.equal(await copy.fingerprint(), fingerprint, `${target.backend}: the fingerprint`);
    const owner = copy.object({ host: "session", type: "notes" });
    const doc = await owner.documents.find({ kind: "note", key: "n1" });
    assert.deepEqual(doc.value, { title: "Plan", tags: ["t0", "t1", "t2", "t3"] });
    assert.equal(doc.version, 5);
    assert.deepEqual((await owner.documents.load(id, { at: 3 })).value, atThree.value, `${target.backend}: a past version`);
    assert.deepEqual((await owner.documents.versions(id)).map((v) => v.version), [1, 2, 3, 4, 5]);
    // The imported store goes on: a change, and a new document with a new id.
    let second;
    await owner.tx(async (tx) => {
      await tx.documents.change(id, [{ op: "replace", path: "/title", value: "Plan v2" }]);
      second = await tx.documents.create({ kind: "note", key: "n2" }, {});
    });
    assert.notEqual(second, id);
    assert.equal((await owner.documents.load(id)).value.title, "Plan v2");
    await copy.close();
  }
});

test("json cells and documents that hold a JSON string (\"12\", \"null\", \"{...}\", \"hello\") come back as the same strings", async () => {
  const Cells = defineTable("cells", { columns: { k: str(), j: json() }, key: ["k"] });
  const strings = ["hello", "12", "", "null", "[1]", "{\"a\":1}", "\"quoted\""];
  for (const source of [{ backend: "memory" }, { backend: "sqlite", path: file("json-strings") }]) {
    const store = await openStore(source);
    const app = store.object({ host: "app", type: "w" });
    const cells = app.table(Cells);
    const docs = [];
    await app.tx(async (tx) => {
      for (const [i, v] of strings.entries()) {
        await tx.put(cells, { k: `k${i}`, j: v });
        docs.push(await tx.documents.create({ kind: "s", key: `d${i}` }, v));
      }
      await tx.put(cells, { k: "object", j: { n: "12" } });
    });
    const bytes = await bytesOf(store.export());
    for (const target of [{ backend: "memory" }, { backend: "sqlite", path: file("json-strings-target") }]) {
      const copy = await importStore(bytes, target);
      assert.equal(await copy.fingerprint(), await store.fingerprint(), `${source.backend} -> ${target.backend}`);
      const owner = copy.object({ host: "app", type: "w" });
      const back = owner.table(Cells);
      for (const [i, v] of strings.entries()) {
        assert.equal((await back.get(`k${i}`)).j, v);
        assert.equal((await owner.documents.load(docs[i])).value, v);
      }
      assert.deepEqual((await back.get("object")).j, { n: "12" });
      await copy.close();
    }
    await store.close();
  }
});

test("exportToFile without a store is invalid/args naming what it got", async () => {
  const dir = tempDir("onestore-export-nostore-");
  for (const bad of [undefined, null, {}, "store"]) {
    await rejectsWith(exportToFile(bad, join(dir, "x.tar")), ErrorCodes.InvalidArgs, ["exportToFile", "an open store"]);
  }
});

test("exportToFile over a SQLite database (the store's own file) is refused with invalid/args, and the store keeps its commits", async () => {
  const path = file("own-file");
  let store = await filled({ backend: "sqlite", path });
  const head = store.head;
  const fp = await store.fingerprint();
  await rejectsWith(exportToFile(store, path), ErrorCodes.InvalidArgs, ["exportToFile", path, "SQLite database"]);
  await store.close();
  store = await openStore({ backend: "sqlite", path });
  assert.equal(store.head, head, "the file is still the store");
  assert.equal(await store.fingerprint(), fp);
  assert.deepEqual(readdirSync(dirname(path)).filter((n) => n.endsWith(".part")), [], "no part file left");
  await store.close();
});

test("exportToFile into a folder that does not exist fails with storage_failed and leaves the store committing and closing", async () => {
  for (const options of [{ backend: "memory" }, { backend: "sqlite", path: file("export-nowhere") }]) {
    const store = await filled(options);
    const head = store.head;
    await rejectsWith(exportToFile(store, join(dir, `missing-${counter++}`, "out.tar")), ErrorCodes.StorageFailed, ["exportToFile", "ENOENT"]);
    await store.commit([{ op: "table", table: "x/t", version: 1, columns: { id: { type: "str" } }, key: ["id"], indexes: {} },
      { op: "put", table: "x/t", row: { id: "after" } }]);
    assert.equal(store.head, head + 1);
    await store.close();
  }
});

test("two exportToFile calls to one path at once both resolve, and the file left is a whole archive of one of them", async () => {
  // One "<path>.part" for both: the second wrote on into the file the
  // first had renamed and reported written, and the import then refused it.
  const a = await filled();
  const b = await filled();
  const chat = b.object({ host: "session", type: "chat" });
  await chat.tx((tx) => tx.put(chat.table(Tags), { tag: "only-in-b" }));
  const tar = file("export-twice").replace(/\.sqlite$/, ".tar");
  const [na, nb] = await Promise.all([exportToFile(a, tar), exportToFile(b, tar)]);
  assert.ok(na > 0 && nb > 0);
  const back = await importStore(createReadStream(tar), { backend: "memory" });
  const from = back.id === a.id ? a : b;
  assert.equal(statSync(tar).size, from === a ? na : nb, "the file is the whole archive its export reported");
  await sameStore(from, back);
  assert.deepEqual(readdirSync(dirname(tar)).filter((n) => n.startsWith(basename(tar)) && n.endsWith(".part")), [], "no .part file is left");
  await Promise.all([a.close(), b.close(), back.close()]);
});

test("importStore to a path under a regular file fails with storage_failed naming the path, as openStore does", async () => {
  const source = await filled();
  const tar = file("under-a-file").replace(/\.sqlite$/, ".tar");
  await exportToFile(source, tar);
  const plain = file("a-plain-file");
  writeFileSync(plain, "not a folder");
  // Before: Node's own EEXIST Error.
  await rejectsWith(importStore(createReadStream(tar), { backend: "sqlite", path: join(plain, "store.sqlite") }), ErrorCodes.StorageFailed, ["importStore", plain]);
  await source.close();
});

// openStore and deleteStore refuse a file that is no store (a mistyped
// path); importStore renamed its new file over it, and the text file or
// the other application's database was gone.
test("importStore over a file that is no store (a text file, another application's SQLite database) is refused and leaves it as it was", async () => {
  const source = await filled();
  const bytes = await bytesOf(source.export());
  const notes = file("notes").replace(/\.sqlite$/, ".txt");
  writeFileSync(notes, "my notes\n");
  const app = file("other-app");
  execFileSync("sqlite3", [app, "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'ana');"]);
  const appBytes = readFileSync(app);
  await rejectsWith(importStore(bytes, { backend: "sqlite", path: notes }), ErrorCodes.InvalidArgs, ["importStore", notes, "not a SQLite database"]);
  await rejectsWith(importStore(bytes, { backend: "sqlite", path: app }), ErrorCodes.InvalidArgs, ["importStore", app, "another application"]);
  assert.equal(readFileSync(notes, "utf8"), "my notes\n");
  assert.deepEqual(readFileSync(app), appBytes);
  assert.equal(execFileSync("sqlite3", [app, "SELECT name FROM customers"]).toString().trim(), "ana");
  assert.deepEqual(readdirSync(dirname(app)).filter((n) => n.includes(".import-")), [], "no generation left");

  // A file put at the path while the archive is read is checked at the switch.
  const late = file("late");
  let more;
  const gate = new Promise((r) => { more = r; });
  const chunks = (async function* () {
    yield bytes.subarray(0, 512);
    await gate;
    yield bytes.subarray(512);
  })();
  const importing = importStore(chunks, { backend: "sqlite", path: late });
  await new Promise((r) => setTimeout(r, 100));
  writeFileSync(late, "written meanwhile\n");
  more();
  await rejectsWith(importing, ErrorCodes.InvalidArgs, ["importStore", late, "not a SQLite database"]);
  assert.equal(readFileSync(late, "utf8"), "written meanwhile\n");
  assert.deepEqual(readdirSync(dirname(late)).filter((n) => n.includes(".import-")), [], "the generation was discarded");
  await source.close();
});

// Table numbers are padded to 4 digits; the 10,001st table's pages are
// onestore/tables/10000/..., which the import took for a foreign entry.
test("a store of more than 9999 tables exports an archive its import takes; a page number padded another way is refused", { timeout: 120_000 }, async () => {
  const store = await openStore({ backend: "memory" });
  const n = 10001;
  for (let k = 0; k < n; k += 1000) {
    const ops = [];
    for (let i = k; i < Math.min(n, k + 1000); i++) ops.push({ op: "table", table: `app/t${String(i).padStart(5, "0")}`, version: 1, columns: { id: { type: "int" } }, key: ["id"], indexes: {} });
    await store.commit(ops);
  }
  await store.commit([{ op: "put", table: "app/t10000", row: { id: 7 } }]);
  const bytes = await bytesOf(store.export());
  const entries = await entriesOf(bytes);
  const last = entries.find((e) => e.name.startsWith("onestore/tables/10000/"));
  assert.ok(last, "the 10,001st table's page is numbered 10000");
  const copy = await importStore(bytes, { backend: "memory" });
  assert.equal(await copy.fingerprint(), await store.fingerprint());
  await copy.close();
  // The same page under a name padded another way is another name for one
  // page: refused.
  const renamed = entries.map((e) => (e.name === last.name ? { ...e, name: last.name.replace("/10000/", "/010000/") } : e));
  await rejectsWith(importStore(tarOf(renamed), { backend: "memory" }), ErrorCodes.InvalidArchive, ["onestore/tables/010000/"]);
  await store.close();
});

// The manifest is indented one space a level: a json column's default
// nested 900 levels deep (160 KB of JSON) made a 70 MiB manifest, which
// the store's own import refused (above the 64 MiB of a manifest entry).
test("a manifest whose indents alone would pass 64 MiB is written on one line, and the archive imports", async () => {
  const store = await openStore({ backend: "memory" });
  let deep = new Array(80_000).fill(0);
  for (let i = 0; i < 900; i++) deep = [deep];
  await store.commit([{ op: "table", table: "a/t", version: 1, columns: { id: { type: "int" }, j: { type: "json", default: deep } }, key: ["id"], indexes: {} }]);
  await store.commit([{ op: "put", table: "a/t", row: { id: 1, j: [1] } }]);
  const bytes = await bytesOf(store.export());
  const manifest = (await entriesOf(bytes))[0];
  assert.equal(manifest.name, "onestore/manifest.json");
  assert.ok(manifest.text.length < 1_000_000 && manifest.text.indexOf("\n") === manifest.text.length - 1, `one line, ${manifest.text.length} chars`);
  const copy = await importStore(bytes, { backend: "memory" });
  assert.equal(await copy.fingerprint(), await store.fingerprint());
  await copy.close();
  // An everyday manifest stays indented.
  const other = await filled();
  const small = await entriesOf(await bytesOf(other.export()));
  assert.match(small[0].text, /^\{\n "format"/);
  await other.close();
  await store.close();
});

test("importStore to a file name too long for its lock folder fails with storage_failed naming the path, not Node's raw ENAMETOOLONG", async () => {
  const source = await filled();
  const bytes = await bytesOf(source.export());
  dir ??= tempDir("onestore-archive-");
  const path = join(dir, "x".repeat(250) + ".db");  // 253 chars: the file fits, "<file>.locks" does not
  await rejectsWith(importStore(bytes, { backend: "sqlite", path }), ErrorCodes.StorageFailed, ["importStore", path, "ENAMETOOLONG"]);
  await source.close();
});

test("importStore(createReadStream(a missing file)) rejects with a StoreError naming the file; the stream's early error does not end the process", async () => {
  const missing = join(dir, `no-such-archive-${counter++}.tar`);
  // The stream fails at once, while the sqlite import still waits for its
  // lock: an "error" event nobody listened to would end this test process.
  const path = file("import-missing");
  await rejectsWith(importStore(createReadStream(missing), { backend: "sqlite", path }), ErrorCodes.InvalidArchive, [missing, "ENOENT"]);
  await rejectsWith(importStore(createReadStream(missing), { backend: "memory" }), ErrorCodes.InvalidArchive, [missing]);
  const store = await openStore({ backend: "sqlite", path });
  assert.equal(store.head, 0, "nothing was imported");
  await store.close();
});

test("an import over a sqlite store takes the place of its snapshots too: none of the previous session's is listed or restorable", async () => {
  const path = file("snapshots-replaced");
  const previous = await filled({ backend: "sqlite", path });
  await previous.snapshot({ label: "the previous session's" });
  await previous.close();
  const source = await filled();
  const imported = await importStore(await bytesOf(source.export()), { backend: "sqlite", path });
  assert.deepEqual(await imported.snapshots(), []);
  await rejectsWith(imported.restore(), "invalid/args", ["no snapshot yet"]);
  assert.equal(await imported.fingerprint(), await source.fingerprint());
  await imported.close();
  // Nothing of the previous generation is left beside the file: no folder set aside, no snapshot copy.
  assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith(basename(path) + ".") && !n.endsWith(".blobs") && !n.endsWith(".snapshots")), []);
  assert.deepEqual(readdirSync(`${path}.snapshots`), []);
  await source.close();
});

describe("blobs in an archive", () => {
  const enc = new TextEncoder();
  const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
  // Three blobs: text, binary of every byte value, and an empty one.
  const contents = [enc.encode("a screenshot, say"), Uint8Array.from({ length: 70000 }, (_, i) => (i * 131 + 7) & 255), new Uint8Array(0)];

  async function withBlobs(options = { backend: "memory" }) {
    const store = await filled(options);
    for (const c of contents) await store.blobs.put(c);
    return store;
  }

  async function sameBlobs(a, b) {
    const hashes = (await a.blobs.list()).hashes;
    assert.deepEqual((await b.blobs.list()).hashes, hashes);
    for (const h of hashes) assert.deepEqual(await b.blobs.get(h), await a.blobs.get(h), `blob ${h}`);
  }

  test("are each their own entry onestore/sha256/<xx>/<hash>, listed in the manifest, that GNU tar extracts as files named by their sha256", async () => {
    const store = await withBlobs();
    const tar = file("blobs").replace(/\.sqlite$/, ".tar");
    await exportToFile(store, tar);
    const hashes = contents.map(sha256).sort();
    const names = execFileSync("tar", ["-tf", tar], { encoding: "utf8" }).trim().split("\n");
    assert.deepEqual(names.slice(-3), hashes.map((h) => `onestore/sha256/${h.slice(0, 2)}/${h}`));
    const out = join(dir, `x${counter++}`);
    mkdirSync(out);
    execFileSync("tar", ["-xf", tar, "-C", out]);
    for (const h of hashes) assert.equal(sha256(readFileSync(join(out, "onestore/sha256", h.slice(0, 2), h))), h);
    const manifest = JSON.parse(readFileSync(join(out, "onestore/manifest.json"), "utf8"));
    assert.deepEqual(manifest.blobs, hashes.map((h) => ({ hash: h, size: contents.find((c) => sha256(c) === h).length })));
    assert.equal(manifest.fingerprint, await store.fingerprint());
    await store.close();
  });

  test("round-trip through GNU tar -cf into memory and over a sqlite store whose own blobs they replace, with equal fingerprints", async () => {
    const store = await withBlobs();
    const tar = file("blobs-rt").replace(/\.sqlite$/, ".tar");
    await exportToFile(store, tar);
    const out = join(dir, `x${counter++}`);
    mkdirSync(out);
    execFileSync("tar", ["-xf", tar, "-C", out]);
    const repacked = join(dir, `re${counter++}.tar`);
    execFileSync("tar", ["-cf", repacked, "--sort=name", "-C", out, "onestore"]);
    const path = file("blobs-over");
    const previous = await openStore({ backend: "sqlite", path });
    const old = await previous.blobs.put(enc.encode("a blob only the previous store had"));
    await previous.close();
    for (const options of [{ backend: "memory" }, { backend: "sqlite", path }]) {
      const back = await importStore(readFileSync(repacked), options);
      await sameStore(store, back);
      await sameBlobs(store, back);
      assert.equal(await back.blobs.has(old), false);
      await back.close();
    }
    // Nothing of the switch is left beside the store, and the blobs stay.
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith(basename(path) + ".")), [basename(path) + ".blobs"]);
    const reopened = await openStore({ backend: "sqlite", path });
    await sameBlobs(store, reopened);
    assert.equal(await reopened.fingerprint(), await store.fingerprint());
    await reopened.close();
    await store.close();
  });

  test("are part of the fingerprint: a store without blobs keeps its f1 fingerprint, each new blob changes it, and equal content agrees on memory and sqlite", async () => {
    const memory = await filled();
    const sqlite = await filled({ backend: "sqlite", path: file("fp") });
    const tablesOnly = await memory.fingerprint();
    assert.match(tablesOnly, /^f1-[0-9a-f]{32}$/);
    const seen = new Set([tablesOnly]);
    for (const c of contents) {
      await memory.blobs.put(c);
      await sqlite.blobs.put(c);
      const fp = await memory.fingerprint();
      assert.match(fp, /^f2-[0-9a-f]{32}$/);
      assert.ok(!seen.has(fp), "a new blob gives a new fingerprint");
      seen.add(fp);
      assert.equal(await sqlite.fingerprint(), fp);
    }
    await memory.blobs.put(contents[0]);  // the same bytes again: no change
    assert.equal(await memory.fingerprint(), [...seen].at(-1));
    await memory.close();
    await sqlite.close();
  });

  test("count in the progress: one item each, and their bytes as blobBytes of blobTotal", async () => {
    const store = await withBlobs();
    const seen = [];
    const bytes = await bytesOf(store.export({ onProgress: (p) => seen.push(p) }));
    const blobTotal = contents.reduce((n, c) => n + c.length, 0);
    const total = 1202 + 2 + 1 + store.head + contents.length;
    assert.ok(seen.every((p) => p.total === total && p.blobTotal === blobTotal));
    assert.deepEqual(seen.map((p) => p.blobBytes), [...seen.map((p) => p.blobBytes)].sort((a, b) => a - b));
    assert.equal(seen.at(-1).done, total);
    assert.equal(seen.at(-1).blobBytes, blobTotal);
    assert.equal(new Set(seen.map((p) => p.blobBytes)).size, 3);  // 0, then two blobs (the empty one adds none)
    const imported = [];
    const back = await importStore(bytes, { backend: "memory" }, { onProgress: (p) => imported.push(p) });
    assert.ok(imported.every((p) => p.total === total && p.blobTotal === blobTotal));
    assert.equal(imported.at(-1).done, total);
    assert.equal(imported.at(-1).blobBytes, blobTotal);
    await back.close();
    await store.close();
  });

  test("a switch cut between its renames is undone by the next import: the previous store gets its own blobs back", async () => {
    const path = file("cut-switch");
    const previous = await openStore({ backend: "sqlite", path });
    const own = await previous.blobs.put(enc.encode("the previous store's blob"));
    const fp = await previous.fingerprint();
    await previous.close();
    // What a crash after the first two renames of a switch leaves: the old
    // blob folder aside, the new one in its place, the new file not moved.
    const gen = `${path}.import-0123456789ab`;
    writeFileSync(gen, "");
    renameSync(`${path}.blobs`, `${gen}.old.blobs`);
    const theirs = sha256(enc.encode("the new generation's blob"));
    mkdirSync(`${path}.blobs/sha256/${theirs.slice(0, 2)}`, { recursive: true });
    writeFileSync(`${path}.blobs/sha256/${theirs.slice(0, 2)}/${theirs}`, "the new generation's blob");
    await rejectsWith(importStore(new Uint8Array(0), { backend: "sqlite", path }), ErrorCodes.InvalidArchive);
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith(basename(path) + ".")), [basename(path) + ".blobs"]);
    const again = await openStore({ backend: "sqlite", path });
    assert.equal(await again.blobs.has(own), true);
    assert.equal(await again.blobs.has(theirs), false);
    assert.equal(await again.fingerprint(), fp);
    await again.close();
  });
});

test("a store whose 1000 rows pass 64 MB in all (70 KB each) exports an archive its import takes: a page may be up to 1 GiB", async () => {
  const Big = defineTable("big", { columns: { id: str(), body: str() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "o" });
  const big = owner.table(Big);
  const body = "x".repeat(70_000);
  await owner.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(big, { id: `r${String(i).padStart(4, "0")}`, body }); });
  const fingerprint = await store.fingerprint();
  const chunks = [];
  for await (const c of store.export()) chunks.push(c);
  await store.close();
  const copy = await importStore(new Blob(chunks).stream(), { backend: "memory" });
  assert.equal(await copy.fingerprint(), fingerprint);
  await copy.close();
});
