package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/platform/rpc"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
)

// fakeShares answers GetSharedReport from a table of tokens.
type fakeShares struct {
	actionsv1.UnimplementedReportsServiceServer
	links map[string]*actionsv1.GetSharedReportResponse
}

func (f *fakeShares) GetSharedReport(_ context.Context, req *actionsv1.GetSharedReportRequest) (*actionsv1.GetSharedReportResponse, error) {
	if r, ok := f.links[req.Token]; ok {
		return r, nil
	}
	return nil, apperr.NotFound("no report share link with this token")
}

func TestShareLinks(t *testing.T) {
	htmlName, pdfName := publicfile.NewName("html"), publicfile.NewName("pdf")
	page, pdf := []byte(`<!doctype html><meta name="robots" content="noindex"><h1>Northwind report</h1>`), []byte("%PDF-1.7 report")
	objects, err := localdir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{htmlName: page, pdfName: pdf} {
		key, _ := publicfile.MediaKey(name)
		ct, _ := publicfile.ContentType(name)
		if err := objects.Put(t.Context(), key, bytes.NewReader(b), int64(len(b)), ct); err != nil {
			t.Fatal(err)
		}
	}
	const live, revoked, expired = "AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCC"
	f := &fakeShares{links: map[string]*actionsv1.GetSharedReportResponse{
		live:    {State: "active", HtmlName: htmlName, PdfName: pdfName},
		revoked: {State: "revoked"},
		expired: {State: "expired"},
	}}
	signer, _ := principal.NewSigner(secret)
	srv, err := rpc.Listen("127.0.0.1:0", slog.New(slog.DiscardHandler), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	actionsv1.RegisterReportsServiceServer(srv, f)
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Stop)
	other := closedAddr(t)
	r := startGatewayTo(t, map[string]string{"crm": other, "collections": other, "data": other, "actions": srv.Addr(), "webhooks": other, "audit": other},
		func(c *Config) { c.Objects = objects })
	base := "http://" + r.gw.HTTPAddr()

	for _, tc := range []struct {
		path, wantType string
		want           int
		wantBody       string
	}{
		{"/r/" + live, "text/html", http.StatusOK, "Northwind report"},
		{"/r/" + live + ".pdf", "application/pdf", http.StatusOK, "%PDF-1.7 report"},
		{"/r/" + revoked, "text/html", http.StatusGone, "Ask the agency that sent it for a new one"},
		{"/r/" + expired + ".pdf", "text/html", http.StatusGone, "it has expired"},
		{"/r/DDDDDDDDDDDDDDDDDDDDDD", "text/html", http.StatusNotFound, "does not exist"},
		{"/r/not%20a%20token", "text/html", http.StatusNotFound, "does not exist"},
	} {
		// No Authorization header: a client opens the link as it is.
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.wantType) || !strings.Contains(string(body), tc.wantBody) {
			t.Errorf("GET %s = %d %s %q; want %d %s containing %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.want, tc.wantType, tc.wantBody)
		}
		for h, want := range map[string]string{"X-Robots-Tag": "noindex", "Cache-Control": "private, no-store", "Content-Security-Policy": "sandbox"} {
			if !strings.Contains(resp.Header.Get(h), want) {
				t.Errorf("GET %s: %s = %q; want it to contain %q", tc.path, h, resp.Header.Get(h), want)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/r/"+live, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST a share link = %d; want 405", resp.StatusCode)
	}
}
