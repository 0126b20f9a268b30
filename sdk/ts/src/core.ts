// The transport: one place that sends a request and retries it exactly as
// Atrium's API documentation advises and the Go SDK (sdk/go/client.go)
// does, so that the two SDKs behave alike:
//
//   - Reads, PUT, DELETE and actions (which carry an Idempotency-Key) are
//     retried on a connection error, a time-out, 408, 429 and any 5xx.
//   - Other writes (POST and PATCH without If-Match) are retried only when
//     they cannot have reached the data: the connection was refused, or
//     Atrium answered 429 (the gateway's rate limit, before any service),
//     502 or 503 (answered before a service changed anything).
//   - At most maxRetries+1 attempts, waiting backoffMs doubling after each
//     with jitter (between half and all of it), capped at 30 s, or the
//     answer's Retry-After when it asks for longer (also capped).
//   - Each attempt has its own time-out (an AbortSignal); the caller's
//     signal ends everything at once and is never retried.
//
// It uses only fetch, AbortController, Headers and TextEncoder: no Node
// API, so the same build runs in Node 20+, browsers and edge runtimes.

import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  TRACE_HEADER,
} from "./errors.js";

/** The SDK's version, sent in its User-Agent (where the runtime allows). */
export const VERSION = "0.1.0";

/** Defaults of the client's behaviour (Atrium's retry advice). */
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_BACKOFF_MS = 250;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** maxWaitMs bounds one wait between attempts, Retry-After included. */
export const MAX_WAIT_MS = 30_000;

export type QueryValue = string | number | boolean | undefined | null | readonly (string | number)[];
export type Query = Record<string, QueryValue>;

/** How a client is made. */
export interface ClientOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080. */
  baseURL: string;
  /** An API key (`Authorization: Bearer <key>`). */
  apiKey?: string;
  /** How many times a failed request is sent again at most. Default 4 (5 attempts). */
  maxRetries?: number;
  /** The first wait between attempts, doubled after each. Default 250 ms. */
  backoffMs?: number;
  /** The time-out of each attempt. Default 30 s. */
  timeoutMs?: number;
  /** The fetch to use (a test's, or an instrumented one). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** Per-request settings. */
export interface RequestOptions {
  query?: Query;
  /** A JSON body (encoded once, sent again as is on each retry). */
  body?: unknown;
  /** A body sent as is (a file's bytes), with contentType. */
  rawBody?: Blob | ArrayBuffer | Uint8Array | string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Ends the request (and its retries) when aborted. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  /**
   * The request may be sent again whatever happened to the last attempt.
   * Default: true for GET, HEAD, PUT, DELETE and a request with an
   * Idempotency-Key or If-Match header; false otherwise.
   */
  idempotent?: boolean;
}

/** A successful answer. */
export interface APIResponse<T> {
  data: T;
  status: number;
  headers: Headers;
  /** How many times the request was sent. */
  attempts: number;
}

/** Sends requests with the client's retries. */
export class Transport {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
  readonly headers: Record<string, string>;

  constructor(opts: ClientOptions) {
    if (!opts || typeof opts.baseURL !== "string" || opts.baseURL === "") {
      throw new TypeError("atrium: baseURL is required, e.g. http://127.0.0.1:8080");
    }
    this.baseURL = opts.baseURL.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.maxRetries = Math.max(0, opts.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.backoffMs = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== "function") {
      throw new TypeError("atrium: no fetch in this runtime; pass one as the fetch option");
    }
    // Called unbound, a browser's fetch throws "Illegal invocation".
    this.fetch = (input, init) => f(input, init);
    this.headers = { ...opts.headers };
  }

  /** The URL of path with query (undefined and null values left out). */
  url(path: string, query?: Query): string {
    let u = this.baseURL + path;
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) {
        if (v.length > 0) q.set(k, v.join(","));
      } else {
        q.set(k, String(v));
      }
    }
    const s = q.toString();
    if (s) u += "?" + s;
    return u;
  }

  /** Sends method path, retrying as the module documents, and decodes a 2xx's JSON. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<APIResponse<T>> {
    const url = this.url(path, opts.query);
    const headers = new Headers(this.headers);
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers.set(k, v);
    if (this.apiKey) headers.set("Authorization", `Bearer ${this.apiKey}`);
    headers.set("Accept", "application/json");
    let body: BodyInit | undefined;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody as BodyInit;
      headers.set("Content-Type", opts.contentType ?? "application/octet-stream");
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers.set("Content-Type", "application/json");
    }
    const idempotent =
      opts.idempotent ??
      (["GET", "HEAD", "PUT", "DELETE"].includes(method) || headers.has("Idempotency-Key") || headers.has("If-Match"));
    const maxAttempts = Math.max(0, opts.maxRetries ?? this.maxRetries) + 1;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;

    for (let attempt = 1; ; attempt++) {
      let failure: APIError | APIConnectionError;
      try {
        const res = await this.once(method, path, url, headers, body, timeoutMs, opts.signal);
        return { ...res, attempts: attempt };
      } catch (err) {
        if (!(err instanceof APIError || err instanceof APIConnectionError)) throw err;
        failure = err;
      }
      failure.attempts = attempt;
      const { retry, waitMs } = retryable(failure, idempotent);
      if (!retry || attempt >= maxAttempts) throw failure;
      await sleep(Math.max(waitMs, jittered(this.backoffMs, attempt)), opts.signal).catch(() => {
        throw new APIUserAbortError(`atrium: ${method} ${path}: aborted by the caller after ${attempt} attempts`, { cause: failure });
      });
    }
  }

  private async once(
    method: string,
    path: string,
    url: string,
    headers: Headers,
    body: BodyInit | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Omit<APIResponse<never>, "attempts">> {
    if (signal?.aborted) throw new APIUserAbortError(`atrium: ${method} ${path}: aborted by the caller`);
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs);
    const onAbort = () => ctl.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      let res: Response;
      let text: string;
      try {
        res = await this.fetch(url, { method, headers, body: body ?? null, signal: ctl.signal });
        text = await res.text();
      } catch (err) {
        if (signal?.aborted) throw new APIUserAbortError(`atrium: ${method} ${path}: aborted by the caller`, { cause: err });
        if (timedOut) throw new APITimeoutError(`no answer within ${timeoutMs} ms`, method, path, { cause: err });
        throw new APIConnectionError(describe(err), method, path, { cause: err });
      }
      let data: unknown = undefined;
      if (text !== "") {
        try {
          data = JSON.parse(text);
        } catch {
          data = text;
        }
      }
      if (res.status < 200 || res.status > 299) {
        const msg =
          data && typeof data === "object" && typeof (data as { error?: unknown }).error === "string"
            ? (data as { error: string }).error
            : text.trim() || res.statusText || `HTTP ${res.status}`;
        throw APIError.make({
          status: res.status,
          message: msg,
          traceId: res.headers.get(TRACE_HEADER) ?? undefined,
          method,
          path,
          headers: res.headers,
          body: data,
          retryAfterMs: retryAfterMs(res.headers.get("Retry-After")),
        });
      }
      if (typeof data === "string") {
        throw new APIConnectionError(`answered ${res.status} with a body that is not JSON`, method, path);
      }
      return { data: data as never, status: res.status, headers: res.headers };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** Whether a failure may be sent again, and how long its answer asked to wait. */
export function retryable(err: APIError | APIConnectionError, idempotent: boolean): { retry: boolean; waitMs: number } {
  if (err instanceof APIError) {
    const waitMs = Math.min(err.retryAfterMs ?? 0, MAX_WAIT_MS);
    if (err.status === 429 || err.status === 502 || err.status === 503) return { retry: true, waitMs };
    if (err.status === 408 || err.status >= 500) return { retry: idempotent, waitMs };
    return { retry: false, waitMs: 0 }; // a 4xx does not change on a retry
  }
  if (idempotent) return { retry: true, waitMs: 0 }; // a network error or a time-out
  // A write whose connection was never made is safe to send again. Only
  // some runtimes say why a fetch failed (Node: cause.code); a browser's
  // TypeError says nothing, so such a write is not retried there.
  return { retry: !(err instanceof APITimeoutError) && refused(err.cause), waitMs: 0 };
}

function refused(cause: unknown): boolean {
  for (let c = cause, depth = 0; c && typeof c === "object" && depth < 4; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return true;
  }
  return false;
}

function describe(err: unknown): string {
  const parts: string[] = [];
  for (let c = err, depth = 0; c && depth < 4; c = (c as { cause?: unknown }).cause, depth++) {
    if (c instanceof Error) parts.push(c.message);
    else parts.push(String(c));
    if (typeof c !== "object") break;
  }
  return parts.join(": ") || "the request failed";
}

/** The wait after attempt n failed: backoff doubled n-1 times, between half of it and all of it. */
export function jittered(backoffMs: number, n: number): number {
  const d = Math.min(backoffMs * 2 ** Math.min(n - 1, 20), MAX_WAIT_MS);
  return d / 2 + Math.random() * (d / 2);
}

/** Reads a Retry-After header: seconds or an HTTP date. */
export function retryAfterMs(v: string | null): number | undefined {
  if (!v) return undefined;
  const s = v.trim();
  if (/^\d+$/.test(s)) {
    const secs = Number(s);
    return secs > 0 ? secs * 1000 : undefined;
  }
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(at - Date.now(), 0);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A random UUID (version 4), the Idempotency-Key of one action. */
export function newIdempotencyKey(): string {
  // getRandomValues, not randomUUID: randomUUID exists only in secure
  // contexts, and a page on plain http must still send actions.
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Joins escaped segments into a path. */
export function path(...segments: string[]): string {
  return segments.map((s) => "/" + encodeURIComponent(s)).join("");
}
