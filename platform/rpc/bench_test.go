package rpc

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/telemetry"
)

// BenchmarkCall is one unary call through Atrium's client and server (the
// health check, which needs no principal), over loopback and in process
// (Local), with the
// OpenTelemetry globals (no trace ids, nothing recorded) and with a
// process's telemetry as telemetry.Setup makes it without an exporter
// (spans not sampled but carrying ids, which travel in the metadata; call
// metrics kept for /metrics). The call metrics themselves allocate nothing
// (see callMetrics): the difference is the trace context.
func BenchmarkCall(b *testing.B) {
	for _, bc := range []struct {
		name string
		tel  func(b *testing.B) *telemetry.Telemetry
	}{
		{"globals", func(*testing.B) *telemetry.Telemetry { return nil }},
		{"telemetry", func(b *testing.B) *telemetry.Telemetry {
			tel, err := telemetry.Setup(b.Context(), telemetry.Config{ServiceName: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
			return tel
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tel := bc.tel(b)
			signer, _ := principal.NewSigner([]byte(strings.Repeat("s", 32)))
			srv, err := Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, tel)
			if err != nil {
				b.Fatal(err)
			}
			srv.SetHealth("")
			go func() { _ = srv.Serve() }()
			defer srv.Stop()
			for _, transport := range []string{"network", "in-process"} {
				b.Run(transport, func(b *testing.B) {
					var local *Local
					if transport == "in-process" {
						local = NewLocal()
						local.Add(srv)
					}
					conn, err := local.Dial(srv.Addr(), tel)
					if err != nil {
						b.Fatal(err)
					}
					defer conn.Close()
					c := healthpb.NewHealthClient(conn)
					if _, err := c.Check(b.Context(), &healthpb.HealthCheckRequest{}); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					for b.Loop() {
						if _, err := c.Check(b.Context(), &healthpb.HealthCheckRequest{}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
