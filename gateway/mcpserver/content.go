package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The content group: a site's collections and their items (the
// collections interface, a key bound to a site), and the CRM group: the
// agency's prospects and deals.

// ContentAPI is what the content tools call.
type ContentAPI interface {
	// ListCollections answers the site's collections (GET
	// /api/public/v1/collections): a JSON array of them.
	ListCollections(ctx context.Context) (json.RawMessage, error)
	// ListItems answers a page of a collection's items (GET
	// /api/public/v1/collections/{slug}): the collection, its items,
	// limit and offset.
	ListItems(ctx context.Context, collection string, q ItemQuery) (json.RawMessage, error)
	// GetItem answers one item as q reads it (expanded, in a locale).
	GetItem(ctx context.Context, collection, id string, q ItemRead) (*Item, error)
	CreateItem(ctx context.Context, collection string, w ItemWrite) (*Item, error)
	// UpdateItem sets w's fields of an item; with ifMatch ("": none) only
	// while the item's version is that one (an *APIError 412 otherwise).
	UpdateItem(ctx context.Context, collection, id string, w ItemWrite, ifMatch string) (*Item, error)
}

// ItemQuery selects items of a collection, with the list route's
// parameters; zero values are the API's defaults.
type ItemQuery struct {
	Limit, Offset            int
	IsPublished              *bool
	FilterField, FilterValue string
	Order, Direction         string
	Q                        string
	Expand                   []string
	Locale, Fallback         string
}

// ItemRead reads one item: its fields to expand, and the locale to read it
// in (docs/collections.md#locales).
type ItemRead struct {
	Expand           []string
	Locale, Fallback string
}

// Item is an item as the API answers it, and its version (its ETag).
type Item struct {
	JSON json.RawMessage
	ETag string
}

// ItemWrite is the body of a create or an update: the fields to set and,
// if not nil, whether the item is published.
type ItemWrite struct {
	Data        map[string]any
	IsPublished *bool
	// Locale, on an update, writes that locale's values of localized
	// fields ("": the site's default locale).
	Locale string
}

type itemsArgs struct {
	CollectionSlug string `json:"collection_slug"`
	Limit          int    `json:"limit"`
	Offset         int    `json:"offset"`
	IsPublished    *bool  `json:"is_published"`
	FilterField    string `json:"filter_field"`
	FilterValue    string `json:"filter_value"`
	Order          string `json:"order"`
	Direction      string `json:"direction"`
	Q              string `json:"q"`
	Expand         string `json:"expand"`
	Locale         string `json:"locale"`
	Fallback       string `json:"fallback"`
}

type itemArgs struct {
	CollectionSlug string `json:"collection_slug"`
	ItemID         string `json:"item_id"`
	Expand         string `json:"expand"`
	Locale         string `json:"locale"`
	Fallback       string `json:"fallback"`
}

// expandList is the expand argument as the port takes it: the API's
// comma-separated names.
func expandList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

type writeArgs struct {
	CollectionSlug string         `json:"collection_slug"`
	ItemID         string         `json:"item_id"`
	Data           map[string]any `json:"data"`
	IsPublished    *bool          `json:"is_published"`
	IfMatch        string         `json:"if_match"`
	Locale         string         `json:"locale"`
}

// itemResult is an item with its version, which update_item's if_match
// takes.
type itemResult struct {
	Item json.RawMessage `json:"item"`
	ETag string          `json:"etag"`
}

func itemOut(it *Item, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return itemResult{Item: it.JSON, ETag: it.ETag}, nil
}

var (
	slugArg        = str("The collection's slug (list_collections gives them).")
	itemIDArg      = uuid("The item's id.")
	dataArg        = anyObject("The item's fields, by key, as the collection defines them (list_collections gives each collection's fields).")
	isPublishedArg = boolean("Whether the item is published (visible to the site's readers); a new item is a draft unless true.")
	expandArg      = str("Reference and asset fields, comma-separated, whose ids are replaced by the objects they name (author,cover); a dot follows a reference further (author.avatar), at most 3 levels.")
	localeArg      = str("Read the localized fields in this locale of the site (a BCP 47 tag such as de-AT), each from the first of de-AT, de and the site's default locale that has a value; * for every locale's values. The item then says its locale and where each field fell back from.")
	fallbackArg    = str("none: only the locale's own values, without falling back.")
)

func contentTools() []tool {
	return []tool{
		{
			def: &mcp.Tool{Name: "list_collections", Title: "List collections", Annotations: reading,
				Description: "Lists the site's content collections (GET /api/public/v1/collections), each with its slug and the fields its items carry.",
				InputSchema: object(nil, map[string]any{})},
			method: listCollections,
			add: handler(func(ctx context.Context, api API, _ noArgs) (any, error) {
				list, err := api.ListCollections(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]any{"collections": list}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "list_items", Title: "List items", Annotations: reading,
				Description: "Lists a page of a collection's items (GET /api/public/v1/collections/{collection_slug}), newest first by default, drafts included unless is_published is given.",
				InputSchema: object([]string{"collection_slug"}, map[string]any{
					"collection_slug": slugArg,
					"limit":           integer("Items to return: default 100, at most 1000.", 1),
					"offset":          offsetArg,
					"is_published":    boolean("Only published (true) or draft (false) items."),
					"filter_field":    str("Keep the items whose field (a key of the collection's fields) equals filter_value; both or neither."),
					"filter_value":    str("The value filter_field must have."),
					"order":           str("created_at (default), updated_at, a sortable field of the collection, or relevance (with q)."),
					"direction":       directionArg,
					"q":               str("Full-text search: only the items whose text and rich_text fields hold every word of it (at most 200 characters)."),
					"expand":          expandArg,
					"locale":          localeArg,
					"fallback":        fallbackArg,
				})},
			method: listItems,
			add: handler(func(ctx context.Context, api API, in itemsArgs) (any, error) {
				return api.ListItems(ctx, in.CollectionSlug, ItemQuery{Limit: in.Limit, Offset: in.Offset, IsPublished: in.IsPublished,
					FilterField: in.FilterField, FilterValue: in.FilterValue, Order: in.Order, Direction: in.Direction, Q: in.Q, Expand: expandList(in.Expand),
					Locale: in.Locale, Fallback: in.Fallback})
			}),
		},
		{
			def: &mcp.Tool{Name: "get_item", Title: "Get an item", Annotations: reading,
				Description: "Reads one item of a collection (drafts included) with its etag, which update_item's if_match takes.",
				InputSchema: object([]string{"collection_slug", "item_id"}, map[string]any{"collection_slug": slugArg, "item_id": itemIDArg, "expand": expandArg,
					"locale": localeArg, "fallback": fallbackArg})},
			method: getItem,
			add: handler(func(ctx context.Context, api API, in itemArgs) (any, error) {
				return itemOut(api.GetItem(ctx, in.CollectionSlug, in.ItemID, ItemRead{Expand: expandList(in.Expand), Locale: in.Locale, Fallback: in.Fallback}))
			}),
		},
		{
			def: &mcp.Tool{Name: "create_item", Title: "Create an item", Annotations: creating,
				Description: "Adds an item to a collection (POST /api/public/v1/collections/{collection_slug}) and answers it with its id and etag. Each call adds one more item.",
				InputSchema: object([]string{"collection_slug", "data"}, map[string]any{
					"collection_slug": slugArg, "data": dataArg, "is_published": isPublishedArg,
				})},
			method: createItem,
			add: handler(func(ctx context.Context, api API, in writeArgs) (any, error) {
				return itemOut(api.CreateItem(ctx, in.CollectionSlug, ItemWrite{Data: in.Data, IsPublished: in.IsPublished}))
			}),
		},
		{
			def: &mcp.Tool{Name: "update_item", Title: "Update an item", Annotations: replacing,
				Description: "Replaces the given fields of an item (PATCH /api/public/v1/collections/{collection_slug}/{item_id}); the others keep their values. " +
					"With if_match (the etag get_item answered) it applies only if nobody changed the item since: otherwise HTTP 412, and nothing changes.",
				InputSchema: object([]string{"collection_slug", "item_id"}, map[string]any{
					"collection_slug": slugArg, "item_id": itemIDArg,
					"data":         anyObject("The fields to replace, by key; the others are kept."),
					"is_published": isPublishedArg,
					"if_match":     str("The item's etag as get_item answered it: the update applies only while the item is unchanged."),
					"locale":       str("Write the values of this locale of the site (a BCP 47 tag); only localized fields may be given then. Default: the site's default locale."),
				})},
			method: updateItem,
			add: handler(func(ctx context.Context, api API, in writeArgs) (any, error) {
				return itemOut(api.UpdateItem(ctx, in.CollectionSlug, in.ItemID, ItemWrite{Data: in.Data, IsPublished: in.IsPublished, Locale: in.Locale}, in.IfMatch))
			}),
		},
	}
}

// AssetsAPI is what the asset tools call; each answers the API's JSON: an
// array of assets, or one asset.
type AssetsAPI interface {
	ListAssets(ctx context.Context, p Page) (json.RawMessage, error)
	GetAsset(ctx context.Context, id string) (json.RawMessage, error)
	UpdateAsset(ctx context.Context, id string, p AssetPatch) (json.RawMessage, error)
}

// AssetPatch changes an asset's alt text or file name (nil: unchanged).
type AssetPatch struct {
	Alt, Filename *string
}

type assetsArgs struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

type assetArgs struct {
	AssetID  string  `json:"asset_id"`
	Alt      *string `json:"alt"`
	Filename *string `json:"filename"`
}

var assetIDArg = uuid("The asset's id (list_assets gives them).")

// assetTools are the site's assets: the files its items point at. Their
// alt text is what an SEO agent most often has to write; uploads stay with
// the HTTP API (a file is no tool argument).
func assetTools() []tool {
	return []tool{
		{
			def: &mcp.Tool{Name: "list_assets", Title: "List assets", Annotations: reading,
				Description: "Lists a page of the site's assets (GET /api/public/v1/assets), newest first: each with its url, type, size, dimensions, alt text and file name.",
				InputSchema: object(nil, map[string]any{"limit": integer("Assets to return: default 100, at most 1000.", 1), "offset": offsetArg})},
			method: listAssets,
			add: handler(func(ctx context.Context, api API, in assetsArgs) (any, error) {
				list, err := api.ListAssets(ctx, Page(in))
				if err != nil {
					return nil, err
				}
				return map[string]any{"assets": list}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "get_asset", Title: "Get an asset", Annotations: reading,
				Description: "Reads one asset of the site (GET /api/public/v1/assets/{asset_id}).",
				InputSchema: object([]string{"asset_id"}, map[string]any{"asset_id": assetIDArg})},
			method: getAsset,
			add: handler(func(ctx context.Context, api API, in assetArgs) (any, error) {
				a, err := api.GetAsset(ctx, in.AssetID)
				if err != nil {
					return nil, err
				}
				return map[string]any{"asset": a}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "update_asset", Title: "Update an asset", Annotations: replacing,
				Description: "Sets an asset's alt text (what screen readers and search engines read) or its file name (PATCH /api/public/v1/assets/{asset_id}); the other is kept.",
				InputSchema: object([]string{"asset_id"}, map[string]any{
					"asset_id": assetIDArg,
					"alt":      str("The image's alt text: what it shows, for readers who cannot see it (at most 1,000 characters)."),
					"filename": str("The file name its URL ends in."),
				})},
			method: updateAsset,
			add: handler(func(ctx context.Context, api API, in assetArgs) (any, error) {
				a, err := api.UpdateAsset(ctx, in.AssetID, AssetPatch{Alt: in.Alt, Filename: in.Filename})
				if err != nil {
					return nil, err
				}
				return map[string]any{"asset": a}, nil
			}),
		},
	}
}

// CRMAPI is what the CRM tools call; each answers a JSON array of the
// agency's prospect reports or deals, most recently updated first.
type CRMAPI interface {
	ListProspects(ctx context.Context, p Page) (json.RawMessage, error)
	ListDeals(ctx context.Context, p Page) (json.RawMessage, error)
}

type crmArgs struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

func crmTools() []tool {
	args := object(nil, map[string]any{"limit": integer("Rows to return: default 50, at most 200.", 1), "offset": offsetArg})
	return []tool{
		{
			def: &mcp.Tool{Name: "list_prospects", Title: "List prospects", Annotations: reading,
				Description: "Lists the agency's prospect reports (GET /api/v1/prospects), most recently updated first: business, website, health and lead scores, pipeline stage.",
				InputSchema: args},
			method: listProspects,
			add: handler(func(ctx context.Context, api API, in crmArgs) (any, error) {
				list, err := api.ListProspects(ctx, Page(in))
				if err != nil {
					return nil, err
				}
				return map[string]any{"data": list}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "list_deals", Title: "List deals", Annotations: reading,
				Description: "Lists the agency's deals (GET /api/v1/deals), most recently updated first: title, stage, value, expected close date.",
				InputSchema: args},
			method: listDeals,
			add: handler(func(ctx context.Context, api API, in crmArgs) (any, error) {
				list, err := api.ListDeals(ctx, Page(in))
				if err != nil {
					return nil, err
				}
				return map[string]any{"data": list}, nil
			}),
		},
	}
}
