package atriumsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/atrium-hq/atrium/gateway/mcpserver"
	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// Config configures the calls.
type Config struct {
	// HTTPClient sends them; nil: a client of the connector's own.
	HTTPClient *http.Client
	// Version is the MCP server's, in the calls' User-Agent
	// (atrium-mcp/<version>); "": dev.
	Version string
}

// Connector calls the API at one base URL.
type Connector struct {
	url       string
	hc        *http.Client
	userAgent string
}

// New returns a Connector to the API at apiURL (its base URL, such as
// http://127.0.0.1:8080).
func New(apiURL string, cfg Config) *Connector {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	return &Connector{url: apiURL, hc: cfg.HTTPClient, userAgent: "atrium-mcp/" + cfg.Version}
}

// Connect implements mcpserver.Connector: an SDK client with key.
func (c *Connector) Connect(key string) mcpserver.API {
	return &API{c: atrium.New(c.url, key, atrium.WithHTTPClient(c.hc), atrium.WithUserAgent(c.userAgent))}
}

// API implements mcpserver.API with one SDK client.
type API struct{ c *atrium.Client }

var _ mcpserver.API = (*API)(nil)

// ReadDataset implements mcpserver.DataAPI.
func (a *API) ReadDataset(ctx context.Context, q mcpserver.DataQuery) (json.RawMessage, error) {
	return answer(a.c.Data.Read(ctx, atrium.DataQuery{Resource: q.Resource, ClientID: q.ClientID, Limit: q.Limit, Offset: q.Offset,
		Cursor: q.Cursor, Order: q.Order, Direction: q.Direction, FilterField: q.FilterField, FilterValue: q.FilterValue}))
}

// ListActions implements mcpserver.ActionsAPI.
func (a *API) ListActions(ctx context.Context) (json.RawMessage, error) {
	return answer(a.c.Actions.List(ctx))
}

// Credits implements mcpserver.ActionsAPI.
func (a *API) Credits(ctx context.Context) (mcpserver.Credits, error) {
	bal, err := a.c.Actions.Credits(ctx)
	if err != nil {
		return mcpserver.Credits{}, apiError(err)
	}
	return mcpserver.Credits(bal), nil
}

// RunAction implements mcpserver.ActionsAPI.
func (a *API) RunAction(ctx context.Context, r mcpserver.RunRequest) (*mcpserver.RunOutcome, error) {
	var opts []atrium.RunOption
	if r.IdempotencyKey != "" {
		opts = append(opts, atrium.WithIdempotencyKey(r.IdempotencyKey))
	}
	res, err := a.c.Actions.Run(ctx, r.Action, r.ClientID, r.Fields, opts...)
	if err != nil {
		return nil, apiError(err)
	}
	return &mcpserver.RunOutcome{Action: res.Action, ClientID: res.ClientID, Status: res.Status, StatusCode: res.StatusCode, Data: res.Data,
		Remaining: mcpserver.Credits(res.Remaining), Replayed: res.Replayed, IdempotencyKey: res.IdempotencyKey}, nil
}

// GetRun implements mcpserver.ActionsAPI.
func (a *API) GetRun(ctx context.Context, id string) (json.RawMessage, error) {
	return answer(a.c.Runs.Get(ctx, id))
}

// ListCollections implements mcpserver.ContentAPI.
func (a *API) ListCollections(ctx context.Context) (json.RawMessage, error) {
	return answer(a.c.Collections.List(ctx))
}

// ListItems implements mcpserver.ContentAPI.
func (a *API) ListItems(ctx context.Context, collection string, q mcpserver.ItemQuery) (json.RawMessage, error) {
	return answer(a.c.Items.List(ctx, collection, &atrium.ItemQuery{Limit: q.Limit, Offset: q.Offset, IsPublished: q.IsPublished,
		FilterField: q.FilterField, FilterValue: q.FilterValue, Order: q.Order, Direction: q.Direction, Q: q.Q, Expand: q.Expand,
		Locale: q.Locale, Fallback: q.Fallback}))
}

// GetItem implements mcpserver.ContentAPI.
func (a *API) GetItem(ctx context.Context, collection, id string, q mcpserver.ItemRead) (*mcpserver.Item, error) {
	return item(a.c.Items.GetWith(ctx, collection, id, atrium.ItemGet{Expand: q.Expand, Locale: q.Locale, Fallback: q.Fallback}))
}

// CreateItem implements mcpserver.ContentAPI.
func (a *API) CreateItem(ctx context.Context, collection string, w mcpserver.ItemWrite) (*mcpserver.Item, error) {
	return item(a.c.Items.Create(ctx, collection, atrium.ItemWrite{Data: w.Data, IsPublished: w.IsPublished}))
}

// UpdateItem implements mcpserver.ContentAPI.
func (a *API) UpdateItem(ctx context.Context, collection, id string, w mcpserver.ItemWrite, ifMatch string) (*mcpserver.Item, error) {
	var opts []atrium.WriteOption
	if ifMatch != "" {
		opts = append(opts, atrium.IfMatch(ifMatch))
	}
	return item(a.c.Items.Update(ctx, collection, id, atrium.ItemWrite{Data: w.Data, IsPublished: w.IsPublished, Locale: w.Locale}, opts...))
}

// ListAssets implements mcpserver.AssetsAPI.
func (a *API) ListAssets(ctx context.Context, p mcpserver.Page) (json.RawMessage, error) {
	return answer(a.c.Assets.List(ctx, &atrium.Page{Limit: p.Limit, Offset: p.Offset}))
}

// GetAsset implements mcpserver.AssetsAPI.
func (a *API) GetAsset(ctx context.Context, id string) (json.RawMessage, error) {
	return answer(a.c.Assets.Get(ctx, id))
}

// UpdateAsset implements mcpserver.AssetsAPI.
func (a *API) UpdateAsset(ctx context.Context, id string, p mcpserver.AssetPatch) (json.RawMessage, error) {
	return answer(a.c.Assets.Update(ctx, id, atrium.AssetPatch{Alt: p.Alt, Filename: p.Filename}))
}

// ListProspects implements mcpserver.CRMAPI.
func (a *API) ListProspects(ctx context.Context, p mcpserver.Page) (json.RawMessage, error) {
	return answer(a.c.Prospects.List(ctx, &atrium.Page{Limit: p.Limit, Offset: p.Offset}))
}

// ListDeals implements mcpserver.CRMAPI.
func (a *API) ListDeals(ctx context.Context, p mcpserver.Page) (json.RawMessage, error) {
	return answer(a.c.Deals.List(ctx, &atrium.Page{Limit: p.Limit, Offset: p.Offset}))
}

// answer is what the SDK decoded, as JSON, or its error.
func answer[T any](v T, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, apiError(err)
	}
	return marshal(v)
}

// marshal encodes v without escaping HTML: whoever encodes the answer
// the tool gives (the MCP SDK does) escapes it, or not, as it would v.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func item(it *atrium.Item, err error) (*mcpserver.Item, error) {
	if err != nil {
		return nil, apiError(err)
	}
	b, err := marshal(it)
	if err != nil {
		return nil, err
	}
	return &mcpserver.Item{JSON: b, ETag: it.ETag}, nil
}

// apiError is an answer of the API as an mcpserver.APIError; any other
// error (the API unreachable, a time-out) as it is.
func apiError(err error) error {
	var ae *atrium.Error
	if errors.As(err, &ae) {
		return &mcpserver.APIError{StatusCode: ae.StatusCode, Message: ae.Message, TraceID: ae.TraceID}
	}
	return err
}
