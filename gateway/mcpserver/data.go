package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/gateway/openapi"
)

// The data group: the per-client datasets of GET /api/v1/data.

// DataAPI is what the data tools call.
type DataAPI interface {
	// ReadDataset answers a page of a dataset (GET /api/v1/data): its
	// resource, client_id, rows (data) and pagination.
	ReadDataset(ctx context.Context, q DataQuery) (json.RawMessage, error)
}

// DataQuery is a read of one dataset, with GET /api/v1/data's parameters;
// zero values are the API's defaults.
type DataQuery struct {
	Resource, ClientID       string
	Limit, Offset            int
	Cursor                   string
	Order, Direction         string
	FilterField, FilterValue string
}

type readArgs struct {
	Resource    string `json:"resource"`
	ClientID    string `json:"client_id"`
	Limit       int    `json:"limit"`
	Offset      int    `json:"offset"`
	Order       string `json:"order"`
	Direction   string `json:"direction"`
	FilterField string `json:"filter_field"`
	FilterValue string `json:"filter_value"`
	Cursor      string `json:"cursor"`
}

type pageArgs struct {
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
	Cursor string `json:"cursor"`
}

type noArgs struct{}

func dataTools(datasets []openapi.Dataset) []tool {
	var names, orders, filters []string
	list := make([]map[string]any, 0, len(datasets))
	for _, d := range datasets {
		names = append(names, d.Name)
		orders = union(orders, d.Orders)
		filters = union(filters, d.Filters)
		list = append(list, map[string]any{"name": d.Name, "description": d.Description, "fields": d.Fields,
			"orders": d.Orders, "filters": d.Filters, "needs_client_id": d.Name != "clients"})
	}
	return []tool{
		{
			def: &mcp.Tool{Name: "list_datasets", Title: "List datasets", Annotations: reading,
				Description: "Lists the datasets read_dataset reads: each one's name (its resource), what it holds, its fields, and the fields it can be ordered and filtered by.",
				InputSchema: object(nil, map[string]any{})},
			method: readDataset,
			add: handler(func(context.Context, API, noArgs) (any, error) {
				return map[string]any{"datasets": list}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "read_dataset", Title: "Read a dataset", Annotations: reading,
				Description: "Reads a page of one client's dataset (GET /api/v1/data): rows newest first unless ordered otherwise, " +
					"with pagination (total, has_more, next_cursor). Pass next_cursor as cursor, with the same other arguments, for the next page.",
				InputSchema: object([]string{"resource"}, map[string]any{
					"resource":     oneOf("The dataset (list_datasets describes each).", names),
					"client_id":    uuid("The client whose rows to read (list_clients gives the ids); required for every resource but clients."),
					"limit":        integer("Rows to return: default 100, at most 1000.", 1),
					"offset":       offsetArg,
					"order":        oneOf("Field to order by, default created_at; the resource must have it.", orders),
					"direction":    directionArg,
					"filter_field": oneOf("Keep the rows whose field equals filter_value (both or neither); the resource must have it.", filters),
					"filter_value": str("The exact value filter_field must have, read as the field's type."),
					"cursor":       str("The pagination.next_cursor of the page before: the next page, at the same cost at any depth."),
				})},
			method: readDataset,
			add: handler(func(ctx context.Context, api API, in readArgs) (any, error) {
				return api.ReadDataset(ctx, DataQuery{Resource: in.Resource, ClientID: in.ClientID, Limit: in.Limit, Offset: in.Offset,
					Cursor: in.Cursor, Order: in.Order, Direction: in.Direction, FilterField: in.FilterField, FilterValue: in.FilterValue})
			}),
		},
		{
			def: &mcp.Tool{Name: "list_clients", Title: "List clients", Annotations: reading,
				Description: "Lists the agency's clients (the clients dataset): their ids, names, domains and settings. Other tools take a client's id as client_id.",
				InputSchema: object(nil, map[string]any{"limit": integer("Clients to return: default 100, at most 1000.", 1), "offset": offsetArg,
					"cursor": str("The pagination.next_cursor of the page before.")})},
			method: readDataset,
			add: handler(func(ctx context.Context, api API, in pageArgs) (any, error) {
				return api.ReadDataset(ctx, DataQuery{Resource: "clients", Limit: in.Limit, Offset: in.Offset, Cursor: in.Cursor})
			}),
		},
	}
}
