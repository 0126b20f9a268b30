package app_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/memdb"
	"github.com/atrium-hq/atrium/services/actions/internal/adapters/memory"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// A share link's token is 128 random bits in base64url, kept only as its
// hash; the link works until it expires or is revoked; bad input is a 400
// naming what is allowed and makes nothing.
func TestShareLinks(t *testing.T) {
	st := memory.New(memdb.New(nil))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sh := app.NewShares(st, func() time.Time { return now }, func() string { return "https://atrium.example" })
	ctx := t.Context()
	agency, other := uuid.NewString(), uuid.NewString()
	report := app.Run{ID: uuid.NewString(), AgencyID: agency, ClientID: uuid.NewString(), Action: "generate_report", Status: app.StatusSuccess,
		Data: map[string]any{"html_url": "https://atrium.example/media/a.html", "pdf_url": "https://atrium.example/media/b.pdf"}}
	other1 := app.Run{ID: uuid.NewString(), AgencyID: agency, Action: "run_grid_search", Status: app.StatusSuccess}
	runs := func(_ context.Context, agencyID, id string) (app.Run, error) {
		for _, r := range []app.Run{report, other1} {
			if r.ID == id && r.AgencyID == agencyID {
				return r, nil
			}
		}
		return app.Run{}, apperr.NotFound("run %q not found", id)
	}

	made, url, err := sh.Create(ctx, runs, agency, report.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	token, ok := strings.CutPrefix(url, "https://atrium.example/r/")
	if !ok || !regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`).MatchString(token) {
		t.Fatalf("url = %q; want https://atrium.example/r/ and 22 base64url characters", url)
	}
	if bytes.Contains(made.TokenHash, []byte(token)) || !bytes.Equal(made.TokenHash, app.HashToken(token)) {
		t.Fatal("the link keeps something other than the token's SHA-256")
	}
	if !made.ExpiresAt.Equal(now.Add(90*24*time.Hour)) || made.HTMLName != "a.html" || made.PDFName != "b.pdf" || made.ClientID != report.ClientID {
		t.Fatalf("link = %+v; want 90 days, the run's files and client", made)
	}
	if got, state, err := sh.Resolve(ctx, token); err != nil || state != action.ShareActive || got.ID != made.ID {
		t.Fatalf("Resolve = %v, %q, %v; want the link, active", got.ID, state, err)
	}
	if _, _, err := sh.Resolve(ctx, "AAAAAAAAAAAAAAAAAAAAAA"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("an unknown token: %v; want NotFound", err)
	}

	for _, c := range []struct {
		agency, run string
		days        int
		kind        apperr.Kind
		words       string
	}{
		{agency, report.ID, 366, apperr.KindInvalid, "expires_in_days must be 1 to 365; got 366"},
		{agency, report.ID, -1, apperr.KindInvalid, "expires_in_days must be 1 to 365"},
		{agency, "", 0, apperr.KindInvalid, "run_id is required"},
		{agency, other1.ID, 0, apperr.KindInvalid, "not a successful generate_report run"},
		{other, report.ID, 0, apperr.KindNotFound, "not found"},
	} {
		if _, _, err := sh.Create(ctx, runs, c.agency, c.run, c.days); apperr.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.words) {
			t.Errorf("Create(%s, %d) = %v; want %v with %q", c.run, c.days, err, c.kind, c.words)
		}
	}
	for _, f := range []app.ShareFilter{{Limit: 101}, {Limit: -1}, {ClientID: "x"}, {RunID: "x"}} {
		if _, _, err := sh.List(ctx, agency, f); apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("List(%+v) = %v; want a 400", f, err)
		}
	}
	if list, _, _ := sh.List(ctx, agency, app.ShareFilter{}); len(list) != 1 {
		t.Fatalf("after refused creates: %d links; want 1 (nothing made)", len(list))
	}
	if _, err := sh.Revoke(ctx, agency, "not-a-uuid"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("Revoke(not-a-uuid) = %v; want NotFound", err)
	}
	if _, err := sh.Revoke(ctx, other, made.ID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another agency's revoke = %v; want NotFound", err)
	}
	if _, state, _ := sh.Resolve(ctx, token); state != action.ShareActive {
		t.Fatalf("after another agency's revoke: %q; want active", state)
	}
	if _, err := sh.Revoke(ctx, agency, made.ID); err != nil {
		t.Fatal(err)
	}
	if _, state, _ := sh.Resolve(ctx, token); state != action.ShareRevoked {
		t.Fatalf("after the revoke: %q; want revoked", state)
	}
	_, url2, _ := sh.Create(ctx, runs, agency, report.ID, 1)
	now = now.Add(24 * time.Hour)
	if _, state, _ := sh.Resolve(ctx, strings.TrimPrefix(url2, "https://atrium.example/r/")); state != action.ShareExpired {
		t.Fatalf("a one-day link a day later: %q; want expired", state)
	}
}
