package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/gateway/openapi"
)

// The gRPC methods behind the routes the tools call: their access rules
// (the atrium.access.v1.access option) decide who sees each tool.
const (
	readDataset     = "/atrium.data.v1.DataService/ReadDataset"
	listActions     = "/atrium.actions.v1.ActionsService/ListActions"
	runAction       = "/atrium.actions.v1.ActionsService/RunAction"
	getRun          = "/atrium.actions.v1.ActionsService/GetRun"
	listCollections = "/atrium.collections.v1.CollectionsService/ListCollections"
	listItems       = "/atrium.collections.v1.CollectionsService/ListItems"
	getItem         = "/atrium.collections.v1.CollectionsService/GetItem"
	createItem      = "/atrium.collections.v1.CollectionsService/CreateItem"
	updateItem      = "/atrium.collections.v1.CollectionsService/UpdateItem"
	listAssets      = "/atrium.collections.v1.AssetsService/ListAssets"
	getAsset        = "/atrium.collections.v1.AssetsService/GetAsset"
	updateAsset     = "/atrium.collections.v1.AssetsService/UpdateAsset"
	listProspects   = "/atrium.crm.v1.CRMService/ListProspects"
	listDeals       = "/atrium.crm.v1.CRMService/ListDeals"
)

// Annotations of the three kinds of tool.
var (
	// reading changes nothing.
	reading = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	// creating adds an object each time it is called.
	creating = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	// replacing overwrites what was there; the same call twice leaves
	// the same state.
	replacing = &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}
	// acting runs an action: it spends credits, may replace a dataset's
	// rows (the refreshing actions), publish or send e-mail, and reaches
	// outside Atrium (language models, web pages, search engines). With
	// the same idempotency_key it runs once, but without one each call
	// is a new run, so it is not idempotent as such.
	acting = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}
)

// handler adapts a tool's function to the SDK: the arguments arrive
// validated against the tool's input schema and decoded into In; the
// result is the tool's JSON (text content and structured content); an
// error, the API's message as a tool error (isError), not a protocol
// error, so that the model reads it and can correct its call.
func handler[In any](fn func(ctx context.Context, api API, in In) (any, error)) func(*mcp.Server, *mcp.Tool, func(*mcp.CallToolRequest) API) {
	return func(srv *mcp.Server, def *mcp.Tool, apiFor func(*mcp.CallToolRequest) API) {
		mcp.AddTool(srv, def, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			if apiFor == nil {
				return nil, nil, fmt.Errorf("tool %s is not served here", def.Name)
			}
			out, err := fn(ctx, apiFor(req), in)
			if err != nil {
				return nil, nil, apiError(err)
			}
			if f, ok := out.(failure); ok && f.failed() {
				// The call went through but its work failed (an action
				// that ended in error): the result says so, flagged.
				return &mcp.CallToolResult{IsError: true}, out, nil
			}
			return nil, out, nil
		})
	}
}

// failure is a result that reports failed work.
type failure interface{ failed() bool }

// Schema helpers: the tools' input schemas are JSON Schema objects whose
// properties are named and described as the HTTP API's parameters.

func object(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func uuid(desc string) map[string]any {
	return map[string]any{"type": "string", "format": "uuid", "description": desc}
}

func oneOf(desc string, values []string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc + " One of: " + strings.Join(values, ", ") + "."}
}

func integer(desc string, minimum int) map[string]any {
	return map[string]any{"type": "integer", "minimum": minimum, "description": desc}
}

func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

func anyObject(desc string) map[string]any {
	return map[string]any{"type": "object", "description": desc}
}

var (
	offsetArg    = integer("Rows to skip, default 0.", 0)
	directionArg = oneOf("Sort direction, default desc.", []string{"asc", "desc"})
)

// buildTools declares every tool, with the schemas the catalogs give.
func buildTools() ([]tool, error) {
	datasets, err := openapi.Datasets()
	if err != nil {
		return nil, err
	}
	actions, err := openapi.Actions()
	if err != nil {
		return nil, err
	}
	var tools []tool
	tools = append(tools, dataTools(datasets)...)
	tools = append(tools, actionTools(actions)...)
	tools = append(tools, contentTools()...)
	tools = append(tools, assetTools()...)
	tools = append(tools, crmTools()...)
	return tools, nil
}

// union is every value of the lists, in first-seen order.
func union(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, v := range l {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}
