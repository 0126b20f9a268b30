package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/platform/principal"
)

// Config configures the MCP server.
type Config struct {
	// ReadOnly hides every write tool (create_item, update_item,
	// run_action) from every caller (--mcp-read-only).
	ReadOnly bool
	// Version is the server's version, told to clients.
	Version string
	// Logger receives the SDK's log lines; nil: none.
	Logger *slog.Logger
}

// Server holds the tools and serves them over either transport.
type Server struct {
	cfg   Config
	tools []tool

	mu sync.Mutex
	// byClass are the HTTP transport's servers, one per class of key
	// (scopes and binding; classOf): a handful at most, each built once.
	byClass map[string]*mcp.Server
}

// tool is one tool: its definition, the route whose access rule decides
// who sees it, and its handler.
type tool struct {
	def *mcp.Tool
	// method is the gRPC method (/atrium.data.v1.DataService/ReadDataset)
	// behind the route the tool calls.
	method string
	// add registers the tool on srv, calling the API as apiFor gives it
	// for each call.
	add func(srv *mcp.Server, def *mcp.Tool, apiFor func(*mcp.CallToolRequest) API)
}

// New builds the tools from the catalogs. It fails only when the catalogs
// or a tool's schema are broken, which the tests would have caught.
func New(cfg Config) (*Server, error) {
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tools, err := buildTools()
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	s := &Server{cfg: cfg, tools: tools, byClass: map[string]*mcp.Server{}}
	// Every tool registered once, so that a schema the SDK refuses fails
	// here rather than on a caller's request.
	if _, err := s.build(func(tool) bool { return true }, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// ToolNames are the names of the tools a caller with p sees over HTTP, in
// the order they are listed.
func (s *Server) ToolNames(p principal.Principal) []string {
	var names []string
	for _, t := range s.tools {
		if s.visibleTo(p)(t) {
			names = append(names, t.def.Name)
		}
	}
	return names
}

// visibleTo says which tools a caller with p may call: those whose route's
// access rule p passes (principal.Authorize, the rule the gateway and the
// services apply to the calls the tool makes), less the write tools in
// read-only mode. A tool whose route this build does not have is hidden.
func (s *Server) visibleTo(p principal.Principal) func(tool) bool {
	return func(t tool) bool {
		a, ok := principal.AccessOf(t.method)
		if !ok || (s.cfg.ReadOnly && a.Scope == principal.ScopeWrite) {
			return false
		}
		return principal.Authorize(p, a) == nil
	}
}

// anyKey is the stdio transport's rule: its process does not know the
// key's scopes (the API does), so every tool is listed and the API
// answers a call the key may not make with its 403, as a tool error.
func (s *Server) anyKey(t tool) bool {
	a, ok := principal.AccessOf(t.method)
	return ok && !(s.cfg.ReadOnly && a.Scope == principal.ScopeWrite)
}

// build makes an SDK server with the tools show admits.
func (s *Server) build(show func(tool) bool, apiFor func(*mcp.CallToolRequest) API) (srv *mcp.Server, err error) {
	// The SDK panics on a schema it cannot resolve (mcp.AddTool); our
	// schemas are static, so New turns that into an error once.
	defer func() {
		if v := recover(); v != nil {
			srv, err = nil, fmt.Errorf("mcp: registering the tools: %v", v)
		}
	}()
	srv = mcp.NewServer(&mcp.Implementation{Name: "atrium", Title: "Atrium", Version: s.cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.cfg.Logger,
	})
	for _, t := range s.tools {
		if show(t) {
			t.add(srv, t.def, apiFor)
		}
	}
	return srv, nil
}

const instructions = "Atrium is the backend of an SEO and marketing agency. Data tools read each client's datasets " +
	"(list_clients gives the client ids, list_datasets the datasets and their fields, read_dataset a page of one); " +
	"action tools run work that spends the agency's credits (list_actions gives each action's fields, cost and the balance; " +
	"run_action runs one: pass an idempotency_key and reuse it when you retry, so that it never runs twice); " +
	"content tools read and write a site's collections; CRM tools list the agency's prospects and deals. " +
	"Arguments are named as the HTTP API names its parameters; errors carry the API's message, which says what was wrong and what is allowed."

// classOf is what of p decides its tools: its scopes, which tenants it is
// bound to (not which ones: the API scopes every call) and whether it is
// published_only (such a key sees only the tools of the routes open to it).
func classOf(p principal.Principal) string {
	return fmt.Sprint(p.Kind, p.HasScope(principal.ScopeRead), p.HasScope(principal.ScopeWrite), p.SiteID != "", p.AgencyID != "", p.PublishedOnly)
}

// Handler is the streamable HTTP transport, stateless: each POST is a
// whole exchange. The gateway authenticates the key first and puts its
// principal in the request's context; the tools call the API api connects
// them to with the key the request carried.
func (s *Server) Handler(api Connector) http.Handler {
	apiFor := func(req *mcp.CallToolRequest) API {
		var key string
		if req.Extra != nil {
			key, _ = strings.CutPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
		}
		return api.Connect(strings.TrimSpace(key))
	}
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		p, ok := principal.FromContext(r.Context())
		if !ok {
			return nil // the gateway always sets it: answered 400
		}
		srv, err := s.forClass(p, apiFor)
		if err != nil {
			s.cfg.Logger.Error("mcp: building the tools", "error", err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.cfg.Logger,
		// The SDK refuses a request that reaches a loopback address with
		// another Host (DNS rebinding against an unauthenticated local
		// server). Every request here carries an API key a rebinding page
		// does not have, and the check would refuse a reverse proxy on the
		// same host that forwards the public name.
		DisableLocalhostProtection: true})
}

func (s *Server) forClass(p principal.Principal, apiFor func(*mcp.CallToolRequest) API) (*mcp.Server, error) {
	class := classOf(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv, ok := s.byClass[class]; ok {
		return srv, nil
	}
	srv, err := s.build(s.visibleTo(p), apiFor)
	if err != nil {
		return nil, err
	}
	s.byClass[class] = srv
	return srv, nil
}

// ServeStdio serves the tools over in and out (a process's stdin and
// stdout) until the client closes in or ctx ends, calling api (the API
// with the process's one key).
func (s *Server) ServeStdio(ctx context.Context, api API, in io.ReadCloser, out io.WriteCloser) error {
	srv, err := s.build(s.anyKey, func(*mcp.CallToolRequest) API { return api })
	if err != nil {
		return err
	}
	err = srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client went away, or we were asked to stop
	}
	return err
}

// apiError is what a tool answers for a failed API call: the API's own
// message, which names what was wrong and what is allowed, with the
// status and the trace id to quote to an operator.
func apiError(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		msg := fmt.Sprintf("%s (HTTP %d %s", ae.Message, ae.StatusCode, http.StatusText(ae.StatusCode))
		if ae.TraceID != "" {
			msg += ", trace id " + ae.TraceID
		}
		return errors.New(msg + ")")
	}
	return fmt.Errorf("calling the Atrium API: %w", err)
}
