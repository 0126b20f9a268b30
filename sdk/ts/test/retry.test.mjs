// The transport's guarantees against a local fake server that fails on
// purpose: what is retried, how long it waits, and that an action keeps
// one Idempotency-Key across every attempt.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import {
  Atrium,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
  NotFoundError,
} from "../dist/index.js";

const PORT = 19430;
let script = []; // what the server answers, one entry per request
const seen = []; // the requests it received

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    const next = script.shift() ?? { status: 200, body: {} };
    if (next.reset) {
      req.socket.destroy(); // the connection is reset before any answer
      return;
    }
    if (next.hang) return; // never answers
    res.writeHead(next.status, { "Content-Type": "application/json", "Atrium-Trace-Id": "trace-" + seen.length, ...next.headers });
    res.end(JSON.stringify(next.body));
  });
});

before(() => new Promise((r) => server.listen(PORT, "127.0.0.1", r)));
after(() => new Promise((r) => server.close(r)));

function fresh(opts = {}) {
  script = [];
  seen.length = 0;
  return new Atrium({ baseURL: `http://127.0.0.1:${PORT}`, apiKey: "atr_test", backoffMs: 5, ...opts });
}

const ok = { status: 200, body: { action: "generate_gbp_post", client_id: "c", status: "success", status_code: 200, data: {} } };

test("429 with Retry-After: waits as asked, then succeeds", async () => {
  const sdk = fresh();
  script = [{ status: 429, headers: { "Retry-After": "1" }, body: { error: "rate limit: 10 requests per second" } }, { status: 200, body: { collections: [] } }];
  const t0 = Date.now();
  assert.deepEqual(await sdk.collections.list(), []);
  assert.equal(seen.length, 2);
  assert.ok(Date.now() - t0 >= 950, `waited ${Date.now() - t0} ms, Retry-After asked 1 s`);
});

test("an action keeps one Idempotency-Key across 503, a reset connection and 500", async () => {
  const sdk = fresh();
  script = [{ status: 503, body: { error: "unavailable" } }, { reset: true }, { status: 500, body: { error: "internal" } }, ok];
  const res = await sdk.actions.run("generate_gbp_post", "c", { topic: "Rye" });
  assert.equal(res.status, "success");
  assert.equal(seen.length, 4);
  const keys = new Set(seen.map((r) => r.headers["idempotency-key"]));
  assert.equal(keys.size, 1, `keys sent: ${[...keys]}`);
  assert.match([...keys][0], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(res.idempotencyKey, [...keys][0]);
  assert.deepEqual(JSON.parse(seen[3].body), { topic: "Rye", action: "generate_gbp_post", client_id: "c" });
});

test("two actions have two keys", async () => {
  const sdk = fresh();
  script = [ok, ok];
  await sdk.actions.run("generate_gbp_post", "c");
  await sdk.actions.run("generate_gbp_post", "c");
  assert.notEqual(seen[0].headers["idempotency-key"], seen[1].headers["idempotency-key"]);
});

test("a create is not retried on 500 or a reset (it may have reached the data), but is on 503 and 429", async () => {
  const sdk = fresh();
  script = [{ status: 500, body: { error: "the store failed" } }];
  await assert.rejects(sdk.items.create("posts", { data: { title: "x" } }), (e) => {
    assert.ok(e instanceof InternalServerError);
    assert.equal(e.status, 500);
    assert.equal(e.error, "the store failed");
    assert.equal(e.traceId, "trace-1");
    assert.equal(e.attempts, 1);
    return true;
  });
  assert.equal(seen.length, 1);

  fresh();
  script = [{ reset: true }];
  await assert.rejects(sdk.items.create("posts", { data: { title: "x" } }), (e) => e instanceof APIConnectionError && e.attempts === 1);
  assert.equal(seen.length, 1);

  fresh();
  script = [{ status: 503, body: { error: "stopping" } }, { status: 429, body: { error: "slow down" } }, { status: 201, body: { item: { id: "i1" } } }];
  assert.equal((await sdk.items.create("posts", { data: { title: "x" } })).id, "i1");
  assert.equal(seen.length, 3);
});

test("reads retry a reset connection, 408 and 5xx; a 4xx is never retried", async () => {
  const sdk = fresh();
  script = [{ reset: true }, { status: 408, body: { error: "slow" } }, { status: 502, body: { error: "bad gateway" } }, { status: 200, body: { item: { id: "a" } } }];
  assert.equal((await sdk.items.get("posts", "a")).id, "a");
  assert.equal(seen.length, 4);

  fresh();
  script = [{ status: 400, body: { error: "limit must be 1 to 1000, got 0" } }];
  await assert.rejects(Promise.resolve(sdk.items.list("posts", { limit: 0 })), (e) => e instanceof BadRequestError && e.error === "limit must be 1 to 1000, got 0");
  assert.equal(seen.length, 1);
});

test("gives up after maxRetries+1 attempts with the last error", async () => {
  const sdk = fresh({ maxRetries: 2 });
  script = [503, 503, 503, 503].map((s) => ({ status: s, body: { error: "down" } }));
  await assert.rejects(sdk.collections.list(), (e) => e instanceof InternalServerError && e.attempts === 3);
  assert.equal(seen.length, 3);
});

test("429 exhausted is a RateLimitError carrying Retry-After", async () => {
  const sdk = fresh({ maxRetries: 0 });
  script = [{ status: 429, headers: { "Retry-After": "7" }, body: { error: "credits" } }];
  await assert.rejects(sdk.collections.list(), (e) => e instanceof RateLimitError && e.retryAfterMs === 7000);
});

test("a time-out per attempt is retried for reads; the caller's abort is not", async () => {
  const sdk = fresh({ timeoutMs: 150, maxRetries: 1 });
  script = [{ hang: true }, { hang: true }];
  await assert.rejects(sdk.collections.list(), (e) => e instanceof APITimeoutError && e.attempts === 2);
  assert.equal(seen.length, 2);

  fresh();
  script = [{ hang: true }];
  const ctl = new AbortController();
  const p = sdk.collections.list({ signal: ctl.signal });
  while (seen.length === 0) await new Promise((r) => setTimeout(r, 5)); // why sleep: waits for the request to reach the server
  ctl.abort();
  await assert.rejects(p, (e) => e instanceof APIUserAbortError);
  assert.equal(seen.length, 1);
});

test("a DELETE answered 404 after a retry is success: an earlier attempt deleted it", async () => {
  const sdk = fresh();
  script = [{ reset: true }, { status: 404, body: { error: "item not found" } }];
  await sdk.items.delete("posts", "a");
  assert.equal(seen.length, 2);
  fresh();
  script = [{ status: 404, body: { error: "item not found" } }];
  await assert.rejects(sdk.items.delete("posts", "a"), (e) => e instanceof NotFoundError);
});

test("paging: for await fetches the next page only when reached, and stops on a short page", async () => {
  const sdk = fresh();
  script = [
    { status: 200, body: { collection: {}, items: [{ id: "1" }, { id: "2" }], limit: 2, offset: 0 } },
    { status: 200, body: { collection: {}, items: [{ id: "3" }], limit: 2, offset: 2 } },
  ];
  const ids = [];
  for await (const it of sdk.items.list("posts", { limit: 2, q: "rye" })) ids.push(it.id);
  assert.deepEqual(ids, ["1", "2", "3"]);
  assert.equal(seen.length, 2);
  assert.equal(new URL(seen[1].url, "http://x").searchParams.get("offset"), "2");
  assert.equal(new URL(seen[1].url, "http://x").searchParams.get("q"), "rye");

  fresh();
  script = [
    { status: 200, body: { runs: [{ id: "r1" }], next_cursor: "c2" } },
    { status: 200, body: { runs: [{ id: "r2" }], next_cursor: "" } },
  ];
  const runs = await sdk.runs.list({ state: "success" }).toArray();
  assert.deepEqual(runs.map((r) => r.id), ["r1", "r2"]);
  assert.equal(new URL(seen[1].url, "http://x").searchParams.get("cursor"), "c2");
});

test("runs.wait asks the server to hold each request and returns the finished run", async () => {
  const sdk = fresh();
  script = [
    { status: 200, body: { run: { id: "r", state: "running" } } },
    { status: 200, body: { run: { id: "r", state: "success" } } },
  ];
  const run = await sdk.runs.wait("r", { pollSeconds: 5 });
  assert.equal(run.state, "success");
  assert.equal(seen.length, 2);
  assert.equal(seen[0].headers.prefer, "wait=5");
});

test("an abort while waiting to retry ends the call at once, with the last failure as its cause", async () => {
  const sdk = fresh({ backoffMs: 60_000 });
  script = [{ status: 503, body: { error: "down" } }];
  const ctl = new AbortController();
  const p = sdk.collections.list({ signal: ctl.signal });
  while (seen.length === 0) await new Promise((r) => setTimeout(r, 5)); // why sleep: waits for the request to reach the server
  const t0 = Date.now();
  ctl.abort();
  await assert.rejects(p, (e) => e instanceof APIUserAbortError && e.cause instanceof InternalServerError);
  assert.ok(Date.now() - t0 < 5_000, "did not wait out the backoff");
  assert.equal(seen.length, 1);
});
