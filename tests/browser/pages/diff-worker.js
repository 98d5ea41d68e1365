// A dedicated Worker for tests/browser/differential.test.js: runs the
// differential runner (tests/differential/differential.js) on OPFS stores
// through the package's browser root. Calls are { id, op, args }; answers
// { id, ok, value } or { id, ok: false, error }.
import * as api from "../../../js/browser.js";
import { differential } from "../../differential/differential.js";

const d = differential(api);
const names = [];
const options = () => {
  names.push(`diff-${names.length}`);
  return { backend: "opfs", name: names[names.length - 1] };
};
async function removeAll() {
  for (const name of names.splice(0)) await api.deleteStore({ backend: "opfs", name }).catch(() => {});
}

const ops = {
  // runSeeds over fresh OPFS stores; failures as runSeeds gives them.
  async run({ seeds, length, perStore }) {
    try {
      return await d.runSeeds(seeds, length, options, perStore);
    } finally {
      await removeAll();
    }
  },
  // The observations of one sequence (its text, BigInts as {"$bigint"}), on a fresh store.
  async observe({ text }) {
    try {
      return await d.observe(options(), d.fromText(text));
    } finally {
      await removeAll();
    }
  },
};

self.onmessage = async (e) => {
  const { id, op, args } = e.data;
  try {
    self.postMessage({ id, ok: true, value: await ops[op](args ?? {}) });
  } catch (err) {
    self.postMessage({ id, ok: false, error: { code: err?.code, name: err?.name, message: String(err?.stack ?? err?.message ?? err) } });
  }
};
