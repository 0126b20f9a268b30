package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/natstest"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/rpc"
	"github.com/atrium-hq/atrium/platform/runner"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	crm "github.com/atrium-hq/atrium/services/crm/service"
)

var secret = []byte("example-test-secret-0123456789abcdef")

// TestExampleListsProspects runs the example against a CRM service: it
// pages through every prospect of its agency and none of another's.
func TestExampleListsProspects(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	nowhere := l.Addr().String()
	l.Close()
	svc, err := crm.New(t.Context(), crm.Config{CollectionsAddr: nowhere, Config: runner.Config{
		GRPCAddr: "127.0.0.1:0", Backing: runner.Backing{NATSURL: natstest.URL(t)}, InternalSecret: secret,
		Logger: slog.New(slog.DiscardHandler),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	}()

	conn, err := rpc.Dial(svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	signer, _ := principal.NewSigner(secret)
	asAdmin := signer.OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindAdmin, Subject: "admin"})
	admin := crmv1.NewCRMAdminServiceClient(conn)
	var agencies []string
	for _, name := range []string{"Mine", "Theirs"} {
		a, err := admin.CreateAgency(asAdmin, &crmv1.CreateAgencyRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		agencies = append(agencies, a.Agency.Id)
		for i := range 230 { // more than one page of 200
			if _, err := admin.CreateProspect(asAdmin, &crmv1.CreateProspectRequest{AgencyId: a.Agency.Id,
				BusinessName: fmt.Sprintf("%s %d", name, i), WebsiteUrl: fmt.Sprintf("https://p%d.example", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out strings.Builder
	if err := listProspects(t.Context(), &out, svc.Addr(), secret, agencies[0]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 230 || strings.Contains(out.String(), "Theirs") || !strings.Contains(lines[0], "Mine 229") {
		t.Fatalf("example printed %d lines (want 230 of agency Mine, newest first):\n%s", len(lines), out.String())
	}
	if err := listProspects(t.Context(), &out, svc.Addr(), []byte("not-the-deployment-secret-0123456789"), agencies[0]); err == nil {
		t.Fatal("a principal signed with another secret was accepted")
	}
}

// TestDocShowsTheExample: docs/grpc.md shows this program as it is.
func TestDocShowsTheExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/grpc.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(src)) {
		t.Fatal("docs/grpc.md does not contain examples/listprospects/main.go verbatim; paste the file into its Go example")
	}
}
