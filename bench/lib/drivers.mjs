// The SQL anchors' drivers: one small interface over three SQLites, so that
// the same SQL (bench/lib/sql-column.mjs) runs through each of them.
//
//   exec(sql)              statements without parameters (pragmas, DDL, BEGIN)
//   run(sql, params)       one statement, prepared once and cached
//   all(sql, params)       its rows, each an array of the columns' values
//   close()
//
// Every driver caches its prepared statements, as a careful user of each API
// would.

import { createRequire } from "node:module";

import { loadBenchCore } from "./bench-core.mjs";

const require = createRequire(import.meta.url);

// The same SQL run raw through onestore's own wasm SQLite (wasm/raw_sqlite.cc,
// linked only into the bench build, bench/lib/bench-core.mjs): the same
// SQLite build, flags, VFS and Node file system as the store, no store
// logic. Parameters cross as one JSON array, rows as one JSON text.
export async function rawWasm(path) {
  const mod = await loadBenchCore();
  const db = new mod.RawSqlite();
  const check = (r) => {
    if (typeof r === "string" && r.startsWith("!")) throw new Error(`raw wasm SQLite: ${r}`);
    return r;
  };
  check(db.open(path));
  return {
    exec: (sql) => check(db.exec(sql)),
    run: (sql, params) => check(db.run(sql, JSON.stringify(params))),
    all: (sql, params) => JSON.parse(check(db.all(sql, JSON.stringify(params)))),
    close: () => { db.close(); db.delete(); },
  };
}

// The official @sqlite.org/sqlite-wasm (its oo1 API), in memory (Node has no
// persistent VFS of it).
let officialPromise = null;
export function loadOfficial() {
  if (!officialPromise) {
    officialPromise = import("@sqlite.org/sqlite-wasm").then((m) => m.default({ print: () => {}, printErr: () => {} }));
  }
  return officialPromise;
}
export async function officialWasm() {
  const sqlite3 = await loadOfficial();
  const db = new sqlite3.oo1.DB(":memory:", "c");
  const cache = new Map();
  const stmt = (sql) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  return {
    version: sqlite3.version.libVersion,
    exec: (sql) => db.exec(sql),
    run(sql, params) {
      const s = stmt(sql);
      if (params.length) s.bind(params);
      s.step();
      s.reset(true);
      return db.changes();
    },
    all(sql, params) {
      const s = stmt(sql);
      if (params.length) s.bind(params);
      const rows = [];
      while (s.step()) rows.push(s.get([]));
      s.reset(true);
      return rows;
    },
    close() {
      for (const s of cache.values()) s.finalize();
      db.close();
    },
  };
}

// Native better-sqlite3 (a C++ addon over SQLite).
export function betterSqlite(path) {
  const Database = require("better-sqlite3");
  const db = new Database(path);
  const cache = new Map();
  const stmt = (sql) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  return {
    version: db.prepare("SELECT sqlite_version()").pluck().get(),
    exec: (sql) => db.exec(sql),
    run: (sql, params) => stmt(sql).run(...params).changes,
    all: (sql, params) => stmt(sql).raw(true).all(...params),
    close: () => db.close(),
  };
}
