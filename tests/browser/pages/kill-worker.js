// The Worker of the Chromium kill campaign (tests/kill/chromium-loop.js,
// through kill.html): an OPFS store committing the stream of
// tests/kill/workload.js, each acknowledged commit posted as an event
// { event: "ack", c, seq } the moment it resolves; the check of
// workload.js on a reopened store; the store's files for the sqlite3
// command's integrity_check, read with nothing of the store's code between.
import * as api from "../../../js/browser.js";
import { storeFiles } from "./opfs-integrity.js";
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
  // The store's files for the sqlite3 command's integrity_check in Node
  // (the store closed first).
  storeFiles({ name }) {
    return storeFiles(name);
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
