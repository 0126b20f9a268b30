// Package atriumsdk is the MCP server's port to Atrium's public API
// (mcpserver.API), implemented with the Go SDK (sdk/go) over HTTP: the
// tools' calls are the SDK's, with its retries, idempotency keys and
// errors, as any other client of the API makes them.
//
// The objects the SDK decodes go to the tools as the JSON they marshal
// to, so that the model reads them as the SDK's users do; the SDK's
// errors become mcpserver.APIError.
//
// It is not under internal/ because both places that serve the MCP server
// wire it: the gateway (/mcp) and cmd/atrium (`atrium mcp`, stdio).
package atriumsdk
