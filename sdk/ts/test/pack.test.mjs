// What a new user does: `npm pack` makes the tarball, which is installed
// into an empty Node project (no network needed: the package has no
// dependencies), whose program lists and creates posts and waits for a
// run against a live Atrium; and its types check under a consumer's tsc.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "./stack.mjs";

const pkgDir = new URL("..", import.meta.url).pathname;
let stack, work;

before(async () => {
  stack = await startStack({ base: 19470 });
  work = mkdtempSync(join(tmpdir(), "atrium-ts-pack-"));
});
after(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const npm = (args, cwd) => execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });

test("the npm tarball installs into an empty project that lists and creates posts and waits for a run", async () => {
  const out = npm(["pack", "--json", "--pack-destination", work], pkgDir);
  const info = JSON.parse(out)[0];
  assert.equal(info.name, "@atrium-hq/sdk");
  const files = info.files.map((f) => f.path);
  assert.ok(files.includes("dist/index.js") && files.includes("dist/index.d.ts"), files.join(" "));
  assert.ok(!files.some((f) => f.startsWith("test/") || f.startsWith("node_modules/")), "tests and modules stay out of the tarball");

  const app = join(work, "app");
  execFileSync("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  npm(["install", "--offline", join(work, info.filename)], app);
  assert.ok(readdirSync(join(app, "node_modules", "@atrium-hq", "sdk", "dist")).includes("index.js"));

  writeFileSync(
    join(app, "main.mjs"),
    `import { Atrium } from "@atrium-hq/sdk";
const sdk = new Atrium({ baseURL: process.env.ATRIUM_URL, apiKey: process.env.ATRIUM_API_KEY });
const post = await sdk.items.create("posts", { data: { title: "From the tarball" } });
let titles = [];
for await (const item of sdk.items.list("posts")) titles.push(item.title);
const sub = await sdk.actions.submit("generate_gbp_post", process.env.CLIENT_ID, { topic: "Sourdough" });
const run = await sdk.runs.wait(sub.runId);
console.log(JSON.stringify({ post: post.id, titles, run: run.state }));
`,
  );
  const result = JSON.parse(
    execFileSync("node", ["main.mjs"], {
      cwd: app,
      encoding: "utf8",
      env: { ...process.env, ATRIUM_URL: stack.api, ATRIUM_API_KEY: stack.write, CLIENT_ID: stack.client },
    }),
  );
  // A TypeScript project resolves the package's types through its exports.
  writeFileSync(
    join(app, "check.ts"),
    `import { Atrium, NotFoundError, type Item } from "@atrium-hq/sdk";
const sdk = new Atrium({ baseURL: "http://127.0.0.1:8080", apiKey: "k" });
export const first: Promise<Item[]> = sdk.items.list("posts").then((p) => p.items);
export const isNotFound = (e: unknown): boolean => e instanceof NotFoundError;
// @ts-expect-error: items.create needs the item's data
sdk.items.create("posts", {});
`,
  );
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { noEmit: true, strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [] },
      files: ["check.ts"],
    }),
  );
  execFileSync(join(pkgDir, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd: app, encoding: "utf8" });

  assert.ok(result.post);
  assert.ok(result.titles.includes("From the tarball"), JSON.stringify(result.titles));
  assert.equal(result.run, "success");
});
