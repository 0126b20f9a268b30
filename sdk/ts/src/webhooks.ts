// Standard Webhooks 1.0 verification for receivers, as the Go SDK's
// VerifyWebhook (sdk/go/verify.go), with Web Crypto so that it runs in
// Node 20+, edge runtimes (a route handler of Next.js or Astro) and
// browsers alike.

import { WebhookVerificationError } from "./errors.js";

/** How far a delivery's webhook-timestamp may be from the receiver's clock (the Standard Webhooks default). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** A delivery a receiver verified. */
export interface WebhookEvent {
  /** The webhook-id: the same on every retry and replay of the event, to deduplicate on. */
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** The body as received. */
  raw: string;
}

/** Headers as a Headers object, a Node IncomingHttpHeaders-like record, or a plain object. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Tolerance in seconds (default WEBHOOK_TOLERANCE_SECONDS). */
  toleranceSeconds?: number;
  /** The receiver's clock, in ms since the epoch (tests). */
  now?: number;
}

function header(h: HeadersLike, name: string): string {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? "";
  for (const [k, v] of Object.entries(h)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : (v ?? "");
  }
  return "";
}

function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Compares in time independent of where the inputs first differ. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Verifies a delivery as Standard Webhooks 1.0 specifies: a v1 signature
 * (HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with
 * the secret's decoded bytes) that matches one of the webhook-signature
 * header's (two during a rotation), and a timestamp within the tolerance.
 * `body` must be the raw body as received (not re-serialized JSON).
 * Throws WebhookVerificationError for a delivery to refuse (answer 4xx).
 */
export async function verifyWebhook(
  secret: string,
  headers: HeadersLike,
  body: string | Uint8Array | ArrayBuffer,
  opts: VerifyOptions = {},
): Promise<WebhookEvent> {
  let key: Uint8Array;
  try {
    key = fromBase64(secret.replace(/^whsec_/, ""));
  } catch {
    key = new Uint8Array();
  }
  if (key.length === 0) throw new WebhookVerificationError("atrium: the webhook secret is not a whsec_ secret");
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) {
    throw new WebhookVerificationError(
      "atrium: webhook signature does not verify: webhook-id, webhook-timestamp and webhook-signature are required",
    );
  }
  if (!/^\d+$/.test(ts)) {
    throw new WebhookVerificationError(`atrium: webhook signature does not verify: webhook-timestamp "${ts}" is not Unix seconds`);
  }
  const tolerance = opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(ts)) > tolerance) {
    throw new WebhookVerificationError(
      `atrium: webhook signature does not verify: webhook-timestamp ${new Date(Number(ts) * 1000).toISOString()} is more than ${tolerance} s from now`,
    );
  }
  const raw =
    typeof body === "string" ? body : new TextDecoder().decode(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body instanceof ArrayBuffer ? new Uint8Array(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const k = await globalThis.crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const want = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", k, signed as BufferSource));
  let ok = false;
  for (const s of sigs.split(/\s+/)) {
    const comma = s.indexOf(",");
    if (comma < 0 || s.slice(0, comma) !== "v1") continue;
    let got: Uint8Array;
    try {
      got = fromBase64(s.slice(comma + 1));
    } catch {
      continue;
    }
    // Every candidate is compared (no early exit), each in constant time.
    if (constantTimeEqual(got, want)) ok = true;
  }
  if (!ok) throw new WebhookVerificationError("atrium: webhook signature does not verify");
  let ev: { type?: unknown; timestamp?: unknown; data?: unknown };
  try {
    ev = JSON.parse(raw);
  } catch (err) {
    throw new WebhookVerificationError("atrium: the webhook body is not the JSON of an event", { cause: err });
  }
  return {
    id,
    type: typeof ev.type === "string" ? ev.type : "",
    timestamp: typeof ev.timestamp === "string" ? ev.timestamp : "",
    data: ev.data && typeof ev.data === "object" ? (ev.data as Record<string, unknown>) : {},
    raw,
  };
}

/** Signs a body as Atrium does (for a receiver's tests): the webhook-signature header's value. */
export async function signWebhook(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = fromBase64(secret.replace(/^whsec_/, ""));
  const k = await globalThis.crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", k, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  let bin = "";
  for (const b of sig) bin += String.fromCharCode(b);
  return `v1,${btoa(bin)}`;
}
