// The realtime client: live updates of a site's collections over
// server-sent events, by the protocol of docs/realtime.md:
//
//   GET  /api/public/v1/realtime    the stream; its first event is
//        `event: connect` with data {"client_id": "..."}
//   POST /api/public/v1/realtime    {"client_id", "subscriptions": [...]},
//        with the key: sets (replaces) what the stream receives (204)
//   then `event: <collection>` with data {"action", "collection", "item"},
//   and `event: reset` when the server cannot resume: refetch.
//
// Two ways to hold the stream, one behaviour:
//   - the runtime's EventSource (browsers; the default where it exists),
//     which reconnects by itself and sends Last-Event-ID;
//   - fetch with a streamed body (Node 20, edge runtimes, or by choice),
//     where this module reconnects with backoff and sends Last-Event-ID.
// Either way, each `connect` (the first and every reconnect's) posts the
// current subscriptions again for the new client id, and a stream that
// had to start over without Last-Event-ID tells the caller to refetch
// (onReset), since events may have been missed.

import type { Transport } from "./core.js";
import { jittered } from "./core.js";

/** A change to one item of a collection. */
export interface RealtimeEvent {
  /** The event's id (what Last-Event-ID resumes after). */
  id: string | undefined;
  /** The SSE event name: the collection's slug. */
  event: string;
  action: "create" | "update" | "delete";
  collection: string;
  /** The item as the key would read it (for a delete, at least its id). */
  item: Record<string, unknown>;
}

/** How a subscription is held. */
export interface RealtimeOptions {
  /** What to receive: "posts" (a collection), "posts/{item_id}" (one item), "assets". */
  subscriptions: string[];
  onEvent?: (ev: RealtimeEvent) => void;
  /** The server could not resume (or the client had to start over): refetch what is shown. */
  onReset?: () => void;
  /** A stream was opened and subscribed; clientId names it. */
  onConnect?: (clientId: string) => void;
  /** A failure the client recovers from by reconnecting (or a subscribe the server refused). */
  onError?: (err: unknown) => void;
  /**
   * The EventSource class to use; false to use fetch. Default: the
   * runtime's EventSource where there is one, else fetch.
   */
  eventSource?: (new (url: string, init?: EventSourceInit) => EventSource) | false;
  /** The first wait before a reconnect made by this client (fetch mode). Default 1 s, doubling to 30 s. */
  reconnectMs?: number;
}

/** An open subscription; close() ends it. */
export interface RealtimeSubscription {
  /** Resolves once the first stream is open and subscribed. */
  readonly ready: Promise<string>;
  /** The current stream's client id. */
  readonly clientId: string | undefined;
  /** The id of the last event received (sent as Last-Event-ID on a reconnect). */
  readonly lastEventId: string | undefined;
  /** Replaces what the stream receives. */
  subscribe(subscriptions: string[]): Promise<void>;
  close(): void;
}

const REALTIME_PATH = "/api/public/v1/realtime";
const MAX_SUBSCRIPTIONS = 100;

function checkSubscriptions(subs: string[]): string[] {
  if (!Array.isArray(subs) || subs.some((s) => typeof s !== "string" || s === "")) {
    throw new TypeError('atrium: subscriptions are strings such as "posts", "posts/{item_id}" or "assets"');
  }
  if (subs.length > MAX_SUBSCRIPTIONS) {
    throw new TypeError(`atrium: at most ${MAX_SUBSCRIPTIONS} subscriptions per stream, not ${subs.length}`);
  }
  return [...subs];
}

/** The SSE event names the subscriptions make the server send. */
function eventNames(subs: string[]): string[] {
  return [...new Set(subs.map((s) => s.split("/")[0]!))];
}

/** The realtime interface of a client. */
export class RealtimeResource {
  constructor(private readonly t: Transport) {}

  /** Opens a stream and subscribes it. */
  connect(opts: RealtimeOptions): RealtimeSubscription {
    return new Connection(this.t, opts);
  }
}

class Connection implements RealtimeSubscription {
  readonly ready: Promise<string>;
  clientId: string | undefined;
  lastEventId: string | undefined;
  private subs: string[];
  private closed = false;
  private resolveReady!: (id: string) => void;
  private rejectReady!: (err: unknown) => void;
  private es: EventSource | undefined;
  private listening = new Set<string>();
  private abort: AbortController | undefined;
  private failures = 0;
  // A stream opened after the first without resuming: events may be lost.
  private needsReset = false;

  constructor(
    private readonly t: Transport,
    private readonly opts: RealtimeOptions,
  ) {
    this.subs = checkSubscriptions(opts.subscriptions);
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // An unawaited ready must not be an unhandled rejection.
    this.ready.catch(() => {});
    const ES = opts.eventSource === undefined ? (globalThis as { EventSource?: typeof EventSource }).EventSource : opts.eventSource;
    if (ES) this.openEventSource(ES);
    else void this.runFetch();
  }

  async subscribe(subscriptions: string[]): Promise<void> {
    this.subs = checkSubscriptions(subscriptions);
    this.listen();
    if (this.clientId) await this.post(this.clientId);
  }

  close(): void {
    this.closed = true;
    this.es?.close();
    this.abort?.abort();
    this.rejectReady(new Error("atrium: the realtime subscription was closed"));
  }

  private async post(clientId: string): Promise<void> {
    await this.t.request("POST", REALTIME_PATH, {
      body: { client_id: clientId, subscriptions: this.subs },
      idempotent: true, // it replaces the subscriptions: sending it twice is harmless
    });
  }

  private async onConnect(data: string): Promise<void> {
    let id: unknown;
    try {
      id = (JSON.parse(data) as { client_id?: unknown }).client_id;
    } catch {
      id = undefined;
    }
    if (typeof id !== "string" || id === "") {
      this.opts.onError?.(new Error(`atrium: the realtime connect event has no client_id: ${data}`));
      return;
    }
    this.clientId = id;
    try {
      await this.post(id);
    } catch (err) {
      this.opts.onError?.(err);
      this.rejectReady(err);
      return;
    }
    this.failures = 0;
    if (this.needsReset) {
      this.needsReset = false;
      this.opts.onReset?.();
    }
    this.opts.onConnect?.(id);
    this.resolveReady(id);
  }

  private dispatch(event: string, data: string, id: string | undefined): void {
    if (id !== undefined && id !== "") this.lastEventId = id;
    if (event === "connect") {
      void this.onConnect(data);
      return;
    }
    if (event === "reset") {
      this.opts.onReset?.();
      return;
    }
    if (event === "heartbeat" || event === "ping") return;
    let payload: { action?: unknown; collection?: unknown; item?: unknown };
    try {
      payload = JSON.parse(data);
    } catch {
      this.opts.onError?.(new Error(`atrium: a realtime ${event} event whose data is not JSON: ${data.slice(0, 200)}`));
      return;
    }
    const action = payload.action;
    if (action !== "create" && action !== "update" && action !== "delete") return;
    this.opts.onEvent?.({
      id: id || undefined,
      event,
      action,
      collection: typeof payload.collection === "string" ? payload.collection : event,
      item: payload.item && typeof payload.item === "object" ? (payload.item as Record<string, unknown>) : {},
    });
  }

  // EventSource mode: the runtime reconnects, with Last-Event-ID.
  private openEventSource(ES: new (url: string, init?: EventSourceInit) => EventSource): void {
    const es = new ES(this.t.url(REALTIME_PATH));
    this.es = es;
    this.listening = new Set();
    es.addEventListener("connect", (e) => this.dispatch("connect", (e as MessageEvent).data, (e as MessageEvent).lastEventId));
    es.addEventListener("reset", (e) => this.dispatch("reset", (e as MessageEvent).data, (e as MessageEvent).lastEventId));
    es.addEventListener("message", (e) => this.dispatch("message", (e as MessageEvent).data, (e as MessageEvent).lastEventId));
    this.listen();
    es.addEventListener("error", (e) => {
      if (this.closed) return;
      this.opts.onError?.(e);
      // CLOSED: the runtime gave up (an HTTP error, a wrong type). A new
      // EventSource cannot send Last-Event-ID, so the caller refetches.
      if (es.readyState === 2) {
        this.failures++;
        this.needsReset = true;
        const wait = jittered(this.opts.reconnectMs ?? 1000, this.failures);
        setTimeout(() => {
          if (!this.closed) this.openEventSource(ES);
        }, wait);
      }
    });
  }

  private listen(): void {
    const es = this.es;
    if (!es) return;
    for (const name of eventNames(this.subs)) {
      if (this.listening.has(name) || name === "connect" || name === "reset" || name === "message") continue;
      this.listening.add(name);
      es.addEventListener(name, (e) => this.dispatch(name, (e as MessageEvent).data, (e as MessageEvent).lastEventId));
    }
  }

  // fetch mode: this client reconnects, with Last-Event-ID.
  private async runFetch(): Promise<void> {
    let retryMs = this.opts.reconnectMs ?? 1000;
    let opened = false;
    while (!this.closed) {
      const ctl = new AbortController();
      this.abort = ctl;
      try {
        const headers: Record<string, string> = { Accept: "text/event-stream" };
        if (this.lastEventId) headers["Last-Event-ID"] = this.lastEventId;
        else if (opened) this.needsReset = true;
        const res = await this.t.fetch(this.t.url(REALTIME_PATH), { headers, signal: ctl.signal, cache: "no-store" });
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => "");
          const err = new Error(`atrium: GET ${REALTIME_PATH} answered ${res.status}: ${text.slice(0, 300)}`);
          // A 4xx other than 408 and 429 does not change on a retry (a
          // malformed Last-Event-ID, a route this server does not have).
          if (res.status === 400 && headers["Last-Event-ID"]) {
            // The server would not resume from this id (too old, or one it
            // does not take): start afresh, and have the caller refetch.
            this.lastEventId = undefined;
            this.needsReset = true;
            this.opts.onError?.(err);
            continue;
          }
          if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
            this.closed = true;
            this.opts.onError?.(err);
            this.rejectReady(err);
            return;
          }
          throw err;
        }
        opened = true;
        const server = await this.read(res.body, (ms) => (retryMs = ms));
        if (server !== undefined) retryMs = server;
      } catch (err) {
        if (this.closed) return;
        this.opts.onError?.(err);
      }
      if (this.closed) return;
      this.failures++;
      await new Promise((r) => setTimeout(r, Math.max(retryMs, jittered(this.opts.reconnectMs ?? 1000, this.failures))));
    }
  }

  /** Reads one stream to its end, dispatching events (the EventSource parsing rules). */
  private async read(body: ReadableStream<Uint8Array>, setRetry: (ms: number) => void): Promise<number | undefined> {
    const reader = body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    let event = "";
    let data: string[] = [];
    let id: string | undefined;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return undefined;
      buf += dec.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          if (data.length > 0 || event !== "") {
            if (id !== undefined) this.lastEventId = id;
            this.dispatch(event || "message", data.join("\n"), id ?? this.lastEventId);
          }
          event = "";
          data = [];
          id = undefined;
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: a heartbeat
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? "" : line.slice(colon + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "event") event = v;
        else if (field === "data") data.push(v);
        else if (field === "id" && !v.includes("\0")) id = v;
        else if (field === "retry" && /^\d+$/.test(v)) setRetry(Number(v));
      }
    }
  }
}
