// The browser build in Chromium (playwright-core, Debian's chromium): a
// page on another origin imports dist/index.js as a module, as a site
// would, and uses a live Atrium through CORS; verifies a webhook with Web
// Crypto; and follows a realtime stream with the browser's own
// EventSource (against a fake SSE server on the page's origin).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join, normalize } from "node:path";
import { chromium } from "playwright-core";
import { admin, startStack } from "./stack.mjs";

const PAGE_PORT = 19459;
const origin = `http://127.0.0.1:${PAGE_PORT}`;
const dist = new URL("../dist/", import.meta.url).pathname;
let stack, browser, server;
const rt = { streams: [], posts: [] };

const page = `<!doctype html><meta charset="utf-8"><title>sdk</title>
<script type="module">
import * as atrium from "/sdk/index.js";
window.atrium = atrium;
window.sdkReady = true;
</script>`;

before(async () => {
  stack = await startStack({ base: 19450 });
  const origins = (await admin(stack, "GET", `/admin/v1/sites/${stack.site}`)).site.allowed_origins ?? [];
  await admin(stack, "PUT", `/admin/v1/sites/${stack.site}/allowed_origins`, { allowed_origins: [...origins, origin] });
  server = createServer(async (req, res) => {
    const url = new URL(req.url, origin);
    if (url.pathname === "/") {
      res.writeHead(200, { "Content-Type": "text/html" }).end(page);
    } else if (url.pathname.startsWith("/sdk/")) {
      const file = normalize(join(dist, url.pathname.slice(5)));
      if (!file.startsWith(dist)) return res.writeHead(403).end();
      try {
        const body = await readFile(file);
        res.writeHead(200, { "Content-Type": file.endsWith(".js") ? "text/javascript" : "application/octet-stream" }).end(body);
      } catch {
        res.writeHead(404).end();
      }
    } else if (url.pathname === "/api/public/v1/realtime" && req.method === "GET") {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
      res.write(`retry: 50\nevent: connect\ndata: {"client_id":"b${rt.streams.length + 1}"}\n\n`);
      rt.streams.push({ res, lastEventId: req.headers["last-event-id"] });
    } else if (url.pathname === "/api/public/v1/realtime" && req.method === "POST") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        rt.posts.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res.writeHead(204).end();
      });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(PAGE_PORT, "127.0.0.1", r));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});

after(async () => {
  await browser?.close();
  for (const s of rt.streams) s.res.destroy();
  await new Promise((r) => (server ? server.close(r) : r()));
  await stack?.stop();
});

async function openPage() {
  const p = await browser.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  await p.goto(origin + "/");
  await p.waitForFunction(() => window.sdkReady === true, null, { timeout: 10_000 }).catch(() => {
    throw new Error(`the browser build did not load: ${errors.join("; ")}`);
  });
  return p;
}

test("the browser build lists, creates and reads posts across origins, with typed errors", async () => {
  const p = await openPage();
  const out = await p.evaluate(
    async ({ api, write, read }) => {
      const { Atrium, NotFoundError, PermissionDeniedError } = window.atrium;
      const sdk = new Atrium({ baseURL: api, apiKey: write });
      const created = await sdk.items.create("posts", { data: { title: "From Chromium" } });
      const titles = [];
      for await (const it of sdk.items.list("posts", { limit: 1 })) titles.push(it.title);
      let notFound;
      try {
        await sdk.items.get("posts", "00000000-0000-0000-0000-000000000000");
      } catch (e) {
        notFound = { isClass: e instanceof NotFoundError, status: e.status, traceId: e.traceId, error: e.error };
      }
      let denied = false;
      try {
        await new Atrium({ baseURL: api, apiKey: read }).items.create("posts", { data: { title: "no" } });
      } catch (e) {
        denied = e instanceof PermissionDeniedError;
      }
      return { id: created.id, etag: created.etag, titles, notFound, denied };
    },
    { api: stack.api, write: stack.write, read: stack.read },
  );
  assert.ok(out.titles.includes("From Chromium"), JSON.stringify(out.titles));
  assert.ok(out.etag, "the ETag header is exposed to the page");
  assert.equal(out.notFound.isClass, true);
  assert.equal(out.notFound.status, 404);
  assert.ok(out.notFound.traceId, "the trace id is exposed to the page");
  assert.equal(out.denied, true);
  await p.close();
});

test("webhook verification with the browser's Web Crypto", async () => {
  const p = await openPage();
  const out = await p.evaluate(async () => {
    const { verifyWebhook } = window.atrium;
    const h = new Headers({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
    const ev = await verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", h, '{"test": 2432232314}', { now: 1614265330000 });
    let refused = false;
    try {
      await verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", h, '{"test": 1}', { now: 1614265330000 });
    } catch {
      refused = true;
    }
    return { id: ev.id, refused };
  });
  assert.deepEqual(out, { id: "msg_p5jXN8AQM9LWM0D4loKWxJek", refused: true });
  await p.close();
});

test("realtime with the browser's EventSource: subscribes, receives, resumes with Last-Event-ID", async () => {
  const p = await openPage();
  await p.evaluate((base) => {
    const { Atrium } = window.atrium;
    window.got = [];
    window.sub = new Atrium({ baseURL: base, apiKey: "atr_browser" }).realtime.connect({
      subscriptions: ["posts"],
      onEvent: (e) => window.got.push([e.id, e.action, e.item.id]),
    });
    return window.sub.ready;
  }, origin);
  assert.deepEqual(rt.posts[0], { auth: "Bearer atr_browser", body: { client_id: "b1", subscriptions: ["posts"] } });
  rt.streams[0].res.write(`id: 41\nevent: posts\ndata: {"action":"create","collection":"posts","item":{"id":"p9"}}\n\n`);
  await p.waitForFunction(() => window.got.length === 1);
  rt.streams[0].res.destroy(); // EventSource reconnects by itself, with Last-Event-ID
  await p.waitForFunction(() => window.sub.clientId === "b2", null, { timeout: 10_000 });
  // The client names the new stream before its subscription POST arrives.
  for (const t0 = Date.now(); rt.posts.length < 2 && Date.now() - t0 < 10_000; ) await new Promise((r) => setTimeout(r, 20)); // why sleep: a poll of the fake server's record of POSTs
  assert.equal(rt.streams[1].lastEventId, "41");
  assert.deepEqual(rt.posts.at(-1).body, { client_id: "b2", subscriptions: ["posts"] });
  rt.streams[1].res.write(`id: 42\nevent: posts\ndata: {"action":"delete","collection":"posts","item":{"id":"p9"}}\n\n`);
  await p.waitForFunction(() => window.got.length === 2);
  assert.deepEqual(await p.evaluate(() => window.got), [["41", "create", "p9"], ["42", "delete", "p9"]]);
  await p.evaluate(() => window.sub.close());
  await p.close();
});
