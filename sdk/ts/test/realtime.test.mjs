// The realtime client against a small fake SSE server speaking the
// protocol of docs/realtime.md (the gateway's route is built beside this
// SDK): the connect event, the subscription POST with the key, events,
// a dropped stream resumed with Last-Event-ID and subscribed again, and
// reset.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Atrium } from "../dist/index.js";

const PORT = 19431;
const streams = []; // {res, lastEventId}
const posts = []; // {auth, body}
let nextClient = 1;
let connectId = ""; // the id the connect event carries, if any
let waiters = [];
const changed = () => {
  for (const w of waiters) w();
  waiters = [];
};
const until = async (cond) => {
  while (!cond()) await new Promise((r) => waiters.push(r));
};

const server = createServer((req, res) => {
  if (req.url !== "/api/public/v1/realtime") {
    res.writeHead(404).end();
    return;
  }
  if (req.method === "GET") {
    if (req.headers["last-event-id"] === "0") {
      // As the gateway: ids are positive; 0 is not one it resumes from.
      res.writeHead(400, { "Content-Type": "application/json" }).end('{"error":"Last-Event-ID \\"0\\" is not an id this stream sent"}');
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
    res.write(`event: connect\n${connectId ? `id: ${connectId}\n` : ""}data: {"client_id":"c${nextClient++}"}\n\n`);
    streams.push({ res, lastEventId: req.headers["last-event-id"] });
    changed();
    return;
  }
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    posts.push({ auth: req.headers.authorization, body: JSON.parse(body) });
    res.writeHead(204).end();
    changed();
  });
});

before(() => new Promise((r) => server.listen(PORT, "127.0.0.1", r)));
after(() => new Promise((r) => server.close(r)));

test("subscribes on connect, receives events, resumes with Last-Event-ID after a drop, and passes reset on", async () => {
  const sdk = new Atrium({ baseURL: `http://127.0.0.1:${PORT}`, apiKey: "atr_pub" });
  const events = [];
  let resets = 0;
  const sub = sdk.realtime.connect({
    subscriptions: ["posts"],
    eventSource: false,
    reconnectMs: 20,
    onEvent: (e) => {
      events.push(e);
      changed();
    },
    onReset: () => {
      resets++;
      changed();
    },
  });
  assert.equal(await sub.ready, "c1");
  assert.deepEqual(posts[0], { auth: "Bearer atr_pub", body: { client_id: "c1", subscriptions: ["posts"] } });

  const s1 = streams[0].res;
  s1.write(`: heartbeat\n\n`);
  s1.write(`id: 7\nevent: posts\ndata: {"action":"create","collection":"posts","item":{"id":"p1","title":"Rye"}}\n\n`);
  s1.write(`id: 8\r\nevent: posts\r\ndata: {"action":"update","collection":"posts",\r\ndata: "item":{"id":"p1","title":"Rye!"}}\r\n\r\n`);
  await until(() => events.length === 2);
  assert.deepEqual(
    events.map((e) => [e.id, e.action, e.collection, e.item.title]),
    [["7", "create", "posts", "Rye"], ["8", "update", "posts", "Rye!"]],
  );
  assert.equal(sub.lastEventId, "8");

  // Subscriptions change: replaced on the server.
  await sub.subscribe(["posts", "assets"]);
  assert.deepEqual(posts[1].body, { client_id: "c1", subscriptions: ["posts", "assets"] });

  // The stream drops: the client reconnects with Last-Event-ID and subscribes the new stream.
  s1.destroy();
  await until(() => streams.length === 2 && posts.length === 3);
  assert.equal(streams[1].lastEventId, "8");
  assert.deepEqual(posts[2].body, { client_id: "c2", subscriptions: ["posts", "assets"] });
  assert.equal(sub.clientId, "c2");
  assert.equal(resets, 0, "a resumed stream needs no refetch");

  streams[1].res.write(`event: reset\ndata: {}\n\n`);
  streams[1].res.write(`id: 12\nevent: posts\ndata: {"action":"delete","collection":"posts","item":{"id":"p1"}}\n\n`);
  await until(() => resets === 1 && events.length === 3);
  assert.equal(events[2].action, "delete");

  sub.close();
  streams[1].res.end();
});

test("too many subscriptions is refused before anything is sent", () => {
  const sdk = new Atrium({ baseURL: `http://127.0.0.1:${PORT}`, apiKey: "k" });
  assert.throws(() => sdk.realtime.connect({ subscriptions: Array.from({ length: 101 }, (_, i) => `posts/${i}`), eventSource: false }), /at most 100/);
  assert.throws(() => sdk.realtime.connect({ subscriptions: [""], eventSource: false }), /subscriptions are strings/);
});

test("a server without the route (404) ends the subscription: ready rejects instead of reconnecting forever", async () => {
  const before = streams.length;
  const sdk = new Atrium({ baseURL: `http://127.0.0.1:${PORT}/elsewhere`, apiKey: "k" });
  const errors = [];
  const sub = sdk.realtime.connect({ subscriptions: ["posts"], eventSource: false, reconnectMs: 10, onError: (e) => errors.push(e) });
  await assert.rejects(sub.ready, /answered 404/);
  assert.equal(errors.length, 1);
  assert.equal(streams.length, before);
});

test("a resume the server refuses (400) starts afresh without Last-Event-ID and tells the caller to refetch", async () => {
  connectId = "0";
  const sdk = new Atrium({ baseURL: `http://127.0.0.1:${PORT}`, apiKey: "k" });
  let resets = 0;
  const sub = sdk.realtime.connect({ subscriptions: ["posts"], eventSource: false, reconnectMs: 10, onReset: () => (resets++, changed()) });
  await sub.ready;
  const n = streams.length;
  streams[n - 1].res.destroy();
  await until(() => resets === 1 && streams.length === n + 1);
  assert.equal(streams[n].lastEventId, undefined);
  sub.close();
  streams[n].res.end();
  connectId = "";
});
