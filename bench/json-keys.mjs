// `node bench/json-keys.mjs [--quick]`: the time to put (one commit) and get
// back one json value of many keys, against its size, on the memory backend
// and a sqlite file, both through the fast reader (integers only) and the
// DOM reader (fractions and strings). Linear work keeps the time per key
// flat as the object grows; the reader it replaced looked each key up in
// the keys before it (20k keys 0.9 s, 100k ~27 s). Prints a table; asserts
// nothing (tests/js/robustness.test.js checks the values themselves).

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";

import { defineTable, json, openStore, str } from "../js/index.js";

const quick = process.argv.includes("--quick");
const sizes = quick ? [2000, 10000] : [20000, 60000, 100000, 200000];
const Docs = defineTable("docs", { columns: { id: str(), body: json() }, key: ["id"] });
const dir = mkdtempSync(join(os.tmpdir(), "onestore-json-keys-"));

function objectOf(n, mixed) {
  const o = {};
  for (let i = 0; i < n; i++) o[`k${(i * 7919) % n}`] = mixed ? (i % 2 ? i + 0.5 : `v${i}`) : i;
  return o;
}

try {
  console.log("| backend | values | keys | put | get | put µs/key |");
  console.log("|---|---|---:|---:|---:|---:|");
  for (const backend of ["memory", "sqlite"]) {
    const store = await openStore(backend === "memory" ? { backend } : { backend, path: join(dir, "s.sqlite") });
    const owner = store.object({ type: "bench" });
    const docs = owner.table(Docs);
    for (const mixed of [false, true]) {
      for (const n of sizes) {
        const body = objectOf(n, mixed);
        const id = `${mixed}-${n}`;
        let t = performance.now();
        await owner.tx(async (tx) => { await tx.put(docs, { id, body }); });
        const put = performance.now() - t;
        t = performance.now();
        const back = await docs.get(id);
        const get = performance.now() - t;
        if (Object.keys(back.body).length !== n) throw new Error(`${id}: ${Object.keys(back.body).length} keys read back`);
        console.log(`| ${backend} | ${mixed ? "fractions, strings" : "ints"} | ${n} | ${put.toFixed(1)} ms | ${get.toFixed(1)} ms | ${((put * 1000) / n).toFixed(2)} |`);
      }
    }
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
