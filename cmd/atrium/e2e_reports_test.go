package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testReports is the client report's journey as an agency goes through
// it: set its branding (a read key may not, a bad colour is a 400),
// generate a report for a client, open the HTML page and the PDF at the
// URLs the run gives, without a key, and find the agency and the figures
// in both.
func testReports(t *testing.T, s *stack) {
	tn := s.newTenant(t)
	client := s.newClient(t, tn, true)
	s.grant(t, tn.agency, 100, 100)
	// The logo is an asset of the agency's site; the report draws it.
	logo := s.newAsset(t, tn.write, "logo.png", pngBytes(t, 90, 30))
	branding := map[string]any{"name": "Northwind SEO", "colors": map[string]any{"primary": "#12345a", "accent": "#ffaa00"}, "logo_asset_id": logo["id"]}
	wantError(t, call(t, "PUT", s.api+"/api/v1/branding", tn.read, branding), http.StatusForbidden)
	wantError(t, call(t, "PUT", s.api+"/api/v1/branding", tn.write, map[string]any{"name": "X", "colors": map[string]any{"primary": "blue"}}), http.StatusBadRequest, "colors.primary", "#rrggbb")
	r := call(t, "PUT", s.api+"/api/v1/branding", tn.write, branding)
	wantStatus(t, r, http.StatusOK)
	if got := call(t, "GET", s.api+"/api/v1/branding", tn.read, nil); got.json["branding"].(map[string]any)["name"] != "Northwind SEO" {
		t.Fatalf("GET /api/v1/branding = %s", got)
	}
	// Another agency's branding is its own.
	other := s.newTenant(t)
	if got := call(t, "GET", s.api+"/api/v1/branding", other.read, nil); got.json["branding"].(map[string]any)["name"] != "Atrium" {
		t.Fatalf("another agency's branding = %s", got)
	}

	rep := s.act(t, tn.write, map[string]any{"action": "generate_report", "client_id": client, "period": map[string]any{"from": "2020-01-01", "to": "2021-01-05"}})
	wantError(t, rep, http.StatusBadRequest, "at most 366")
	rep = s.act(t, tn.write, map[string]any{"action": "generate_report", "client_id": client, "period": "last_month", "timezone": "Europe/London"})
	data := wantAction(t, rep, "generate_report", client, "success")
	htmlURL, _ := data["html_url"].(string)
	pdfURL, _ := data["pdf_url"].(string)

	page := fetchFile(t, htmlURL)
	if ct := page.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("report page Content-Type = %q", ct)
	}
	csp := page.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || page.header.Get("X-Robots-Tag") != "noindex, nofollow" {
		t.Fatalf("report page headers = %v", page.header)
	}
	for _, want := range []string{"Northwind SEO", "#12345a", `<meta name="robots" content="noindex, nofollow">`, `<img class="logo" src="data:image/png;base64,`} {
		if !strings.Contains(string(page.body), want) {
			t.Fatalf("the report page lacks %q", want)
		}
	}
	pdf := fetchFile(t, pdfURL)
	path := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(path, pdf.body, 0o600); err != nil {
		t.Fatal(err)
	}
	text, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (make services-up installs poppler-utils): %v", err)
	}
	if !strings.Contains(string(text), "Northwind SEO") || !strings.Contains(string(text), "Work done") {
		t.Fatalf("the PDF's text:\n%s", text)
	}
	if imgs, err := exec.Command("pdfimages", "-list", path).Output(); err != nil || !strings.Contains(string(imgs), "   90    30 ") {
		t.Fatalf("pdfimages -list: %v\n%s; want the 90x30 logo", err, imgs)
	}

	// The share link: the same page without a key, until revoked.
	shareURL, _ := data["share_url"].(string)
	if !strings.HasPrefix(shareURL, s.api+"/r/") {
		t.Fatalf("share_url = %q; want %s/r/{token}", shareURL, s.api)
	}
	shared := fetchFile(t, shareURL)
	if !strings.Contains(string(shared.body), "Northwind SEO") || shared.header.Get("X-Robots-Tag") != "noindex, nofollow" ||
		shared.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("the shared page: headers %v", shared.header)
	}
	if sharedPDF := fetchFile(t, shareURL+".pdf"); !strings.HasPrefix(string(sharedPDF.body), "%PDF") {
		t.Fatalf("the shared PDF starts %q", sharedPDF.body[:min(16, len(sharedPDF.body))])
	}
	list := call(t, "GET", s.api+"/api/v1/report-shares?client_id="+client, tn.read, nil)
	wantStatus(t, list, http.StatusOK)
	shares, _ := list.json["shares"].([]any)
	if len(shares) != 1 || shares[0].(map[string]any)["state"] != "active" || shares[0].(map[string]any)["run_id"] == nil {
		t.Fatalf("GET /api/v1/report-shares = %s", list)
	}
	shareID, _ := shares[0].(map[string]any)["id"].(string)
	if got := call(t, "GET", s.api+"/api/v1/report-shares", other.read, nil); len(got.json["shares"].([]any)) != 0 {
		t.Fatalf("another agency lists %s", got)
	}
	wantError(t, call(t, "GET", s.api+"/api/v1/report-shares?limit=101", tn.read, nil), http.StatusBadRequest, "limit")
	wantError(t, call(t, "DELETE", s.api+"/api/v1/report-shares/"+shareID, other.write, nil), http.StatusNotFound)
	wantError(t, call(t, "DELETE", s.api+"/api/v1/report-shares/"+shareID, tn.read, nil), http.StatusForbidden)
	fetchFile(t, shareURL) // neither changed anything
	wantStatus(t, call(t, "DELETE", s.api+"/api/v1/report-shares/"+shareID, tn.write, nil), http.StatusOK)
	for _, u := range []string{shareURL, shareURL + ".pdf"} {
		resp, err := http.Get(u) //nolint:gosec // G107: a URL the run under test gave
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusGone || !strings.Contains(string(b), "Ask the agency that sent it for a new one") {
			t.Fatalf("GET %s after the revoke = %d %s; want 410", u, resp.StatusCode, b)
		}
	}
	// The media URLs are not the share link: they still work (unlisted).
	fetchFile(t, htmlURL)

	// A new link for the same run, as the agency sends its client.
	runID, _ := shares[0].(map[string]any)["run_id"].(string)
	newShare := map[string]any{"run_id": runID, "expires_in_days": 7}
	wantError(t, call(t, "POST", s.api+"/api/v1/report-shares", other.write, newShare), http.StatusNotFound)
	wantError(t, call(t, "POST", s.api+"/api/v1/report-shares", tn.read, newShare), http.StatusForbidden)
	wantError(t, call(t, "POST", s.api+"/api/v1/report-shares", tn.write, map[string]any{"run_id": runID, "expires_in_days": 366}), http.StatusBadRequest, "expires_in_days", "1 to 365")
	created := call(t, "POST", s.api+"/api/v1/report-shares", tn.write, newShare)
	wantStatus(t, created, http.StatusCreated)
	share, _ := created.json["share"].(map[string]any)
	newURL, _ := share["url"].(string)
	if share["state"] != "active" || share["run_id"] != runID || newURL == shareURL || !strings.HasPrefix(newURL, s.api+"/r/") {
		t.Fatalf("POST /api/v1/report-shares = %s", created)
	}
	if again := fetchFile(t, newURL); !strings.Contains(string(again.body), "Northwind SEO") {
		t.Fatal("the new share link does not show the report")
	}
	if got := call(t, "GET", s.api+"/api/v1/report-shares?run_id="+runID, tn.read, nil); len(got.json["shares"].([]any)) != 2 {
		t.Fatalf("the run's links after a new one: %s", got)
	}
}

// fetchFile GETs a file without a key and wants a 200.
func fetchFile(t *testing.T, u string) response {
	t.Helper()
	resp, err := http.Get(u) //nolint:gosec // G107: a URL the run under test gave
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", u, resp.StatusCode, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}
