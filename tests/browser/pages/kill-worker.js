// The Worker of the Chromium kill campaign (tests/kill/chromium-loop.js,
// through kill.html): an OPFS store committing the stream of
// tests/kill/workload.js, each acknowledged commit posted as an event
// { event: "ack", c, seq } the moment it resolves; the check of
// workload.js on a reopened store; integrity_check on the store's file with
// nothing of the store's code between.
import * as api from "../../../js/browser.js";
import { opfsLockName } from "../../../js/loader-browser.js";
import { loadBenchCore } from "./bench-core.js";
import { acquireOpfsFiles, opfsDbPath } from "../../../js/files-opfs.js";
import { checkStore, commitStream } from "../../kill/workload.js";

let store = null;
let streaming = null;

const ops = {
  async open({ name, durability }) {
    store = await api.openStore({
      backend: "opfs", name, durability,
      onFenced: (e) => self.postMessage({ event: "fenced", code: e.code }),
    });
    return { head: store.head };
  },
  // checkStore on the open store, given the acknowledged commits so far.
  async check({ acked, durability, bigEvery }) {
    return checkStore(api, store, { acked: new Map(acked), durability, options: { bigEvery } });
  },
  // Commits from `start` on, in the background, until a commit fails (the
  // store fenced, say): then posts { event: "end", code, message }.
  stream({ start, bigEvery }) {
    const mine = store;
    streaming = commitStream(api, mine, {
      start, bigEvery,
      ack: (c, seq) => { self.postMessage({ event: "ack", c, seq }); },
    }).then((e) => { self.postMessage({ event: "end", code: e?.code, message: String(e?.message ?? e) }); });
    return true;
  },
  async close() {
    await store?.close();
    store = null;
    return true;
  },
  // PRAGMA integrity_check on the store's file (the store closed first).
  async integrity({ name }) {
    const mod = await loadBenchCore();  // RawSqlite is only in the bench build
    return navigator.locks.request(opfsLockName(name), { steal: true }, async () => {
      const release = await acquireOpfsFiles(name, 5000);
      const raw = new mod.RawSqlite();
      try {
        const opened = raw.open(opfsDbPath(name));
        if (opened) throw new Error(opened);
        raw.exec("PRAGMA locking_mode=EXCLUSIVE");
        return JSON.parse(raw.all("PRAGMA integrity_check", "[]"));
      } finally {
        raw.close();
        raw.delete();
        release();
      }
    });
  },
};

self.onmessage = async (e) => {
  const { id, op, args } = e.data;
  try {
    self.postMessage({ id, ok: true, value: await ops[op](args ?? {}) });
  } catch (err) {
    self.postMessage({ id, ok: false, error: { code: err?.code, name: err?.name, message: String(err?.message ?? err), stack: err?.stack } });
  }
};
