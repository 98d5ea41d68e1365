// Checks the lock between processes that a sqlite store file takes for each
// SQLite transaction (js/files-node.js): under heavy contention it excludes
// every other process (no read-modify-write of a shared counter is lost), and
// it is gone when its holders are done.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { tempDir } from "./helpers.js";

const worker = new URL("./fixtures/lock-worker.mjs", import.meta.url).pathname;

test("three processes that take turns through the lock lose none of 6000 increments", async () => {
  const db = join(tempDir("onestore-lock-"), "s.sqlite");
  writeFileSync(`${db}.count`, "0");
  const exits = [1, 2, 3].map(
    () =>
      new Promise((resolve) => {
        spawn(process.execPath, [worker, db, "2000"], { stdio: "inherit" }).on("exit", resolve);
      }),
  );
  assert.deepEqual(await Promise.all(exits), [0, 0, 0]);
  assert.equal(Number(readFileSync(`${db}.count`, "utf8")), 6000);
  assert.ok(!existsSync(`${db}-lock`), "released at the end");
});
