// Checks one writer across processes: a second process that opens a store
// file while the first is committing takes it over; the first is fenced;
// every commit either of them acknowledged is in the file, and the file
// stays whole (the real sqlite3 command checks it).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { defineTable, int, openStore, str } from "../../js/index.js";

const writer = new URL("./fixtures/writer.mjs", import.meta.url).pathname;

function run(path, name, count) {
  const child = spawn(process.execPath, [writer, path, name, String(count)], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = [];
  let buf = "";
  const opened = new Promise((resolve) => {
    child.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        if (line === "open") resolve();
      }
    });
  });
  const done = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { lines, opened, done };
}

test("a second process takes over a store while the first commits, and no acknowledged commit is lost", async () => {
  const dir = mkdtempSync(join(tmpdir(), "onestore-takeover-"));
  try {
    const path = join(dir, "s.sqlite");
    const a = run(path, "a", 100000);
    await a.opened;
    await new Promise((r) => setTimeout(r, 300));  // a is committing now
    const b = run(path, "b", 300);
    assert.equal(await b.done, 0, `b failed: ${b.lines.filter((l) => l.startsWith("error")).join("; ")}`);
    assert.equal(await a.done, 0, `a failed: ${a.lines.filter((l) => l.startsWith("error")).join("; ")}`);

    assert.ok(a.lines.includes("fenced"), "the first owner was fenced");
    const acked = [...a.lines, ...b.lines].filter((l) => l.startsWith("ok ")).map((l) => l.slice(3));
    assert.ok(acked.filter((id) => id.startsWith("a-")).length > 0, "a committed before the take-over");
    assert.equal(acked.filter((id) => id.startsWith("b-")).length, 300);

    assert.equal(execFileSync("sqlite3", [path, "pragma integrity_check"], { encoding: "utf8" }).trim(), "ok");
    const store = await openStore({ backend: "sqlite", path });
    const rows = store.object({ type: "writer" }).table(
      defineTable("rows", { columns: { id: str(), n: int(), pad: str() }, key: ["id"] }),
    );
    const stored = new Set();
    for await (const row of rows.rows()) stored.add(row.id);
    for (const id of acked) assert.ok(stored.has(id), `acknowledged commit ${id} is in the file`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
