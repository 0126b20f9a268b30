// The client: one API key, the API's interfaces as fields, and request(),
// typed by the generated OpenAPI paths, for every route the interfaces do
// not cover.

import type { APIResponse, ClientOptions, RequestOptions } from "./core.js";
import { Transport } from "./core.js";
import type { paths } from "./generated/public.js";
import { RealtimeResource } from "./realtime.js";
import {
  ActionsResource,
  AssetsResource,
  CollectionsResource,
  DataResource,
  DealsResource,
  ItemsResource,
  PreviewLinksResource,
  ProspectsResource,
  RevisionsResource,
  RunsResource,
  WebhooksResource,
} from "./resources.js";

type Method = "get" | "put" | "post" | "delete" | "patch";

/** The routes of the public document that answer method. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, infer Op> ? (Op extends undefined | never ? never : P) : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = paths[P] extends Record<M, infer Op> ? Op : never;

type JSONOf<R> = R extends { content: { "application/json": infer B } } ? B : unknown;

/** The JSON of an operation's success (200, 201 or 202). */
export type SuccessOf<Op> = Op extends { responses: infer R }
  ? R extends { 200: infer S }
    ? JSONOf<S>
    : R extends { 201: infer S }
      ? JSONOf<S>
      : R extends { 202: infer S }
        ? JSONOf<S>
        : unknown
  : unknown;

/** The JSON body an operation takes. */
export type BodyOf<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

/** The parameters an operation takes: its path's and its query's. */
export type ParamsOf<Op> = Op extends { parameters: infer P } ? P : never;

type PathParams<Op> = ParamsOf<Op> extends { path?: infer PP } ? (PP extends Record<string, unknown> ? PP : Record<string, never>) : Record<string, never>;
type QueryParams<Op> = ParamsOf<Op> extends { query?: infer Q } ? (Q extends Record<string, unknown> ? Q : Record<string, never>) : Record<string, never>;

/** What request() takes beside the method and the route. */
export type TypedRequest<Op> = Omit<RequestOptions, "query" | "body"> & {
  /** The route's {placeholders}. */
  params?: PathParams<Op>;
  query?: QueryParams<Op>;
  body?: BodyOf<Op>;
};

/** Atrium's public API with one key. Safe to share; it holds no connection. */
export class Atrium {
  readonly collections: CollectionsResource;
  readonly items: ItemsResource;
  /** Items' revisions (list, get, restore). */
  readonly revisions: RevisionsResource;
  /** Items' preview links (create, list, revoke). */
  readonly previews: PreviewLinksResource;
  readonly assets: AssetsResource;
  readonly actions: ActionsResource;
  readonly runs: RunsResource;
  readonly data: DataResource;
  readonly webhooks: WebhooksResource;
  readonly prospects: ProspectsResource;
  readonly deals: DealsResource;
  readonly realtime: RealtimeResource;
  /** The transport, for what the typed request() cannot express. */
  readonly transport: Transport;

  constructor(opts: ClientOptions) {
    const t = new Transport(opts);
    this.transport = t;
    this.collections = new CollectionsResource(t);
    this.items = new ItemsResource(t);
    this.revisions = new RevisionsResource(t);
    this.previews = new PreviewLinksResource(t);
    this.assets = new AssetsResource(t);
    this.actions = new ActionsResource(t);
    this.runs = new RunsResource(t);
    this.data = new DataResource(t);
    this.webhooks = new WebhooksResource(t);
    this.prospects = new ProspectsResource(t);
    this.deals = new DealsResource(t);
    this.realtime = new RealtimeResource(t);
  }

  /**
   * Any route of the public document, typed by it: the route as the
   * document spells it ("/api/v1/runs/{run_id}"), its placeholders in
   * params. Retries and errors as every other call.
   */
  async request<M extends Method, P extends PathsWith<M>>(
    method: M,
    route: P,
    opts: TypedRequest<Operation<P, M>> = {},
  ): Promise<APIResponse<SuccessOf<Operation<P, M>>>> {
    const { params, ...rest } = opts;
    const filled = String(route).replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = (params as Record<string, unknown> | undefined)?.[name];
      if (v === undefined || v === null || v === "") {
        throw new TypeError(`atrium: the route ${String(route)} needs params.${name}`);
      }
      return encodeURIComponent(String(v));
    });
    return this.transport.request(method.toUpperCase(), filled, rest as RequestOptions);
  }
}
