// A real PostgreSQL server for a test or a bench run: Debian's postgresql
// (15, installed by scripts/setup.sh), initdb + pg_ctl into a temp folder
// on a free port of 127.0.0.1, with its socket in that folder. PostgreSQL
// refuses to run as root, so as root the folder is chowned to the
// `postgres` user and the tools run through runuser; otherwise directly.
// stop() stops the server and removes the folder; so does the process's
// exit, if a test failed before it called stop().
//
//   const pg = await startPostgres();
//   try { ... pg.url ... } finally { await pg.stop(); }

import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The folder of PostgreSQL's server tools (initdb, pg_ctl), newest version first. */
export function postgresBin() {
  if (process.env.ONESTORE_PG_BIN) return process.env.ONESTORE_PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error("PostgreSQL's server tools are not installed (no /usr/lib/postgresql/*/bin/initdb): run `npm run setup` (scripts/setup.sh installs postgresql)");
  }
  return join(root, versions[0], "bin");
}

/**
 * Ends a pg.Pool and resolves once every one of its connections has closed.
 * pool.end() resolves as soon as it has asked its idle clients to end, not
 * when they have; stopping the server in that gap cuts a connection that
 * is still closing, and pg reports that as an 'error' of the pool.
 */
export async function endPool(pool) {
  let open = pool.totalCount;
  const closed = new Promise((resolve) => {
    if (open === 0) resolve();
    pool.on("remove", () => { if (--open === 0) resolve(); });
  });
  await pool.end();
  await closed;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a PostgreSQL server of its own. Resolves to { url, port, dir, stop }:
 * `url` is a connection string for the superuser `postgres`, database
 * `postgres` (trust authentication on 127.0.0.1 only). `fast: true` (the
 * tests') turns fsync off: the data need not outlive the machine.
 */
export async function startPostgres({ fast = true } = {}) {
  const bin = postgresBin();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "onestore-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const tool = (name, args) => (asRoot
    ? run("runuser", ["-u", "postgres", "--", join(bin, name), ...args], { cwd: dir })
    : run(join(bin, name), args, { cwd: dir }));
  const toolSync = (name, args) => (asRoot
    ? execFileSync("runuser", ["-u", "postgres", "--", join(bin, name), ...args], { cwd: dir, stdio: "ignore" })
    : execFileSync(join(bin, name), args, { cwd: dir, stdio: "ignore" }));

  let started = false;
  const cleanup = () => {
    if (started) {
      try { toolSync("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]); } catch { /* already stopped */ }
      started = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", cleanup);
  try {
    await tool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]);
    const port = await freePort();
    const options = [
      `-p ${port}`, "-c listen_addresses=127.0.0.1", `-c unix_socket_directories=${dir}`,
      "-c max_connections=50", "-c shared_buffers=32MB",
      ...(fast ? ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"] : []),
    ].join(" ");
    started = true;
    await tool("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "60", "start"]);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dir,
      async stop() {
        process.removeListener("exit", cleanup);
        if (started) {
          try { await tool("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]); } catch { /* stopped anyway below */ }
        }
        cleanup();
      },
    };
  } catch (e) {
    process.removeListener("exit", cleanup);
    cleanup();
    throw e;
  }
}
