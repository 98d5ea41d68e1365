// Checks the package as a user gets it: a fresh project that depends on
// onestore (file: the repository) imports it by name and commits.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, posix } from "node:path";
import { test } from "node:test";

import { repoRoot, tempDir } from "./helpers.js";

test("a project that installs onestore imports it by name and commits", (t) => {
  const dir = tempDir("onestore-user-");
  writeFileSync(join(dir, "package.json"), JSON.stringify({
    name: "onestore-user",
    private: true,
    type: "module",
    dependencies: { onestore: `file:${repoRoot}` },
  }, null, 2));
  let how = "npm install";
  try {
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", "--ignore-scripts", "--loglevel=error"], {
      cwd: dir,
      stdio: "pipe",
      timeout: 120_000,
    });
  } catch (e) {
    // npm links a file: dependency; do the same if npm itself cannot run here.
    how = `a symlink (npm install failed: ${String(e.stderr ?? e.message).trim().split("\n")[0]})`;
    mkdirSync(join(dir, "node_modules"), { recursive: true });
    if (!existsSync(join(dir, "node_modules", "onestore"))) symlinkSync(repoRoot, join(dir, "node_modules", "onestore"), "dir");
  }
  assert.ok(lstatSync(join(dir, "node_modules", "onestore")).isSymbolicLink() || existsSync(join(dir, "node_modules", "onestore", "package.json")), how);
  t.diagnostic(`installed with ${how}`);

  writeFileSync(join(dir, "use.mjs"), `
import { openStore, defineTable, str, int, query, eq, StoreError } from "onestore";
const Notes = defineTable("notes", { columns: { id: str(), at: int() }, key: ["id"] });
const store = await openStore({ backend: "sqlite", path: "data/user.sqlite" });
const owner = store.object({ host: "session", type: "notebook" });
const notes = owner.table(Notes);
let adopted = 0;
const seq = await store.commit([{ op: "put", table: "notebook/notes", row: { id: "n1", at: 1 } }], (s) => { adopted = s; });
await owner.tx(async (tx) => { await tx.put(notes, { id: "n2", at: 2 }); }, { actor: { kind: "person", id: "ana" } });
const page = await notes.page(query(Notes).where((n) => eq(n.at, 2)), 10);
let refused = "";
try { await notes.get([1]); } catch (e) { refused = e instanceof StoreError ? e.code : "not a StoreError"; }
await store.close();
console.log(JSON.stringify({ seq, adopted, rows: page.rows, refused }));
`);
  const out = execFileSync(process.execPath, ["use.mjs"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
  const result = JSON.parse(out.trim().split("\n").at(-1));
  assert.equal(result.seq, 2, "the table declaration is seq 1, the commit seq 2");
  assert.equal(result.adopted, 2);
  assert.deepEqual(result.rows, [{ id: "n2", at: 2 }]);
  assert.equal(result.refused, "invalid/args");
  assert.ok(existsSync(join(dir, "data", "user.sqlite")));
});

test("every relative link in the package's docs leads to a file the package ships", () => {
  const [{ files }] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", "--loglevel=error"], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 }));
  const shipped = new Set(files.map((f) => f.path));
  const dirs = new Set([...shipped].flatMap((p) => p.split("/").slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join("/"))));
  const dead = [];
  let links = 0;
  for (const doc of [...shipped].filter((p) => p.endsWith(".md"))) {
    const text = readFileSync(join(repoRoot, doc), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      links++;
      const to = posix.normalize(posix.join(posix.dirname(doc), target)).replace(/\/$/, "");
      if (!shipped.has(to) && !dirs.has(to)) dead.push(`${doc} -> ${target}`);
    }
  }
  assert.ok(links > 20, `the docs' relative links were found (${links})`);
  assert.deepEqual(dead, [], "links to files the package does not ship");
  for (const f of ["examples/relay/worker.js", "examples/relay/wrangler.toml", "examples/edge/worker.js", "bench/report.md"]) assert.ok(shipped.has(f), f);
});
