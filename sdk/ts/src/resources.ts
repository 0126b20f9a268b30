// The API's interfaces, one class each, as the Go SDK's services
// (sdk/go): what they send and how they page is the same, so that a
// program moved from one SDK to the other behaves alike.

import type { APIResponse, RequestOptions, Transport } from "./core.js";
import { newIdempotencyKey, path } from "./core.js";
import { NotFoundError } from "./errors.js";
import type { components } from "./generated/public.js";
import type { PageRequest } from "./pagination.js";
import { cursorPages, offsetPages } from "./pagination.js";

/** Per-call options every method takes. */
export type CallOptions = Pick<RequestOptions, "signal" | "timeoutMs" | "maxRetries" | "headers">;

// ---- collections and items ------------------------------------------------

export interface Field {
  key: string;
  type: string;
  required: boolean;
  options?: string[];
  target?: string;
  max_length?: number;
  [k: string]: unknown;
}

export interface Collection {
  name: string;
  slug: string;
  fields: Field[];
  is_system: boolean;
  [k: string]: unknown;
}

/** An item: its system fields, and the collection's fields beside them. */
export interface Item {
  id: string;
  is_published: boolean;
  publish_at?: string | null;
  unpublish_at?: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

/** An item as a write answers it, with its ETag (for If-Match). */
export type ItemWithETag = Item & { etag: string | undefined };

export interface ItemQuery {
  limit?: number;
  offset?: number;
  is_published?: boolean;
  filter_field?: string;
  filter_value?: string;
  order?: string;
  direction?: "asc" | "desc";
  q?: string;
  expand?: string[];
  locale?: string;
  [param: string]: unknown;
}

export interface ItemPage {
  collection: Collection;
  items: Item[];
  limit: number;
  offset: number;
}

export interface ItemWrite {
  /** The collection's fields to set. */
  data: Record<string, unknown>;
  is_published?: boolean;
  publish_at?: string | null;
  unpublish_at?: string | null;
}

export interface WriteOptions extends CallOptions {
  /** Refuse the write (412) unless the item is still at this ETag. */
  ifMatch?: string;
  /** The locale to write (sites with several locales). */
  locale?: string;
}

/** The largest page the SDK asks for when it walks a list of items. */
const ITEM_PAGE = 1000;
const COLLECTIONS = "/api/public/v1/collections";

function etagOf(h: Headers): string | undefined {
  return h.get("ETag")?.replace(/^W\//, "").replace(/"/g, "") || undefined;
}

function ifMatch(etag: string): string {
  return etag.startsWith('"') || etag === "*" ? etag : `"${etag}"`;
}

function toQuery(q: Record<string, unknown> | undefined): Record<string, string | number | boolean | string[] | undefined> {
  const out: Record<string, string | number | boolean | string[] | undefined> = {};
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) out[k] = v.map(String);
    else if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = v;
    else throw new TypeError(`atrium: the query parameter ${k} must be a string, number, boolean or array, not ${typeof v}`);
  }
  return out;
}

export class CollectionsResource {
  constructor(private readonly t: Transport) {}

  /** The site's collections and their fields. */
  async list(opts?: CallOptions): Promise<Collection[]> {
    const r = await this.t.request<{ collections: Collection[] }>("GET", COLLECTIONS, { ...opts });
    return r.data.collections ?? [];
  }
}

export class ItemsResource {
  constructor(private readonly t: Transport) {}

  /**
   * A collection's items. `await` it for one page (limit and offset as
   * given); `for await` over it for every item from the offset on.
   */
  list(collection: string, query: ItemQuery = {}, opts?: CallOptions): PageRequest<ItemPage, Item> {
    const { limit, offset, ...rest } = query;
    const fetchPage = async (l: number, o: number) =>
      (await this.t.request<ItemPage>("GET", COLLECTIONS + path(collection), { ...opts, query: toQuery({ ...rest, limit: l, offset: o || undefined }) })).data;
    return offsetPages(limit ?? ITEM_PAGE, offset ?? 0, fetchPage, (p) => p.items);
  }

  /** One item, with its ETag. */
  async get(collection: string, id: string, query: { expand?: string[]; locale?: string } = {}, opts?: CallOptions): Promise<ItemWithETag> {
    const r = await this.t.request<{ item: Item }>("GET", COLLECTIONS + path(collection, id), { ...opts, query: toQuery(query) });
    return { ...r.data.item, etag: etagOf(r.headers) };
  }

  /** Creates an item. A create is not retried once it may have reached Atrium (it could create two). */
  async create(collection: string, w: ItemWrite, opts: WriteOptions = {}): Promise<ItemWithETag> {
    const { ifMatch: _ignored, locale, ...call } = opts;
    const r = await this.t.request<{ item: Item }>("POST", COLLECTIONS + path(collection), {
      ...call,
      query: toQuery({ locale }),
      body: { ...w, data: w.data ?? {} },
    });
    return { ...r.data.item, etag: etagOf(r.headers) };
  }

  /** Changes an item's fields (those given). With ifMatch it is retried safely. */
  async update(collection: string, id: string, w: Partial<ItemWrite>, opts: WriteOptions = {}): Promise<ItemWithETag> {
    const { ifMatch: etag, locale, headers, ...call } = opts;
    const r = await this.t.request<{ item: Item }>("PATCH", COLLECTIONS + path(collection, id), {
      ...call,
      query: toQuery({ locale }),
      headers: { ...headers, ...(etag ? { "If-Match": ifMatch(etag) } : {}) },
      body: { ...w, data: w.data ?? {} },
    });
    return { ...r.data.item, etag: etagOf(r.headers) };
  }

  /** Publishes an item now. */
  publish(collection: string, id: string, opts?: WriteOptions): Promise<ItemWithETag> {
    return this.update(collection, id, { is_published: true }, opts);
  }

  /** Unpublishes an item: a published-only key no longer sees it. */
  unpublish(collection: string, id: string, opts?: WriteOptions): Promise<ItemWithETag> {
    return this.update(collection, id, { is_published: false }, opts);
  }

  /** Deletes an item. A 404 after a retry means an earlier attempt deleted it, and is success. */
  async delete(collection: string, id: string, opts: WriteOptions = {}): Promise<void> {
    const { ifMatch: etag, locale: _locale, headers, ...call } = opts;
    await goneOnRetry(
      this.t.request("DELETE", COLLECTIONS + path(collection, id), {
        ...call,
        headers: { ...headers, ...(etag ? { "If-Match": ifMatch(etag) } : {}) },
      }),
    );
  }
}

/** A revision of an item (the generated document's ItemRevision). */
export type ItemRevision = components["schemas"]["ItemRevision"];
/** A preview link of an item (the generated document's PreviewLink). */
export type PreviewLink = components["schemas"]["PreviewLink"];

export interface RevisionPage {
  revisions: ItemRevision[];
  next_cursor?: string;
}

export class RevisionsResource {
  constructor(private readonly t: Transport) {}

  /** An item's revisions, newest first: `await` for a page, `for await` for all (by cursor). */
  list(collection: string, id: string, query: { limit?: number; cursor?: string } = {}, opts?: CallOptions): PageRequest<RevisionPage, ItemRevision> {
    return cursorPages(
      query.cursor,
      async (c) =>
        (await this.t.request<RevisionPage>("GET", COLLECTIONS + path(collection, id, "revisions"), { ...opts, query: { limit: query.limit, cursor: c } })).data,
      (p) => p.revisions ?? [],
      (p) => p.next_cursor,
    );
  }

  /** One revision. */
  async get(collection: string, id: string, version: number, opts?: CallOptions): Promise<ItemRevision> {
    return (await this.t.request<{ revision: ItemRevision }>("GET", COLLECTIONS + path(collection, id, "revisions", String(version)), { ...opts })).data
      .revision;
  }

  /** Writes a revision's data back as a new version of the item. With ifMatch it is retried safely. */
  async restore(collection: string, id: string, version: number, opts: WriteOptions = {}): Promise<ItemWithETag> {
    const { ifMatch: etag, locale: _locale, headers, ...call } = opts;
    const r = await this.t.request<{ item: Item }>("POST", COLLECTIONS + path(collection, id, "revisions", String(version), "restore"), {
      ...call,
      headers: { ...headers, ...(etag ? { "If-Match": ifMatch(etag) } : {}) },
      body: {},
    });
    return { ...r.data.item, etag: etagOf(r.headers) };
  }
}

export class PreviewLinksResource {
  constructor(private readonly t: Transport) {}

  /** A link that shows the item's draft to whoever has it, until it expires. */
  async create(collection: string, itemId: string, opts: CallOptions & { expiresInSeconds?: number } = {}): Promise<PreviewLink> {
    const { expiresInSeconds, ...call } = opts;
    const body = expiresInSeconds ? { expires_in_seconds: expiresInSeconds } : {};
    return (
      await this.t.request<{ preview_link: PreviewLink }>("POST", COLLECTIONS + path(collection, itemId, "preview-links"), { ...call, body })
    ).data.preview_link;
  }

  /** The live links of a collection, or of one item. */
  async list(collection: string, itemId?: string, opts?: CallOptions): Promise<PreviewLink[]> {
    const r = await this.t.request<{ preview_links: PreviewLink[] }>("GET", "/api/public/v1/preview-links", {
      ...opts,
      query: { collection, item_id: itemId },
    });
    return r.data.preview_links ?? [];
  }

  /** Revokes a link at once. */
  async revoke(id: string, opts?: CallOptions): Promise<void> {
    await goneOnRetry(this.t.request("DELETE", "/api/public/v1/preview-links" + path(id), { ...opts }));
  }
}

async function goneOnRetry(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof NotFoundError && err.attempts > 1) return;
    throw err;
  }
}

// ---- assets ---------------------------------------------------------------

export interface Asset {
  id: string;
  filename: string;
  content_type: string;
  size: number;
  width?: number | null;
  height?: number | null;
  alt: string;
  sha256: string;
  url: string;
  created_at: string;
  updated_at: string;
}

export interface AssetUpload {
  filename: string;
  contentType?: string;
  alt?: string;
}

const ASSETS = "/api/public/v1/assets";
const ASSET_PAGE = 1000;

export class AssetsResource {
  constructor(private readonly t: Transport) {}

  /** Uploads a file (its bytes as a Blob, ArrayBuffer, Uint8Array or string). */
  async upload(body: Blob | ArrayBuffer | Uint8Array | string, u: AssetUpload, opts?: CallOptions): Promise<Asset> {
    const contentType = u.contentType ?? (typeof Blob !== "undefined" && body instanceof Blob && body.type ? body.type : "application/octet-stream");
    const r = await this.t.request<{ asset: Asset }>("POST", ASSETS, {
      ...opts,
      query: toQuery({ filename: u.filename, alt: u.alt || undefined }),
      rawBody: body,
      contentType,
    });
    return r.data.asset;
  }

  /** The site's assets: `await` for a page, `for await` for all. */
  list(query: { limit?: number; offset?: number } = {}, opts?: CallOptions): PageRequest<Asset[], Asset> {
    const fetchPage = async (limit: number, offset: number) =>
      (await this.t.request<{ assets: Asset[] }>("GET", ASSETS, { ...opts, query: { limit, offset: offset || undefined } })).data.assets ?? [];
    return offsetPages(query.limit ?? ASSET_PAGE, query.offset ?? 0, fetchPage, (p) => p);
  }

  async get(id: string, opts?: CallOptions): Promise<Asset> {
    return (await this.t.request<{ asset: Asset }>("GET", ASSETS + path(id), { ...opts })).data.asset;
  }

  /** Changes an asset's alt text or filename (it replaces them: safe to retry). */
  async update(id: string, patch: { alt?: string; filename?: string }, opts?: CallOptions): Promise<Asset> {
    return (await this.t.request<{ asset: Asset }>("PATCH", ASSETS + path(id), { ...opts, body: patch, idempotent: true })).data.asset;
  }

  async delete(id: string, opts?: CallOptions): Promise<void> {
    await goneOnRetry(this.t.request("DELETE", ASSETS + path(id), { ...opts }));
  }
}

// ---- actions and runs -----------------------------------------------------

export interface Credits {
  ai: number;
  data: number;
}

export interface Action {
  name: string;
  description: string;
  fields: Record<string, unknown>[];
  cost: Credits;
  writes: string;
  refreshes: boolean;
  execution?: string;
  typical_seconds?: number;
  input_schema?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The outcome of an action. */
export interface ActionResult {
  action: string;
  client_id: string;
  /** success or error (a failed run is still answered, and not charged). */
  status: string;
  status_code: number;
  data: Record<string, unknown>;
  /** The agency's balance after the run (from the answer's headers). */
  remaining: Credits;
  /** The answer of an earlier request with the same key, not a new run. */
  replayed: boolean;
  /** The Idempotency-Key the request carried (to send the same action again later). */
  idempotencyKey: string;
}

/** A submitted action: its run's id while it runs, or its result once finished. */
export interface Submission {
  runId: string | undefined;
  /** queued or running while result is undefined. */
  state: string;
  result: ActionResult | undefined;
  idempotencyKey: string;
}

export interface Run {
  id: string;
  action: string;
  client_id: string;
  /** queued, running, success, error or canceled. */
  state: string;
  status_code: number;
  data: Record<string, unknown> | null;
  credits: { reserved: Credits; spent: Credits };
  idempotency_key: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface RunOptions extends CallOptions {
  /** Send the action with this key instead of a fresh one: its first run answers again. */
  idempotencyKey?: string;
}

export interface SubmitOptions extends RunOptions {
  /** Wait up to this many seconds (1 to 60) for the run to finish before answering. */
  waitSeconds?: number;
}

const RUNS = "/api/v1/runs";

function actionBody(action: string, clientId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, action, client_id: clientId };
}

function result<T extends Record<string, unknown>>(r: APIResponse<T>, key: string): ActionResult {
  const d = r.data as unknown as Omit<ActionResult, "remaining" | "replayed" | "idempotencyKey">;
  return {
    ...d,
    remaining: {
      ai: Number(r.headers.get("Atrium-AI-Credits-Remaining") ?? 0),
      data: Number(r.headers.get("Atrium-Data-Credits-Remaining") ?? 0),
    },
    replayed: r.headers.get("Idempotent-Replayed") === "true",
    idempotencyKey: key,
  };
}

function clampWait(s: number): number {
  return Math.max(1, Math.min(60, Math.round(s)));
}

export class ActionsResource {
  constructor(private readonly t: Transport) {}

  /** Every action: its fields, cost and record. */
  async list(opts?: CallOptions): Promise<Action[]> {
    return (await this.t.request<{ actions: Action[] }>("GET", "/api/v1/actions", { ...opts })).data.actions ?? [];
  }

  /** The agency's balance. */
  async credits(opts?: CallOptions): Promise<Credits> {
    return (await this.t.request<{ balance: Credits }>("GET", "/api/v1/credits", { ...opts })).data.balance;
  }

  /**
   * Runs action for a client and answers its outcome. The request carries
   * an Idempotency-Key, the same on every retry, so that however often it
   * is sent the action runs (and is charged) once.
   */
  async run(action: string, clientId: string, fields: Record<string, unknown> = {}, opts: RunOptions = {}): Promise<ActionResult> {
    const { idempotencyKey, headers, ...call } = opts;
    const key = idempotencyKey ?? newIdempotencyKey();
    const r = await this.t.request<Record<string, unknown>>("POST", "/api/v1/data", {
      ...call,
      headers: { ...headers, "Idempotency-Key": key },
      body: actionBody(action, clientId, fields),
      idempotent: true,
    });
    return result(r, key);
  }

  /**
   * Queues action (Prefer: respond-async): the answer comes at once with
   * the run's id; runs.wait() or runs.get() give the outcome.
   */
  async submit(action: string, clientId: string, fields: Record<string, unknown> = {}, opts: SubmitOptions = {}): Promise<Submission> {
    const { idempotencyKey, headers, waitSeconds, ...call } = opts;
    const key = idempotencyKey ?? newIdempotencyKey();
    let prefer = "respond-async";
    if (waitSeconds && waitSeconds > 0) prefer += `, wait=${clampWait(waitSeconds)}`;
    const r = await this.t.request<Record<string, unknown>>("POST", "/api/v1/data", {
      ...call,
      headers: { ...headers, "Idempotency-Key": key, Prefer: prefer },
      body: actionBody(action, clientId, fields),
      idempotent: true,
    });
    const res = result(r, key);
    if (r.status === 202) {
      const d = (r.data.data ?? {}) as { run_id?: string; state?: string };
      return { runId: d.run_id, state: d.state ?? "queued", result: undefined, idempotencyKey: key };
    }
    return { runId: undefined, state: res.status, result: res, idempotencyKey: key };
  }
}

export interface RunQuery {
  client_id?: string;
  state?: string;
  action?: string;
  limit?: number;
  cursor?: string;
}

export interface RunPage {
  runs: Run[];
  next_cursor?: string;
}

export interface WaitOptions extends CallOptions {
  /** How long the server holds each request (1 to 60 s). Default 20. */
  pollSeconds?: number;
}

export function isFinished(run: Pick<Run, "state">): boolean {
  return run.state !== "queued" && run.state !== "running";
}

export class RunsResource {
  constructor(private readonly t: Transport) {}

  async get(id: string, opts?: CallOptions): Promise<Run> {
    return (await this.t.request<{ run: Run }>("GET", RUNS + path(id), { ...opts })).data.run;
  }

  /**
   * The run once it has finished: each request asks the server to hold it
   * until the run ends (Prefer: wait), so it costs one request per poll
   * interval rather than a busy loop. Ends with the signal.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<Run> {
    const { pollSeconds, headers, ...call } = opts;
    const hold = clampWait(pollSeconds ?? 20);
    for (;;) {
      const r = await this.t.request<{ run: Run }>("GET", RUNS + path(id), {
        ...call,
        headers: { ...headers, Prefer: `wait=${hold}` },
        // The server holds the request up to `hold` seconds: allow for it.
        timeoutMs: Math.max(call.timeoutMs ?? this.t.timeoutMs, hold * 1000 + 10_000),
      });
      if (isFinished(r.data.run)) return r.data.run;
    }
  }

  /** Cancels a queued or running run (a finished one is a ConflictError). */
  async cancel(id: string, opts?: CallOptions): Promise<Run> {
    return (await this.t.request<{ run: Run }>("POST", RUNS + path(id, "cancel"), { ...opts, body: {}, idempotent: true })).data.run;
  }

  /** The agency's runs, newest first: `await` for a page, `for await` for all. */
  list(query: RunQuery = {}, opts?: CallOptions): PageRequest<RunPage, Run> {
    const { cursor, limit, ...rest } = query;
    return cursorPages(
      cursor,
      async (c) => (await this.t.request<RunPage>("GET", RUNS, { ...opts, query: toQuery({ ...rest, limit: limit ?? 100, cursor: c }) })).data,
      (p) => p.runs ?? [],
      (p) => p.next_cursor,
    );
  }
}

// ---- data -----------------------------------------------------------------

export type Row = Record<string, unknown>;

export interface DataQuery {
  resource: string;
  client_id?: string;
  limit?: number;
  offset?: number;
  cursor?: string;
  order?: string;
  direction?: "asc" | "desc";
  filter_field?: string;
  filter_value?: string;
  [param: string]: unknown;
}

export interface DataPage {
  resource: string;
  client_id: string;
  data: Row[];
  pagination: { total: number; limit: number; offset: number; has_more: boolean; next_cursor?: string };
}

export class DataResource {
  constructor(private readonly t: Transport) {}

  /** A dataset's rows for a client: `await` for a page, `for await` for every row (by cursor). */
  read(query: DataQuery, opts?: CallOptions): PageRequest<DataPage, Row> {
    if (!query || typeof query.resource !== "string" || query.resource === "") {
      throw new TypeError("atrium: data.read needs a resource (the dataset's name)");
    }
    const { cursor, ...rest } = query;
    return cursorPages(
      cursor,
      async (c) => (await this.t.request<DataPage>("GET", "/api/v1/data", { ...opts, query: toQuery({ ...rest, cursor: c }) })).data,
      (p) => p.data ?? [],
      (p) => (p.pagination?.has_more ? p.pagination.next_cursor : undefined),
    );
  }
}

// ---- webhooks -------------------------------------------------------------

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  owner: string;
  created_at: string;
  updated_at: string;
  /** The whsec_ secret: only in the answers of create and rotateSecret. */
  secret?: string;
  disabled_reason?: string | null;
  failing_since?: string | null;
  previous_secret_expires_at?: string | null;
}

export interface Delivery {
  id: string;
  event_id: string;
  status: string;
  [k: string]: unknown;
}

export interface DeliveryPage {
  deliveries: Delivery[];
  next_cursor?: string;
}

const WEBHOOKS = "/api/v1/webhooks";

export class WebhooksResource {
  constructor(private readonly t: Transport) {}

  /** Registers an endpoint; the answer carries its secret once. */
  async create(w: { url: string; events: string[]; description?: string; enabled?: boolean }, opts?: CallOptions): Promise<Webhook> {
    return (await this.t.request<{ webhook: Webhook }>("POST", WEBHOOKS, { ...opts, body: w })).data.webhook;
  }

  async list(opts?: CallOptions): Promise<Webhook[]> {
    return (await this.t.request<{ webhooks: Webhook[] }>("GET", WEBHOOKS, { ...opts })).data.webhooks ?? [];
  }

  async get(id: string, opts?: CallOptions): Promise<Webhook> {
    return (await this.t.request<{ webhook: Webhook }>("GET", WEBHOOKS + path(id), { ...opts })).data.webhook;
  }

  async update(id: string, patch: { url?: string; events?: string[]; description?: string; enabled?: boolean }, opts?: CallOptions): Promise<Webhook> {
    return (await this.t.request<{ webhook: Webhook }>("PATCH", WEBHOOKS + path(id), { ...opts, body: patch, idempotent: true })).data.webhook;
  }

  async delete(id: string, opts?: CallOptions): Promise<void> {
    await goneOnRetry(this.t.request("DELETE", WEBHOOKS + path(id), { ...opts }));
  }

  /** A new secret; the previous one stays valid for previousExpiresInSeconds. */
  async rotateSecret(id: string, previousExpiresInSeconds: number, opts?: CallOptions): Promise<Webhook> {
    return (
      await this.t.request<{ webhook: Webhook }>("POST", WEBHOOKS + path(id, "rotate-secret"), {
        ...opts,
        body: { previous_expires_in_seconds: previousExpiresInSeconds },
      })
    ).data.webhook;
  }

  /** Sends a test event to the endpoint now. */
  async test(id: string, opts?: CallOptions): Promise<Delivery> {
    return (await this.t.request<{ delivery: Delivery }>("POST", WEBHOOKS + path(id, "test"), { ...opts, body: {} })).data.delivery;
  }

  /** The endpoint's deliveries, newest first: `await` for a page, `for await` for all. */
  deliveries(id: string, query: { status?: string; limit?: number; cursor?: string } = {}, opts?: CallOptions): PageRequest<DeliveryPage, Delivery> {
    const { cursor, limit, status } = query;
    return cursorPages(
      cursor,
      async (c) =>
        (await this.t.request<DeliveryPage>("GET", WEBHOOKS + path(id, "deliveries"), { ...opts, query: { status, limit: limit ?? 100, cursor: c } })).data,
      (p) => p.deliveries ?? [],
      (p) => p.next_cursor,
    );
  }

  async retryDelivery(id: string, deliveryId: string, opts?: CallOptions): Promise<Delivery> {
    return (await this.t.request<{ delivery: Delivery }>("POST", WEBHOOKS + path(id, "deliveries", deliveryId, "retry"), { ...opts, body: {} })).data
      .delivery;
  }

  /** Delivers again the events since (and until) a time; answers how many. */
  async recover(id: string, since: string, until?: string, opts?: CallOptions): Promise<number> {
    const r = await this.t.request<{ recovered: number }>("POST", WEBHOOKS + path(id, "recover"), {
      ...opts,
      body: until ? { since, until } : { since },
      idempotent: true,
    });
    return r.data.recovered ?? 0;
  }

  async eventTypes(opts?: CallOptions): Promise<Record<string, unknown>[]> {
    return (await this.t.request<{ event_types: Record<string, unknown>[] }>("GET", "/api/v1/event-types", { ...opts })).data.event_types ?? [];
  }
}

// ---- CRM lists ------------------------------------------------------------

export interface Prospect {
  id: string;
  business_name: string;
  website_url: string;
  domain: string;
  industry: string;
  health_score: number;
  lead_score: number;
  pipeline_stage: string;
  created_at: string;
  updated_at: string;
  [k: string]: unknown;
}

export interface Deal {
  id: string;
  title: string;
  stage: string;
  value: number;
  currency: string;
  expected_close_date: string;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  [k: string]: unknown;
}

/** The largest page of the CRM lists. */
const CRM_PAGE = 200;

function crmList<T>(t: Transport, route: string, query: { limit?: number; offset?: number }, opts?: CallOptions): PageRequest<T[], T> {
  const fetchPage = async (limit: number, offset: number) =>
    (await t.request<{ data: T[] }>("GET", route, { ...opts, query: { limit, offset: offset || undefined } })).data.data ?? [];
  return offsetPages(query.limit ?? CRM_PAGE, query.offset ?? 0, fetchPage, (p) => p);
}

export class ProspectsResource {
  constructor(private readonly t: Transport) {}
  /** The agency's prospects: `await` for a page, `for await` for all. */
  list(query: { limit?: number; offset?: number } = {}, opts?: CallOptions): PageRequest<Prospect[], Prospect> {
    return crmList<Prospect>(this.t, "/api/v1/prospects", query, opts);
  }
}

export class DealsResource {
  constructor(private readonly t: Transport) {}
  /** The agency's deals: `await` for a page, `for await` for all. */
  list(query: { limit?: number; offset?: number } = {}, opts?: CallOptions): PageRequest<Deal[], Deal> {
    return crmList<Deal>(this.t, "/api/v1/deals", query, opts);
  }
}
