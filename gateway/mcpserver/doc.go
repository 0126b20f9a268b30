// Package mcpserver is Atrium's Model Context Protocol server: a dozen
// tools in four groups (data, actions, content, CRM) that an AI client
// calls instead of the HTTP API, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// It is a client of Atrium's own public API: the tools call a port
// declared here (API, api.go: what each group of tools needs of the API),
// which atriumsdk implements with the Go SDK (sdk/go) and the gateway and
// `atrium mcp` wire in. Every tool is one or two calls of a documented
// route, made with the caller's own API key, so the key's scopes and binding decide what a
// tool may do by the same rules as the HTTP API, and the API's messages
// reach the model as tool errors. Tools take the names the HTTP API gives
// its parameters (resource, client_id, limit, order, filter_field, ...),
// and their input schemas come from the same catalogs as the OpenAPI
// document (gateway/openapi).
//
// Two transports serve the same tools:
//   - streamable HTTP at /mcp on the gateway's public listener, stateless:
//     the gateway authenticates the key, and the tools listed are those
//     the key may call (a read key sees the read tools only; a site's key
//     the content tools, an agency's key the others), judged by
//     principal.Authorize against the access rule of each tool's route;
//   - stdio (`atrium mcp`), with one key and the API's URL from the
//     environment, for desktop AI clients that start a process.
//
// Read-only mode hides every write tool whatever the key.
package mcpserver
