// The Node files object the wasm VFS calls (js/files-node.js): open with and
// without create, what it does to a file that exists, and the folder sync a
// file it created owes. fs's calls are recorded (not replaced) to see which
// ones ran: a missing file opened with create must not cost a failed open
// (an ENOENT thrown across wasm frames is the dearest call of a store's
// open: docs/performance.md, "Issue 13, an open without a thrown ENOENT").
import assert from "node:assert/strict";
import fs from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { createNodeFiles } from "../../js/files-node.js";
import { tempDir } from "./helpers.js";

// Runs fn with fs.openSync recorded: [path, flags, error code or null].
function recordingOpens(fn) {
  const calls = [];
  const orig = fs.openSync;
  fs.openSync = function (path, flags, ...rest) {
    try {
      const fd = orig.call(this, path, flags, ...rest);
      calls.push([path, flags, null]);
      return fd;
    } catch (e) {
      calls.push([path, flags, e.code]);
      throw e;
    }
  };
  try {
    fn();
  } finally {
    fs.openSync = orig;
  }
  return calls;
}

test("open with create makes a missing file with one open that cannot fail on ENOENT, and its first sync syncs the folder once", () => {
  const dir = tempDir("onestore-files-");
  const path = join(dir, "s.sqlite-wal");
  const files = createNodeFiles();
  let id;
  const opens = recordingOpens(() => { id = files.open(path, true); });
  assert.deepEqual(opens, [[path, "wx+", null]]);
  assert.equal(files.size(id), 0);
  files.write(id, Buffer.from("abc"), 0);
  const syncs = recordingOpens(() => { files.sync(id); files.sync(id); });
  assert.deepEqual(syncs, [[dir, "r", null]], "the folder is synced at the first sync only");
  files.close(id);
  assert.equal(fs.readFileSync(path, "utf8"), "abc");
});

test("open with create keeps an existing file's bytes, and its sync leaves the folder alone", () => {
  const dir = tempDir("onestore-files-");
  const path = join(dir, "s.sqlite");
  fs.writeFileSync(path, "kept bytes");
  const files = createNodeFiles();
  let id;
  const opens = recordingOpens(() => { id = files.open(path, true); });
  assert.deepEqual(opens, [[path, "r+", null]]);
  const bytes = new Uint8Array(4);
  assert.equal(files.read(id, bytes, 5), 4);
  assert.equal(Buffer.from(bytes).toString(), "byte");
  assert.deepEqual(recordingOpens(() => files.sync(id)), []);
  files.close(id);
  assert.equal(fs.readFileSync(path, "utf8"), "kept bytes");
});

test("open without create throws ENOENT for a missing file and makes none", () => {
  const path = join(tempDir("onestore-files-"), "gone.sqlite-journal");
  const files = createNodeFiles();
  assert.throws(() => files.open(path, false), { code: "ENOENT" });
  assert.ok(!fs.existsSync(path));
});
