// The soak (issue 14, item 7): one million commits in a row through the
// public package, on a memory store and on a Node sqlite file, reporting
// every 100,000 commits the wasm heap (the module's memory), the JS heap
// (process.memoryUsage() after gc()) and the time of those commits, then
// checking that nothing was lost (the head, every row, the outbox's last
// records, a fingerprint equal to a memory store replaying the same rows;
// the file store reopened).
//
// Each commit is one owner transaction putting one row of 2,000 (keys cycle,
// so the data stays the same size) with a value naming the commit; the
// outbox is trimmed every 10,000 commits, as a synced app does (an untrimmed
// outbox grows by one record per commit, by design). Run with
// `node --expose-gc tests/torture/soak.mjs [commits] [backend...]`
// (defaults: 1000000 memory sqlite); `npm run torture` runs it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { defineTable, int, openStore, str } from "../../js/index.js";
import { loadNodeCore } from "../../js/loader-node.js";

const total = Number(process.argv[2] ?? 1_000_000);
const backends = process.argv.length > 3 ? process.argv.slice(3) : ["memory", "sqlite"];
const every = Math.min(100_000, total);
const keys = 2000;

const Rows = defineTable("rows", {
  version: 1,
  columns: { k: int(), v: str(), n: int() },
  key: ["k"],
});

function mib(bytes) {
  return (bytes / 1048576).toFixed(1);
}

function wasmHeapBytes(mod) {
  const memory = mod.wasmMemory ?? mod.asm?.memory ?? mod.HEAP8;
  return memory?.buffer?.byteLength ?? memory?.byteLength ?? NaN;
}

async function soak(backend, dir) {
  const mod = await loadNodeCore();
  const path = join(dir, "soak.sqlite");
  const options = backend === "sqlite" ? { backend, path, id: "soak" } : { backend, id: "soak" };
  let store = await openStore(options);
  const owner = store.object({ host: "soak", type: "t" });
  const rows = owner.table(Rows);
  globalThis.gc?.();
  console.log(
    `${backend}: start: wasm heap ${mib(wasmHeapBytes(mod))} MiB, JS heap ${mib(process.memoryUsage().heapUsed)} MiB, rss ${mib(process.memoryUsage().rss)} MiB`,
  );
  const first = store.head;
  let t0 = performance.now();
  const figures = [];
  for (let i = 1; i <= total; i++) {
    await owner.tx(async (tx) => {
      await tx.put(rows, { k: i % keys, v: `commit ${i}`, n: i });
    });
    if (i % 10_000 === 0) await store.outbox.trim(store.head - 100);
    if (i % every === 0) {
      const ms = performance.now() - t0;
      globalThis.gc?.();
      const mem = process.memoryUsage();
      const f = {
        commits: i,
        ms: Math.round(ms),
        usPerCommit: Number(((ms * 1000) / every).toFixed(1)),
        wasmHeapMiB: Number(mib(wasmHeapBytes(mod))),
        jsHeapMiB: Number(mib(mem.heapUsed)),
        rssMiB: Number(mib(mem.rss)),
      };
      figures.push(f);
      console.log(
        `${backend}: ${i} commits: ${f.ms} ms for the last ${every} (${f.usPerCommit} µs/commit), wasm heap ${f.wasmHeapMiB} MiB, JS heap ${f.jsHeapMiB} MiB, rss ${f.rssMiB} MiB`,
      );
      t0 = performance.now();
    }
  }

  // Nothing lost: the head, the last records, every row, the fingerprint.
  const check = async (s, what) => {
    const problems = [];
    if (s.head !== first + total) problems.push(`head ${s.head}, expected ${first + total}`);
    const batch = await s.outbox.read(s.head - 50, 50);
    if (batch.commits.length !== 50 || batch.commits.some((c, j) => c.seq !== s.head - 49 + j)) {
      problems.push(`the last 50 outbox records are not seqs ${s.head - 49}..${s.head}`);
    }
    const t = s.object({ host: "soak", type: "t" }).table(Rows);
    let seen = 0;
    for (let after, more = true; more; ) {
      const page = await t.page(undefined, 500, undefined, after ? { after } : undefined);
      for (const r of page.rows) {
        // The last commit that put key k: the largest i <= total with i % keys == k.
        const last = total - ((total - r.k) % keys + keys) % keys;
        if (r.n !== last || r.v !== `commit ${last}`) problems.push(`row ${r.k} is ${JSON.stringify(r)}, expected commit ${last}`);
        seen++;
      }
      after = page.next;
      more = Boolean(page.next);
    }
    if (seen !== Math.min(keys, total)) problems.push(`${seen} rows, expected ${Math.min(keys, total)}`);
    console.log(`${backend}: ${what}: head ${s.head}, ${seen} rows checked, ${problems.length} problems`);
    return problems;
  };
  let problems = await check(store, "at the end");
  const fingerprint = await store.fingerprint();
  if (backend === "sqlite") {
    await store.close();
    store = await openStore(options);
    problems = problems.concat(await check(store, "reopened"));
    if ((await store.fingerprint()) !== fingerprint) problems.push("the fingerprint changed across the reopen");
  }
  // A memory store given the same final rows has the same fingerprint.
  const model = await openStore({ backend: "memory", id: "soak-model" });
  const mowner = model.object({ host: "soak", type: "t" });
  const mrows = mowner.table(Rows);
  await mowner.tx(async (tx) => {
    for (let k = 0; k < Math.min(keys, total); k++) {
      const last = total - ((total - k) % keys + keys) % keys;
      await tx.put(mrows, { k, v: `commit ${last}`, n: last });
    }
  });
  if ((await model.fingerprint()) !== fingerprint) problems.push("the fingerprint differs from the model's");
  await model.close();
  await store.close();
  for (const p of problems.slice(0, 20)) console.log(`${backend}: PROBLEM ${p}`);
  return { backend, figures, problems: problems.length };
}

const dir = await mkdtemp(join(tmpdir(), "onestore-soak-"));
let failed = 0;
try {
  for (const backend of backends) {
    const r = await soak(backend, dir);
    console.log(`soak ${backend}: ${JSON.stringify(r)}`);
    if (r.problems > 0) failed++;
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
if (!globalThis.gc) console.log("soak: run with node --expose-gc for heap figures after a gc");
process.exit(failed ? 1 : 0);
