// A dedicated Worker for tests/browser/bad-input.test.js: runs the bad-input
// corpus (tests/bad-input/runner.js) on an OPFS store, with an OPFS replica
// for the raw batches. One op, "run" { name }: answers the report. The
// worker reads tests/bad-input/cases.json itself: a case passed through
// page.evaluate would lose what JSON.parse keeps (an own "__proto__" key).
import * as api from "../../../js/browser.js";
import { badInputRunner } from "../../bad-input/runner.js";

const { runCases } = badInputRunner(api);

const ops = {
  async run({ name }) {
    const { cases } = await (await fetch(new URL("../../bad-input/cases.json", import.meta.url))).json();
    return runCases(cases, {
      open: () => api.openStore({ backend: "opfs", name }),
      openReplica: () => api.openReplica({ backend: "opfs", name: `${name}-replica` }),
    });
  },
};

self.onmessage = async (e) => {
  const { id, op, args } = e.data;
  try {
    self.postMessage({ id, ok: true, value: await ops[op](args) });
  } catch (err) {
    self.postMessage({ id, ok: false, error: { code: err?.code, name: err?.name, message: String(err?.message ?? err) } });
  }
};
