// Two checkouts in one process, interleaved: a transaction of N transcript
// messages put on a fresh store (after a first one of 500), the checkouts
// alternating round by round, with better-sqlite3 doing the same work as an
// anchor; prints the medians of the put loop and the commit after it, per
// message, and the ratios.
//
//   node --expose-gc bench/compare-messages.mjs <checkout A> <checkout B> [N=10000] [rounds=7] [memory|file]
//
// A message is the row an agent's transcript holds: an id, a time and a json
// body whose text has what real text has (quotes, newlines, a tab, a
// backslash, non-ASCII, 150 to 350 chars) and a nested tool call. The
// bench's own rows (workload 2) hold a json cell of one small ASCII object;
// until issue 13's "json text with escapes" a message's quotes and
// newlines sent each put through JSON.stringify in JS and nlohmann's parse
// and dump in the core (docs/performance.md).
//
// better-sqlite3 (":memory:", or a WAL file with synchronous=FULL): BEGIN
// IMMEDIATE, one prepared INSERT OR REPLACE per message (the body as
// JSON.stringify's text), the outbox record as JSON.stringify of the ops,
// COMMIT. Figures only (no assertion).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { betterSqlite } from "./lib/drivers.mjs";

const [a, b] = [process.argv[2], process.argv[3]].map((r) => (r ? pathToFileURL(resolve(r)).href : ""));
if (!a || !b) {
  console.error("usage: node --expose-gc bench/compare-messages.mjs <checkout A> <checkout B> [N] [rounds] [memory|file]");
  process.exit(2);
}
const N = +(process.argv[4] || 10000), R = +(process.argv[5] || 7);
const backend = process.argv[6] || "memory";
const apis = { A: await import(`${a}/js/index.js`), B: await import(`${b}/js/index.js`) };

const MESSAGE = (i) => ({
  id: `m${String(i).padStart(7, "0")}`,
  at: 1_700_000_000_000 + i,
  body: {
    role: i % 2 ? "assistant" : "user",
    content: `Step ${i}: read "config.json", then run the tests\n\t(all of them) under C:\\work — the user said “keep it short”.\n` +
      "More words of the answer. ".repeat(2 + (i % 9)),
    tokens: 40 + (i % 300),
    tool: i % 3 ? null : { name: "read_file", args: { path: `src/f${i}.ts`, lines: [1, 40] } },
  },
});

async function anchor() {
  const dir = backend === "file" ? mkdtempSync(join(tmpdir(), "compare-messages-")) : null;
  const db = betterSqlite(dir ? join(dir, "b.sqlite") : ":memory:");
  if (dir) db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;");
  db.exec(`CREATE TABLE "chat/messages" (id TEXT NOT NULL PRIMARY KEY, at INTEGER NOT NULL, body TEXT NOT NULL) STRICT;` +
    "CREATE TABLE _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;");
  const PUT = `INSERT OR REPLACE INTO "chat/messages" (id, at, body) VALUES (?, ?, ?)`;
  let seq = 0;
  const tx = (from, to) => {
    db.exec("BEGIN IMMEDIATE");
    const ops = [];
    for (let i = from; i < to; i++) {
      const m = MESSAGE(i);
      db.run(PUT, [m.id, m.at, JSON.stringify(m.body)]);
      ops.push({ op: "put", table: "chat/messages", row: m });
    }
    seq++;
    db.run("INSERT INTO _outbox (seq, record) VALUES (?, ?)", [seq, JSON.stringify({ seq, from: seq - 1, at: Date.now(), owner: "chat", ops })]);
    db.exec("COMMIT");
  };
  tx(0, 500);
  globalThis.gc?.();
  const t0 = performance.now();
  tx(500, 500 + N);
  const ms = performance.now() - t0;
  db.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { total: ms, loop: ms };
}

async function once(api) {
  const { openStore, defineTable, str, int, json } = api;
  const Messages = defineTable("messages", { columns: { id: str(), at: int(), body: json() }, key: ["id"] });
  const dir = backend === "file" ? mkdtempSync(join(tmpdir(), "compare-messages-")) : null;
  const store = await openStore(dir ? { backend: "sqlite", path: join(dir, "s.sqlite"), durability: "full" } : { backend: "memory" });
  const chat = store.object({ type: "chat" });
  const t = chat.table(Messages);
  await chat.tx(async (tx) => { for (let i = 0; i < 500; i++) await tx.put(t, MESSAGE(i)); });
  globalThis.gc?.();
  let loop = 0;
  const t0 = performance.now();
  await chat.tx(async (tx) => { for (let i = 500; i < 500 + N; i++) await tx.put(t, MESSAGE(i)); loop = performance.now() - t0; });
  const total = performance.now() - t0;
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { total, loop };
}

const res = { A: [], B: [], anchor: [] };
const keys = Object.keys(res);
for (let r = 0; r < R; r++) {
  for (const k of keys.map((_, i) => keys[(i + r) % keys.length])) res[k].push(k === "anchor" ? await anchor() : await once(apis[k]));
}
const med = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[(s.length - 1) >> 1]; };
const us = (ms) => `${(ms / N * 1000).toFixed(2)} µs`;
const fig = {};
for (const k of keys) {
  const total = med(res[k].map((x) => x.total)), loop = med(res[k].map((x) => x.loop));
  fig[k] = total;
  const name = k === "anchor" ? `better-sqlite3 (${backend === "file" ? "WAL, synchronous=FULL" : ":memory:"})` : k;
  const split = k === "anchor" ? "" : ` (put loop ${us(loop)}, commit ${us(total - loop)})`;
  console.log(`${name}: ${backend}, ${N} messages in one tx: ${total.toFixed(1)} ms median, ${us(total)} a message${split}, ${(N / total * 1000).toFixed(0)}/s; runs ${res[k].map((x) => x.total.toFixed(0)).join(" ")}`);
}
console.log(`ratio B/A ${(fig.B / fig.A).toFixed(2)}; A/better-sqlite3 ${(fig.A / fig.anchor).toFixed(2)}, B/better-sqlite3 ${(fig.B / fig.anchor).toFixed(2)}`);
