// Errors as classes, so that a caller can `catch (e) { if (e instanceof
// NotFoundError) ... }` as with openai-node and stripe-node. Every answer
// of the API other than a 2xx is an APIError carrying what the Go SDK's
// *Error carries: the status, Atrium's message (which names what was
// wrong and what is allowed), the trace id to quote to an operator, and
// how many attempts were made.

/** The header every answer of Atrium carries, naming the request's trace. */
export const TRACE_HEADER = "Atrium-Trace-Id";

/** The base class of every error the SDK throws. */
export class AtriumError extends Error {
  override name = "AtriumError";
}

/** What an APIError is built from. */
export interface APIErrorInit {
  status: number;
  message: string;
  traceId: string | undefined;
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
  retryAfterMs: number | undefined;
}

/** An answer of the API other than a success. */
export class APIError extends AtriumError {
  override name = "APIError";
  /** The HTTP status. */
  readonly status: number;
  /** Atrium's message: the `error` of its `{"error": ...}` body. */
  readonly error: string;
  /** The request's trace id (the Atrium-Trace-Id header), to quote. */
  readonly traceId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  /** The decoded body (JSON when it was JSON, else the text). */
  readonly body: unknown;
  /** What the answer's Retry-After asked for (429, 503), in ms. */
  readonly retryAfterMs: number | undefined;
  /** How many times the request was sent. */
  attempts = 1;

  constructor(init: APIErrorInit) {
    super(
      `atrium: ${init.method} ${init.path}: ${init.status} ${init.message}` +
        (init.traceId ? ` (trace ${init.traceId})` : ""),
    );
    this.status = init.status;
    this.error = init.message;
    this.traceId = init.traceId;
    this.method = init.method;
    this.path = init.path;
    this.headers = init.headers;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** The class of an answer with status `status`. */
  static make(init: APIErrorInit): APIError {
    const Class = classes[init.status] ?? (init.status >= 500 ? InternalServerError : APIError);
    return new Class(init);
  }
}

/** 400: the request is malformed; the message says what is allowed. */
export class BadRequestError extends APIError {
  override name = "BadRequestError";
}
/** 401: no key, or a key that is not valid (revoked, expired, unknown). */
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
}
/** 403: the key may not do this (a read key writing, a published-only key...). */
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
}
/** 404: the object does not exist, or belongs to another tenant. */
export class NotFoundError extends APIError {
  override name = "NotFoundError";
}
/** 408: the request took too long to arrive. */
export class RequestTimeoutError extends APIError {
  override name = "RequestTimeoutError";
}
/** 409: the request conflicts with the object's state (a finished run...). */
export class ConflictError extends APIError {
  override name = "ConflictError";
}
/** 412: If-Match did not match: someone else changed the object. */
export class PreconditionFailedError extends APIError {
  override name = "PreconditionFailedError";
}
/** 413: the body is too large. */
export class PayloadTooLargeError extends APIError {
  override name = "PayloadTooLargeError";
}
/** 422: the request is well-formed but not acceptable (validation). */
export class UnprocessableEntityError extends APIError {
  override name = "UnprocessableEntityError";
}
/** 429: the key's rate limit or the agency's credits; see retryAfterMs. */
export class RateLimitError extends APIError {
  override name = "RateLimitError";
}
/** 5xx: Atrium failed; the SDK has retried what was safe to retry. */
export class InternalServerError extends APIError {
  override name = "InternalServerError";
}

const classes: Record<number, new (init: APIErrorInit) => APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  408: RequestTimeoutError,
  409: ConflictError,
  412: PreconditionFailedError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The request never got an answer: the connection failed or was reset. */
export class APIConnectionError extends AtriumError {
  override name = "APIConnectionError";
  attempts = 1;
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`atrium: ${method} ${path}: ${message}`, options);
  }
}

/** An attempt took longer than the client's timeout. */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";
}

/** The caller's AbortSignal ended the request. */
export class APIUserAbortError extends AtriumError {
  override name = "APIUserAbortError";
}

/** Thrown by webhooks.verify for a delivery that must be refused. */
export class WebhookVerificationError extends AtriumError {
  override name = "WebhookVerificationError";
}
