// The PostgreSQL mirror (openReplica({ backend: "postgres" })) against a
// real PostgreSQL server that this file starts itself (tests/pg-server.js):
// the conformance vectors' reads give the same answers on it as on every
// backend, its rows equal the store's after every case; its tables are real
// tables with real columns and indexes, readable with plain SQL; two
// sessions live side by side in one database; gaps, already-applied
// batches and divergence behave as on every replica; values keep their
// fidelity (ints beyond 2^53, code-point text order, -0, JSON); and
// followRelay keeps a mirror up to date from a relay fed by startSync,
// resuming from the mirror's head after a restart.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import pg from "pg";

import * as api from "../../js/index.js";
import {
  createRelay, defineTable, followRelay, gte, int, json, num, openReplica, openStore, prefix, query, startSync, str,
} from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { startPostgres } from "../pg-server.js";
import { rejectsWith, repoRoot } from "./helpers.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();

let server;
let pool;
let sessions = 0;
const nextSession = (label = "s") => `${label}${++sessions}`;

before(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
});

after(async () => {
  await pool?.end();
  await server?.stop();
});

// The package's api with openStore replaced: a memory store whose every
// commit is then applied into a fresh PostgreSQL mirror, and whose table
// handles read from the mirror. The runner's writes go to the store, its
// reads (get, page, count, cursors) to PostgreSQL.
function mirroredApi(skipped) {
  return {
    ...api,
    async openStore() {
      const store = await openStore({ backend: "memory" });
      const replica = await openReplica({ backend: "postgres", pool, session: nextSession("c") });
      const catchUp = async () => {
        while (replica.head < store.head) await replica.applyBatch(await store.outbox.read(replica.head, 3));
      };
      const mirrored = (handle) => ({
        name: handle.name,
        async get(key) {
          await catchUp();
          return replica.table(handle.name).get(key);
        },
        async count(q) {
          await catchUp();
          return replica.table(handle.name).count(q);
        },
        async page(q, limit, _ctx, options) {
          await catchUp();
          return replica.table(handle.name).page(q, limit, options);
        },
        rows: (q) => handle.rows(q),
      });
      return {
        get head() { return store.head; },
        outbox: store.outbox,
        object(spec) {
          const owner = store.object(spec);
          return { table: (def) => mirrored(owner.table(def)), documents: owner.documents };
        },
        commit: (...args) => store.commit(...args),
        // After the steps: every table's rows, in key order, equal the store's.
        async checkMirror(tables) {
          await catchUp();
          assert.equal(replica.head, store.head, "the mirror's head");
          for (const [name, t] of tables) {
            const want = [];
            for await (const row of t.handle.rows()) want.push(row);
            const got = [];
            for await (const row of replica.table(name).rows()) got.push(row);
            assert.deepStrictEqual(got, want, `the rows of ${name}`);
          }
        },
        async close() {
          await replica.close();
          await store.close();
        },
        skipped,
      };
    },
  };
}

describe("the conformance vectors on a PostgreSQL mirror", () => {
  for (const file of files) {
    test(`${file}: every read gives the vectors' answers and the mirror's rows equal the store's`, async (t) => {
      const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
      const skipped = [];
      const { CaseRunner } = conformanceRunner(mirroredApi(skipped), assert);
      for (const c of doc.cases) {
        // Documents are not mirrored (docs/architecture.md, "The PostgreSQL
        // mirror"): their reads are skipped, their table steps run.
        const steps = c.steps.filter((s) => s.doc === undefined);
        if (steps.length < c.steps.length) skipped.push(`${c.name}: ${c.steps.length - steps.length} documents read(s)`);
        const runner = new CaseRunner(doc, {});
        runner.afterSteps = (store, tables) => store.checkMirror(tables);
        try {
          await runner.run(steps);
        } catch (e) {
          e.message = `${file} / ${c.name}: ${e.message}`;
          throw e;
        }
      }
      if (skipped.length > 0) t.diagnostic(`skipped (the mirror keeps no documents): ${skipped.join("; ")}`);
    });
  }
});
