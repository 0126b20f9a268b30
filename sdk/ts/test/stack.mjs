// Starts a live Atrium for the tests: the atrium binary the test script
// built once (ATRIUM_BIN), `atrium serve --demo` on the SDK's ports
// (19400-19499), with the memory store or a PostgreSQL database of its
// own, and reads the address and keys from the banner it prints once it
// is ready.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bin = process.env.ATRIUM_BIN;
const databaseURL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable";

/** Ports base..base+8 for one stack's nine listeners. */
export async function startStack({ base, postgres = false }) {
  if (!bin) throw new Error("ATRIUM_BIN is not set: run the tests with make test-ts (scripts/sdk-ts.sh test)");
  const dir = mkdtempSync(join(tmpdir(), "atrium-ts-sdk-"));
  const p = (i) => `127.0.0.1:${base + i}`;
  const args = [
    "serve", "--demo", "--log-level=warn", "--drain-delay=0s", "--admin-token=ts-sdk-admin-token",
    `--http-addr=${p(0)}`, `--admin-addr=${p(1)}`, `--nats-embedded-addr=${p(2)}`,
    `--collections-grpc-addr=${p(3)}`, `--crm-grpc-addr=${p(4)}`, `--data-grpc-addr=${p(5)}`,
    `--actions-grpc-addr=${p(6)}`, `--webhooks-grpc-addr=${p(7)}`, `--audit-grpc-addr=${p(8)}`,
  ];
  let dbName, dbURL;
  if (postgres) {
    dbName = `ts_sdk_${process.pid}_${base}`;
    psql(`DROP DATABASE IF EXISTS ${dbName}`);
    psql(`CREATE DATABASE ${dbName}`);
    const u = new URL(databaseURL);
    u.pathname = "/" + dbName;
    dbURL = u.toString();
    execFileSync(bin, ["migrate", `--database-url=${dbURL}`], { stdio: "pipe" });
    args.push(`--database-url=${dbURL}`, `--data-dir=${join(dir, "data")}`);
  }
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env } });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const deadline = Date.now() + 120_000;
  while (!/write key:/.test(out)) {
    if (child.exitCode !== null) throw new Error(`atrium serve stopped before it was ready:\n${out}`);
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`atrium serve not ready after 120 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100)); // a poll of the banner, which has no push form
  }
  const m = (re) => {
    const v = out.match(re)?.[1];
    if (!v) throw new Error(`the banner has no ${re}:\n${out}`);
    return v;
  };
  const stack = {
    api: m(/public API:\s+(http:\S+)/),
    admin: m(/admin API:\s+(http:\S+)/),
    adminToken: "ts-sdk-admin-token",
    read: m(/read key:\s+(\S+)/),
    write: m(/write key:\s+(\S+)/),
    client: m(/\(Sunrise Bakery: ([0-9a-f-]+)\)/),
    site: m(/; site (\S+) with collections/),
    log: () => out,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      if (dbName) psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

function psql(sql) {
  execFileSync("psql", [databaseURL, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { stdio: "pipe" });
}

/** Calls the admin API of a stack. */
export async function admin(stack, method, path, body) {
  const res = await fetch(stack.admin + path, {
    method,
    headers: { Authorization: `Bearer ${stack.adminToken}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}
