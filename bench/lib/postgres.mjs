// Workload "postgres apply": workload 10's outbox batches (puts, updates and
// deletes by key, a bulk update every tenth commit) applied into a
// PostgreSQL mirror (openReplica({ backend: "postgres" }), one PostgreSQL
// transaction a batch), beside the same row changes sent by plain `pg`
// statements (INSERT ... ON CONFLICT, UPDATE, DELETE; named, so prepared
// once) in one transaction into a table of the same DDL. A PostgreSQL
// server of its own, started with the tests' helper (tests/pg-server.js),
// with its default durability (fsync on). The figure is the time per row
// change, median over p.runs runs, each into a fresh schema.

import pg from "pg";

import { endPool, startPostgres } from "../../tests/pg-server.js";
import { figure, na, repeat, replicaBatches } from "./common.mjs";
import { openReplica } from "../../js/index.js";

// The plain statements of one op of the bench table (bench/edits).
function plainStatement(schema, op) {
  const t = `"${schema}"."bench/edits"`;
  if (op.op === "put") {
    const r = op.row;
    return {
      name: `put-${schema}`,
      text: `INSERT INTO ${t} (id, path, entry, at, meta) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET path = EXCLUDED.path, entry = EXCLUDED.entry, at = EXCLUDED.at, meta = EXCLUDED.meta`,
      values: [r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)],
    };
  }
  if (op.op === "delete") return { name: `del-${schema}`, text: `DELETE FROM ${t} WHERE id = $1`, values: [op.key[0]] };
  if (op.where === undefined) return { name: `upd-${schema}`, text: `UPDATE ${t} SET at = $1 WHERE id = $2`, values: [op.set.at.value, op.key[0]] };
  const p = op.where.prefix[1];
  return { name: `bulk-${schema}`, text: `UPDATE ${t} SET at = $1 WHERE path >= $2 AND path < $3`, values: [op.set.at.value, p, `${p}\u{10ffff}`] };
}

/**
 * The figure of workload "postgres apply" (n/a with the reason when no
 * PostgreSQL server can be started here).
 */
export async function postgresApplyFigure(p, log) {
  let server;
  try {
    server = await startPostgres({ fast: false });
  } catch (e) {
    return na(`no PostgreSQL server could be started here (${String(e.message).split("\n")[0]})`);
  }
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  try {
    const { batches, changes } = await replicaBatches(p);
    let n = 0;
    const mirror = await repeat(p.runs, async () => {
      const replica = await openReplica({ backend: "postgres", pool, session: `bench${n++}` });
      const t0 = performance.now();
      for (const b of batches) await replica.applyBatch(b);
      const took = performance.now() - t0;
      await replica.close();
      return took;
    });
    // The same DDL as the mirror's table, made by a mirror of the first batch.
    const plain = await repeat(p.runs, async () => {
      const schema = `plain${n++}`;
      const replica = await openReplica({ backend: "postgres", pool, session: schema });
      await replica.applyBatch({ ...batches[0], to: 1, commits: batches[0].commits.slice(0, 1) });
      await replica.close();
      const ops = batches.flatMap((b) => b.commits.flatMap((r) => r.ops)).filter((op) => op.op !== "table");
      const client = await pool.connect();
      const t0 = performance.now();
      try {
        await client.query("BEGIN");
        for (const op of ops) await client.query(plainStatement(schema, op));
        await client.query("COMMIT");
      } finally {
        client.release();
      }
      return performance.now() - t0;
    });
    const perMirror = mirror.value / changes;
    const perPlain = plain.value / changes;
    log(`postgres apply: ${(1000 / perMirror).toFixed(0)} row changes/s (plain pg in one transaction: ${(1000 / perPlain).toFixed(0)})`);
    return figure(perMirror, "ms", {
      per: "row change",
      runs: p.runs,
      rowChangesPerSecond: 1000 / perMirror,
      batches: batches.length,
      changes,
      plainPg: { value: perPlain, unit: "ms", per: "row change", rowChangesPerSecond: 1000 / perPlain },
      vsPlainPg: perMirror / perPlain,
    });
  } finally {
    await endPool(pool);
    await server.stop();
  }
}
