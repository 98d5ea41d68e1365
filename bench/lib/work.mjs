// The work every column of the benchmark does, in any runtime (Node, a
// Chromium Worker, workerd): the table, its rows, the workloads' sizes, the
// recorded ops of the replica workload, and the figure helpers. No imports,
// so the browser and workerd benches load this very file
// (bench/browser/opfs-worker.js, bench/edge-worker.js); bench/lib/common.mjs
// re-exports it for the Node columns.

// The table of every workload: a str key, a str with a secondary index
// (path, at), two ints and a json, as an agent's file-edit history.
// `api` is a package root (js/index.js, js/browser.js, js/workerd.js).
export const editsTable = ({ defineTable, str, int, json }) => defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
export const OWNER = "bench";
export const TABLE = "bench/edits";  // its name in the store (and in SQL)
export const COLUMNS = ["id", "path", "entry", "at", "meta"];
export const DIRS = 10;  // 10% of the rows share a directory: the rename moves one

// Row i. The SQL columns build the same rows with ROW_SQL (one INSERT ...
// SELECT over a counter), so that every column reads the same data.
export const keyOf = (i) => `e${String(i).padStart(7, "0")}`;
export const ROW = (i) => ({ id: keyOf(i), path: `src/dir${i % DIRS}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
export const ROW_SQL = (from, to) => `WITH RECURSIVE c(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ${to})
  SELECT printf('e%07d', i), 'src/dir' || (i % ${DIRS}) || '/file' || i || '.ts', i, i, '{"lines":' || (i % 7) || '}' FROM c`;

// A new row whose key falls among rows 0..n (between two existing keys), for
// the commit-cost workload: it lands inside the tables' B-trees, not at
// their right edge.
export const MIDDLE_ROW = (i, n, salt) => {
  const at = Math.floor(((i * 7919 + salt * 104729) % 1000003) / 1000003 * n);
  return { id: `${keyOf(at)}-${salt}-${i}`, path: `src/dir${at % DIRS}/new${i}.ts`, entry: at, at, meta: { lines: i % 7 } };
};

// Deterministic pseudo-random keys for the gets (the same in every column).
export function getKeys(count, rows) {
  let x = 12345;
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = keyOf(x % rows);
  }
  return out;
}

// The sizes and repeat counts of a full run and of the quick mode (`--quick`,
// what `npm test` runs: it checks the report, never a speed). The quick
// mode's commitAt batches are 30 commits, so that a batch spans several
// ticks of a browser Worker's clock (performance.now() is coarsened to
// 100 µs there): with 3, a batch of relaxed OPFS commits once read 0 ms.
export function plan(quick) {
  return quick
    ? { quick: true, runs: 1, commits: 5, fileCommits: 3, bulk: 250, readRows: 2000, renameRows: 200, pages: 10, pageSize: 100, gets: 500,
      replayCommits: 20, fileReplayCommits: 10, replayOpsPerCommit: 5, replicaCommits: 30, replicaBatch: 10, openRows: 2000, openOutbox: 50, openRuns: 1, commitAt: [10, 100, 1000], commitAtCommits: 30, commitAtMemoryCommits: 30,
      archiveRows: 2000, archiveBlobs: 4, archiveBlobBytes: 256 * 1024, archiveRuns: 1, docChanges: 100, docLoads: 20,
      nearestRows: 500, nearestDims: 384, nearestK: 10, nearestRuns: 2 }
    : { quick: false, runs: 5, commits: 300, fileCommits: 60, bulk: 25000, readRows: 100000, renameRows: 10000, pages: 1000, pageSize: 100, gets: 50000,
      replayCommits: 2000, fileReplayCommits: 300, replayOpsPerCommit: 5, replicaCommits: 4000, replicaBatch: 100, openRows: 1000000, openOutbox: 20000, openRuns: 5, commitAt: [1000, 100000, 1000000], commitAtCommits: 400, commitAtMemoryCommits: 400,
      archiveRows: 100000, archiveBlobs: 100, archiveBlobBytes: 1024 * 1024, archiveRuns: 3, docChanges: 1000, docLoads: 500,
      nearestRows: 100000, nearestDims: 384, nearestK: 10, nearestRuns: 11 };
}

// ---- figures ----

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// A figure: `value` in `unit` (lower is better unless `higher`).
export const figure = (value, unit, extra = {}) => ({ value, unit, ...extra });
export const na = (why) => ({ na: why });

// ---- the replica workload: recorded ops ----

// The ops of `commits` commits as a session records them: puts of new rows,
// updates of one column by key and deletes, in the wire format (docs/formats.md).
// Every column applies the same list; a row change is one op.
export function recordedOps(commits, perCommit) {
  const batches = [];
  let n = 0;
  for (let c = 0; c < commits; c++) {
    const ops = [];
    for (let k = 0; k < perCommit; k++) {
      const kind = k % 5;
      if (kind < 3 || n < 10) ops.push({ op: "put", table: TABLE, row: ROW(10_000_000 + n++) });
      else if (kind === 3) ops.push({ op: "update", table: TABLE, key: [keyOf(10_000_000 + n - 3)], set: { at: { value: c } } });
      else ops.push({ op: "delete", table: TABLE, key: [keyOf(10_000_000 + n - 7)] });
    }
    batches.push(ops);
  }
  return batches;
}

// The commits of the replica workload (10): recordedOps, and every tenth
// commit also a bulk update (updateWhere by a prefix of the indexed path,
// about ten rows of the same hundred keys) so that batches hold bulk ops with
// their recorded counts. The owner's store turns them into outbox batches
// (bench/lib/common.mjs, replicaBatches); every column applies those.
export function replicaCommits(commits, perCommit) {
  const list = recordedOps(commits, perCommit);
  for (let c = 9; c < commits; c += 10) {
    const hundred = Math.max(0, Math.floor((c * 3) / 100) - 1);  // rows put by then
    const d = c % DIRS;
    list[c].push({ op: "update", table: TABLE, where: { prefix: ["path", `src/dir${d}/file${100_000 + hundred}`] }, set: { at: { value: -c } } });
  }
  return list;
}

// The row changes of an outbox batch: 1 for a put or a key op, the recorded
// count for a bulk op, 0 for a table record.
export function rowChanges(batch) {
  let n = 0;
  for (const r of batch.commits) {
    for (const op of r.ops) n += op.op === "table" ? 0 : op.where !== undefined ? Number(op.count) : 1;
  }
  return n;
}
