package openapi

import (
	"fmt"
	"slices"
)

// The catalogs as other parts of the gateway read them: the MCP server
// (gateway/mcpserver) builds its tools' input schemas and descriptions
// from the same declarations as this document, so that a tool cannot take
// other arguments than the route it calls.

// Dataset is a dataset of the data read (GET /api/v1/data).
type Dataset struct {
	Name        string
	Description string
	// Orders and Filters are the fields it can be ordered and filtered by.
	Orders, Filters []string
	// Fields are the names of its row's fields, sorted.
	Fields []string
}

// ActionInfo is an action of POST /api/v1/data as the catalog declares it.
type ActionInfo struct {
	Name        string
	Description string
	CostAI      int64
	CostData    int64
	// Cost is the cost in words ("2 AI credits", "no credits").
	Cost string
	// InputSchema is the JSON Schema (2020-12) of its request body:
	// action, client_id and its own fields.
	InputSchema map[string]any
}

// Datasets returns every dataset of the data read, in the catalog's order.
func Datasets() ([]Dataset, error) {
	var ds datasetsCatalog
	if err := readCatalog("datasets.json", &ds); err != nil {
		return nil, err
	}
	out := make([]Dataset, 0, len(ds.Datasets))
	for _, d := range ds.Datasets {
		var fields []string
		for k := range asDoc(d.Row["properties"]) {
			fields = append(fields, k)
		}
		slices.Sort(fields)
		out = append(out, Dataset{Name: d.Name, Description: d.Description, Orders: d.Orders, Filters: d.Filters, Fields: fields})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("catalog/datasets.json lists no dataset")
	}
	return out, nil
}

// Actions returns every action, in the catalog's order.
func Actions() ([]ActionInfo, error) {
	var ac actionsCatalog
	if err := readCatalog("actions.json", &ac); err != nil {
		return nil, err
	}
	out := make([]ActionInfo, 0, len(ac.Actions))
	for _, a := range ac.Actions {
		out = append(out, ActionInfo{Name: a.Name, Description: a.Description, CostAI: a.Cost.AI, CostData: a.Cost.Data,
			Cost: cost(a.Cost.AI, a.Cost.Data), InputSchema: a.InputSchema})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("catalog/actions.json lists no action")
	}
	return out, nil
}
