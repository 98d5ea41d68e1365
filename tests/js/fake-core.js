// A fake wasm Core for the unit tests of the store's modules: it answers as
// wasm/ABI.md says, records every call, and keeps no data beyond what the
// tests script. Not a test file itself. Ops sent as a binary batch are
// logged (and kept for lastOps) as their wire JSON (tests/js/ops-batch.js).

import { batchToJson } from "./ops-batch.js";

/**
 * A fake core. `answers` overrides methods; every call is logged in `calls`.
 *
 * @example
 * const core = fakeCore({ get: () => '["e1",1]' });
 */
export function fakeCore(answers = {}) {
  const calls = [];
  let head = 0;
  let last = "[]";
  let nextTx = 1;
  const owners = [];
  const base = {
    head: () => head,
    tables: () => "[]",
    declare: () => "",
    commit(ops, meta) {
      head++;
      last = batchToJson(ops);
      return JSON.stringify({ seq: head, at: 1, counts: [] });
    },
    // The numeric commit (wasm/ABI.md): the seq, or 0 with lastError().
    ownerId(name) {
      if (!owners.includes(name)) owners.push(name);
      return owners.indexOf(name) + 1;
    },
    commitAs(ops, owner, at) {
      head++;
      last = batchToJson(ops);
      return head;
    },
    lastError: () => "",
    txOpen: () => nextTx++,
    txGet: () => "null",
    txCommit(tx, ops, meta) {
      return base.commit(ops, meta);
    },
    txCommitAs(tx, ops, owner, at) {
      return base.commitAs(ops, owner, at);
    },
    txClose: () => "",
    lastOps: () => last,
    get: () => "null",
    page: () => '{"rows":[]}',
    count: () => "0",
    mintId: () => "1",
    close: () => "",
    delete: () => {},
  };
  const core = {};
  for (const name of new Set([...Object.keys(base), ...Object.keys(answers)])) {
    core[name] = (...args) => {
      calls.push([name, ...args.map((a) => (a instanceof Uint8Array ? batchToJson(a) : a))]);
      return (answers[name] ?? base[name])(...args);
    };
  }
  return { core, calls, names: () => calls.map((c) => c[0]) };
}
