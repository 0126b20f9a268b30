// The SDK against a live Atrium (atrium serve --demo), once with the
// memory store and once with PostgreSQL: every interface a website or an
// agency's program uses, as a user would notice it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  Atrium,
  AuthenticationError,
  NotFoundError,
  PermissionDeniedError,
  BadRequestError,
  PreconditionFailedError,
  APIError,
} from "../dist/index.js";
import { admin, startStack } from "./stack.mjs";

for (const [name, base, postgres] of [
  ["memory", 19400, false],
  ["postgres", 19410, true],
]) {
  describe(`live Atrium (${name})`, () => {
    let stack, sdk, reader;
    before(async () => {
      stack = await startStack({ base, postgres });
      sdk = new Atrium({ baseURL: stack.api, apiKey: stack.write });
      reader = new Atrium({ baseURL: stack.api, apiKey: stack.read });
    });
    after(async () => {
      await stack?.stop();
    });

    test("collections and items: create, get, update with If-Match, publish, list every page, delete", async () => {
      const cols = await sdk.collections.list();
      assert.ok(cols.some((c) => c.slug === "posts"), `collections: ${cols.map((c) => c.slug)}`);

      const created = [];
      for (let i = 0; i < 3; i++) {
        const it = await sdk.items.create("posts", { data: { title: `SDK post ${i}`, body: "<p>hi</p>", category: "news" } });
        assert.equal(it.title, `SDK post ${i}`);
        assert.equal(it.is_published, false);
        assert.ok(it.etag, "a created item carries its ETag");
        created.push(it);
      }
      const got = await sdk.items.get("posts", created[0].id);
      assert.equal(got.id, created[0].id);
      const updated = await sdk.items.update("posts", got.id, { data: { title: "SDK post 0, edited" } }, { ifMatch: got.etag });
      assert.equal(updated.title, "SDK post 0, edited");
      await assert.rejects(
        sdk.items.update("posts", got.id, { data: { title: "stale" } }, { ifMatch: got.etag }),
        (e) => e instanceof PreconditionFailedError && e.status === 412,
      );
      const published = await sdk.items.publish("posts", created[1].id);
      assert.equal(published.is_published, true);

      // One page, as asked; then every item, one request per item.
      const page = await sdk.items.list("posts", { limit: 2 });
      assert.equal(page.items.length, 2);
      const all = [];
      for await (const it of sdk.items.list("posts", { limit: 1 })) all.push(it.id);
      for (const c of created) assert.ok(all.includes(c.id), `for await walked ${all.length} items and missed ${c.id}`);
      assert.equal(new Set(all).size, all.length, "no item twice");
      const publishedOnly = await sdk.items.list("posts", { is_published: true }).toArray();
      assert.ok(publishedOnly.every((it) => it.is_published) && publishedOnly.some((it) => it.id === created[1].id));

      await sdk.items.delete("posts", created[2].id);
      await assert.rejects(sdk.items.get("posts", created[2].id), (e) => {
        assert.ok(e instanceof NotFoundError, String(e));
        assert.equal(e.status, 404);
        assert.ok(e.traceId && e.traceId.length > 8, "a 404 carries the trace id");
        assert.ok(e.error.length > 0);
        return true;
      });
    });

    test("revisions and preview links: every revision by cursor, restore, a link made, listed and revoked", async () => {
      const it = await sdk.items.create("posts", { data: { title: "v1" } });
      await sdk.items.update("posts", it.id, { data: { title: "v2" } });
      await sdk.items.update("posts", it.id, { data: { title: "v3" } });
      const revs = await sdk.revisions.list("posts", it.id, { limit: 1 }).toArray();
      assert.deepEqual(revs.map((r) => r.change), ["updated", "updated", "created"]);
      const first = revs.at(-1);
      assert.equal((await sdk.revisions.get("posts", it.id, first.version)).data.title, "v1");
      const restored = await sdk.revisions.restore("posts", it.id, first.version);
      assert.equal(restored.title, "v1");
      const link = await sdk.previews.create("posts", it.id, { expiresInSeconds: 600 });
      assert.ok(link.url, JSON.stringify(link));
      assert.ok((await sdk.previews.list("posts", it.id)).some((l) => l.id === link.id));
      await sdk.previews.revoke(link.id);
      assert.ok(!(await sdk.previews.list("posts", it.id)).some((l) => l.id === link.id));
      await assert.rejects(reader.previews.create("posts", it.id), (e) => e instanceof PermissionDeniedError);
    });

    test("errors: a read key cannot write, a wrong key is refused, bad input names what is allowed", async () => {
      await assert.rejects(reader.items.create("posts", { data: { title: "no" } }), (e) => e instanceof PermissionDeniedError && e.status === 403);
      const stranger = new Atrium({ baseURL: stack.api, apiKey: "atr_nope" });
      await assert.rejects(stranger.collections.list(), (e) => e instanceof AuthenticationError && e.status === 401);
      await assert.rejects(Promise.resolve(sdk.items.list("posts", { order: "no_such_field" })), (e) => e instanceof BadRequestError && /Allowed: /.test(e.error) && e.attempts === 1);
      await assert.rejects(sdk.items.get("no-such-collection", "x"), (e) => e instanceof APIError && e.status === 404);
    });

    test("another tenant's ids are not found", async () => {
      // A second agency with a site and a key of its own, made as an operator would.
      const agency = (await admin(stack, "POST", "/admin/v1/agencies", { name: `Other ${name}` })).agency;
      const site = (await admin(stack, "POST", "/admin/v1/sites", { name: "Other site" })).site;
      await admin(stack, "PATCH", `/admin/v1/sites/${site.id}`, { agency_id: agency.id });
      await admin(stack, "POST", `/admin/v1/sites/${site.id}/collections`, {
        name: "Posts", slug: "posts", fields: [{ key: "title", type: "text", required: true }],
      });
      const key = (await admin(stack, "POST", "/admin/v1/keys", { name: "other", scopes: ["read", "write"], site_id: site.id, agency_id: agency.id })).key;
      const other = new Atrium({ baseURL: stack.api, apiKey: key.secret });
      assert.equal((await other.items.list("posts")).items.length, 0);
      const mine = await sdk.items.create("posts", { data: { title: "mine" } });
      await assert.rejects(other.items.get("posts", mine.id), (e) => e instanceof NotFoundError);
      await assert.rejects(other.items.delete("posts", mine.id), (e) => e instanceof NotFoundError);
      assert.equal((await sdk.items.get("posts", mine.id)).title, "mine", "the other tenant changed nothing");
      const sub = await sdk.actions.submit("generate_gbp_post", stack.client, { topic: "ours" });
      await assert.rejects(other.runs.get(sub.runId), (e) => e instanceof NotFoundError);
      await assert.rejects(other.actions.run("generate_gbp_post", stack.client, { topic: "theirs" }), (e) => e.status === 404 || e.status === 403);
      await assert.rejects(Promise.resolve(other.data.read({ resource: "keywords", client_id: stack.client })), (e) => e.status === 404 || e.status === 403);
      assert.equal((await other.runs.list().toArray()).length, 0, "the other agency sees none of our runs");
    });

    test("actions: run with one idempotency key answers the first run again; submit and runs.wait", async () => {
      const key = crypto.randomUUID();
      const first = await sdk.actions.run("generate_gbp_post", stack.client, { topic: "Rye" }, { idempotencyKey: key });
      assert.equal(first.status, "success", JSON.stringify(first));
      assert.equal(first.replayed, false);
      const again = await sdk.actions.run("generate_gbp_post", stack.client, { topic: "Rye" }, { idempotencyKey: key });
      assert.equal(again.replayed, true);
      assert.equal(again.remaining.ai, first.remaining.ai, "the replay was not charged");

      const sub = await sdk.actions.submit("generate_gbp_post", stack.client, { topic: "Spelt" });
      assert.ok(sub.runId, JSON.stringify(sub));
      const run = await sdk.runs.wait(sub.runId);
      assert.equal(run.state, "success");
      assert.equal(run.id, sub.runId);
      const seen = [];
      for await (const r of sdk.runs.list({ client_id: stack.client, limit: 1 })) seen.push(r.id);
      assert.ok(seen.includes(sub.runId), `runs.list walked ${seen.length} runs by cursor`);
      const typed = await sdk.request("get", "/api/v1/runs/{run_id}", { params: { run_id: sub.runId } });
      assert.equal(typed.data.run.id, sub.runId);
      await assert.rejects(sdk.runs.cancel(sub.runId), (e) => e.status === 409);
      await assert.rejects(reader.actions.run("generate_gbp_post", stack.client, { topic: "x" }), (e) => e instanceof PermissionDeniedError);
    });

    test("data, prospects and deals: for await over every page", async () => {
      const rows = await sdk.data.read({ resource: "keywords", client_id: stack.client, limit: 1 }).toArray();
      assert.equal(rows.length, 3, JSON.stringify(rows));
      const prospects = await sdk.prospects.list({ limit: 1 }).toArray();
      assert.equal(prospects.length, 3);
      const deals = [];
      for await (const d of sdk.deals.list({ limit: 1 })) deals.push(d);
      assert.equal(deals.length, 2);
      const firstPage = await sdk.prospects.list({ limit: 2 });
      assert.equal(firstPage.length, 2);
    });

    test("assets: upload, get, list, update, delete", async () => {
      const png = Uint8Array.from(
        atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
        (c) => c.charCodeAt(0),
      );
      const a = await sdk.assets.upload(png, { filename: "dot.png", contentType: "image/png", alt: "A dot" });
      assert.equal(a.filename, "dot.png");
      assert.equal((await sdk.assets.get(a.id)).alt, "A dot");
      assert.equal((await sdk.assets.update(a.id, { alt: "A pixel" })).alt, "A pixel");
      assert.ok((await sdk.assets.list().toArray()).some((x) => x.id === a.id));
      await sdk.assets.delete(a.id);
      await assert.rejects(sdk.assets.get(a.id), (e) => e instanceof NotFoundError);
    });

    test("webhooks: create (secret once), list, update, delete", async () => {
      const w = await sdk.webhooks.create({ url: "https://hooks.example.com/atrium", events: ["item.created"] });
      assert.match(w.secret ?? "", /^whsec_/);
      assert.ok((await sdk.webhooks.list()).some((x) => x.id === w.id));
      assert.equal((await sdk.webhooks.update(w.id, { enabled: false })).enabled, false);
      await sdk.webhooks.delete(w.id);
      await assert.rejects(sdk.webhooks.get(w.id), (e) => e instanceof NotFoundError);
      assert.ok((await sdk.webhooks.eventTypes()).length > 0);
    });
  });
}
