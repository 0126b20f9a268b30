// @atrium-hq/sdk: the TypeScript client of Atrium's API.
export { Atrium } from "./client.js";
export type { BodyOf, ParamsOf, PathsWith, SuccessOf, TypedRequest } from "./client.js";
export {
  DEFAULT_BACKOFF_MS,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  MAX_WAIT_MS,
  Transport,
  VERSION,
  newIdempotencyKey,
} from "./core.js";
export type { APIResponse, ClientOptions, Query, RequestOptions } from "./core.js";
export * from "./errors.js";
export { PageRequest } from "./pagination.js";
export { RealtimeResource } from "./realtime.js";
export type { RealtimeEvent, RealtimeOptions, RealtimeSubscription } from "./realtime.js";
export * from "./resources.js";
export { WEBHOOK_TOLERANCE_SECONDS, signWebhook, verifyWebhook } from "./webhooks.js";
export type { HeadersLike, VerifyOptions, WebhookEvent } from "./webhooks.js";
export type { components, operations, paths } from "./generated/public.js";
