package mcpserver

import (
	"fmt"
	"net/http"
)

// The tools' port to Atrium's public API: what they call, as the holder of
// a key. Each group's part is declared beside its tools (DataAPI,
// ActionsAPI, ContentAPI, AssetsAPI, CRMAPI); atriumsdk implements them
// with the Go SDK over HTTP.
//
// The objects the API answers (rows, items, runs, actions, assets, ...)
// reach the model as the API gave them: the tools read none of their
// fields but an item's version and an action's outcome, so the port hands
// them over as JSON (json.RawMessage) rather than mirror types the API's
// documentation and the SDK already define.

// API is the public API as one caller calls it, with that caller's key.
type API interface {
	DataAPI
	ActionsAPI
	ContentAPI
	AssetsAPI
	CRMAPI
}

// Connector gives the API as the holder of a key calls it. It only
// prepares the calls (no I/O): the HTTP transport asks for one per tool
// call, with the key that request carried.
type Connector interface {
	Connect(key string) API
}

// APIError is an answer of the API other than a success: its status, its
// message (which names what was wrong and what is allowed) and the
// request's trace id. Any other error of a port method is a failure to
// reach the API.
type APIError struct {
	StatusCode int
	Message    string
	TraceID    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Page selects a page of a list paged by limit and offset; zero values
// are the API's defaults.
type Page struct {
	Limit, Offset int
}

// Credits are an amount of AI and data credits.
type Credits struct {
	AI   int `json:"ai"`
	Data int `json:"data"`
}
