package gateway

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/gateway/mcpserver/atriumsdk"
	"github.com/atrium-hq/atrium/platform/principal"
)

// mcpPath is where the public listener serves the MCP server
// (gateway/mcpserver) over streamable HTTP.
const mcpPath = "/mcp"

// withMCP serves /mcp in front of the public mux. The MCP server is a
// client of the public API: its tools call the routes on this same
// listener with the caller's key, so every call is authenticated,
// authorized, rate-limited and logged as any other. The key is also
// authenticated here, first, so that an unknown key is a 401 before any
// MCP exchange, and so that the tools listed are the key's (mcpserver
// decides them from its principal).
func (g *Gateway) withMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mcpPath {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		nameRequest(ctx, r.Method+" "+mcpPath, g.metrics.named(r.Method, mcpPath))
		if r.Method != http.MethodPost {
			// Stateless: no session, so no GET stream and no DELETE.
			w.Header().Set("Allow", http.MethodPost)
			rest.WriteJSON(w, http.StatusMethodNotAllowed, rest.Body{Error: fmt.Sprintf(
				"method %s is not allowed on %s; allowed: POST (MCP streamable HTTP, stateless: every POST is a whole exchange, there is no stream to GET or session to DELETE)", r.Method, mcpPath)})
			return
		}
		p, err := g.authenticateKey(r)
		if err != nil {
			rest.WriteError(ctx, g.cfg.Logger, w, r, err)
			return
		}
		if g.limiter != nil {
			if ok, wait := g.limiter.allow(rateKey(p)); !ok {
				g.limiter.writeRateLimited(w, wait)
				return
			}
		}
		g.mcpHandler.ServeHTTP(w, r.WithContext(principal.NewContext(ctx, p)))
	})
}

// mcpAPI is the public API as the MCP server's tools call it: with the Go
// SDK (mcpserver/atriumsdk), over HTTP, at the public listener's own
// address addr.
func mcpAPI(addr net.Addr, version string) *atriumsdk.Connector {
	return atriumsdk.New(loopbackURL(addr), atriumsdk.Config{Version: version})
}

// loopbackURL is the base URL the MCP server calls the public API at: the
// listener's own address, on the loopback interface when it listens on
// every interface.
func loopbackURL(addr net.Addr) string {
	host, port := "127.0.0.1", ""
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
		if !ta.IP.IsUnspecified() {
			host = ta.IP.String()
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
