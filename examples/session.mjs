// A short agent session on one onestore file: a transcript and a
// file-history plugin write into the same store, every commit gets one seq,
// and every commit leaves one record in the outbox.
//
//   npm start            (or: node examples/session.mjs)
//   sqlite3 -readonly .data/session.sqlite '.tables'

import { rmSync } from "node:fs";
import { relative, resolve } from "node:path";

import {
  add, col, defineTable, eq, int, json, openStore, prefix, query, replacePrefix, str,
} from "../js/index.js";

const file = resolve(process.argv[2] ?? ".data/session.sqlite");
rmSync(file, { force: true });  // a fresh session each run
for (const suffix of ["-journal", "-lock"]) rmSync(file + suffix, { force: true });

// ---- the tables of two owners

const Messages = defineTable("messages", {
  columns: { id: int(), role: str(), text: str(), at: int() },
  key: ["id"],
  indexes: { byAt: ["at"] },
});

const Edits = defineTable("edits", {
  version: 1,
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
});

// ---- a little output helper

const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
function say(what, detail = "") {
  console.log(`${what}${detail ? "  " + dim(detail) : ""}`);
}

// ---- the session

const store = await openStore({ backend: "sqlite", path: file, id: "session-demo" });
say(bold(`opened ${relative(process.cwd(), file)}`), `session ${store.id}, head ${store.head}`);

const seen = [];  // adoption order, across owners
const transcript = store.object({ host: "session", type: "transcript" }, {
  adopt: (seq, ops) => seen.push(`${seq} transcript (${ops.length} op${ops.length === 1 ? "" : "s"})`),
});
const fileHistory = store.object({ host: "session", type: "file-history" }, {
  adopt: (seq, ops) => seen.push(`${seq} file-history (${ops.length} op${ops.length === 1 ? "" : "s"})`),
});
const messages = transcript.table(Messages);
const edits = fileHistory.table(Edits);
say("declared tables", `${messages.name}, ${edits.name} (seq 1-2: their table records)`);

const ana = { actor: { kind: "person", id: "ana" } };
const agent = { actor: { kind: "agent", id: "assistant", for: { kind: "person", id: "ana" }, via: "tool:edit" } };
let clock = Date.parse("2026-10-26T09:00:00Z");
const tick = () => (clock += 1000);

async function message(role, text, ctx) {
  let id;
  await transcript.tx(async (tx) => {
    id = tx.mintId(messages);
    await tx.put(messages, { id, role, text, at: tick() });
  }, ctx);
  return id;
}

await message("user", "Move the helpers from a/ to lib/ and fix the import in app.ts.", ana);
const entry = await message("assistant", "Editing 3 files under a/, then renaming the folder.", agent);
say("committed 2 messages", `head ${store.head}`);

const paths = ["a/strings.ts", "a/dates.ts", "a/index.ts", "src/app.ts"];
await fileHistory.tx(async (tx) => {
  for (const [i, path] of paths.entries()) {
    await tx.put(edits, { id: `e${i + 1}`, path, entry, at: tick(), meta: { lines: 10 * (i + 1), tool: "edit" } });
  }
  await tx.update(edits, ["e4"], { at: add(col("at"), 500) });
  const mine = await tx.get(edits, ["e4"]);  // this tx's own write
  say("tx.get inside the tx sees its own write", `${mine.path} at +${mine.at - clock}ms`);
}, agent);
say(`recorded ${paths.length} edits`, `head ${store.head}`);

await fileHistory.tx(async (tx) => {
  await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "lib/") });
}, agent);
const renameSeq = store.head;
say("renamed a/ to lib/ with one updateWhere", `seq ${renameSeq}`);

await message("assistant", "Done: a/ is now lib/.", agent);

// ---- what the store holds

console.log();
say(bold("adoption order (= seq order)"));
for (const line of seen) say(`  ${line}`);

console.log();
say(bold("outbox"));
const batch = await store.outbox.read(0, 100);
for (const record of batch.commits) {
  const bytes = Buffer.byteLength(JSON.stringify(record));
  const ops = record.ops.map((o) => (o.count !== undefined ? `${o.op}Where(${o.count})` : o.op)).join(", ");
  say(`  seq ${String(record.seq).padStart(2)}  ${record.owner.padEnd(12)} ${String(bytes).padStart(4)} B`, `${record.actor ? record.actor.kind + ":" + record.actor.id : "-"}  ${ops}`);
}
const rename = batch.commits.find((r) => r.seq === renameSeq);
say(`  the rename record:`, JSON.stringify(rename.ops[0]));

console.log();
say(bold("edits under lib/, newest first (a page of 2, then the next)"));
const byPath = query(Edits).where((e) => prefix(e.path, "lib/")).orderBy((e) => e.at, "desc");
let page = await edits.page(byPath, 2);
for (;;) {
  for (const row of page.rows) say(`  ${row.id}  ${row.path.padEnd(16)}`, `entry ${row.entry}, ${row.meta.lines} lines`);
  if (!page.next) break;
  say(dim("  -- next page --"));
  page = await edits.page(byPath, 2, undefined, { after: page.next });
}

console.log();
say(bold("transcript"));
for await (const m of messages.rows(query(Messages).orderBy((m) => m.at))) {
  say(`  #${m.id} ${m.role.padEnd(9)} ${m.text}`);
}
const appEdits = await edits.count(query(Edits).where((e) => eq(e.path, "src/app.ts")));
say(`  edits of src/app.ts: ${appEdits}`);

console.log();
say(bold("inspect the file yourself"));
say(`  sqlite3 -readonly ${relative(process.cwd(), file)} 'select id, path, entry from "file-history/edits"'`);
say(`  sqlite3 -readonly ${relative(process.cwd(), file)} '.tables'`);

await store.close();
