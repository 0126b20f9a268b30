package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// MetricsServer is a process's operations listener (--metrics-addr): GET
// /metrics in the Prometheus text format, GET /healthz (the process is up)
// and GET /readyz (it is ready to serve). Like every probe it needs no
// credentials: the metrics are counts, durations and states named by
// route, RPC, service and action, never a tenant's id or data, and the
// listener belongs on the cluster network, not on a public one.
type MetricsServer struct {
	srv *http.Server
	lis net.Listener
}

// ListenMetrics binds addr. ready says why the process is not ready, or
// nil when it is.
func ListenMetrics(addr string, metrics http.Handler, ready func() error, logger *slog.Logger) (*MetricsServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "not ready: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics", "/healthz", "/readyz":
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: GET"})
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such path: this listener serves GET /metrics, /healthz and /readyz"})
		}
	})
	return &MetricsServer{lis: lis, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}}, nil
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// Addr is the address the listener is bound to.
func (m *MetricsServer) Addr() string { return m.lis.Addr().String() }

// Serve serves until Shutdown.
func (m *MetricsServer) Serve() error {
	if err := m.srv.Serve(m.lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the listener, letting a scrape in progress finish until
// ctx ends.
func (m *MetricsServer) Shutdown(ctx context.Context) {
	if err := m.srv.Shutdown(ctx); err != nil {
		_ = m.srv.Close()
	}
}

// Close releases the listener of a server that will not Serve.
func (m *MetricsServer) Close() { _ = m.lis.Close() }
