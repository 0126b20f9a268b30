package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// testSharesByAgency: a link is found by its token's hash; the agency
// lists its links newest first, filtered by client or run, a page at a
// time; a revoke keeps its first time; another agency neither lists nor
// revokes the link (NotFound).
func testSharesByAgency(t *testing.T, s Store) {
	ctx := t.Context()
	a, b, client, run := id(), id(), id(), id()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var made []action.Share
	for i := range 3 {
		sid, _ := uuid.NewV7()
		sh := action.Share{ID: sid.String(), AgencyID: a, ClientID: client, RunID: run, TokenHash: app.HashToken("token-" + sid.String()),
			HTMLName: "h.html", PDFName: "p.pdf", CreatedAt: at, ExpiresAt: at.Add(90 * 24 * time.Hour)}
		if i == 2 {
			sh.ClientID, sh.RunID = id(), id()
		}
		if err := s.CreateShare(ctx, sh); err != nil {
			t.Fatal(err)
		}
		made = append(made, sh)
	}
	got, ok, err := s.ShareByToken(ctx, app.HashToken("token-"+made[0].ID))
	if err != nil || !ok || got.ID != made[0].ID || got.AgencyID != a || got.HTMLName != "h.html" || got.PDFName != "p.pdf" ||
		!got.ExpiresAt.Equal(made[0].ExpiresAt) || !got.RevokedAt.IsZero() || !bytes.Equal(got.TokenHash, made[0].TokenHash) {
		t.Fatalf("ShareByToken = %+v, %v, %v; want %+v", got, ok, err, made[0])
	}
	if _, ok, err := s.ShareByToken(ctx, app.HashToken("nobody")); err != nil || ok {
		t.Fatalf("an unknown token: ok %v, %v; want none", ok, err)
	}
	list, err := s.ListShares(ctx, a, app.ShareFilter{Limit: 10})
	if err != nil || len(list) != 3 || list[0].ID != made[2].ID || list[2].ID != made[0].ID {
		t.Fatalf("ListShares = %d links, %v; want 3, newest first", len(list), err)
	}
	page, _ := s.ListShares(ctx, a, app.ShareFilter{Limit: 2})
	rest, _ := s.ListShares(ctx, a, app.ShareFilter{Limit: 2, Before: page[1].ID})
	if len(page) != 2 || len(rest) != 1 || rest[0].ID != made[0].ID {
		t.Fatalf("pages of 2: %d then %d; want 2 then 1", len(page), len(rest))
	}
	if byClient, _ := s.ListShares(ctx, a, app.ShareFilter{ClientID: client, Limit: 10}); len(byClient) != 2 {
		t.Fatalf("by client: %d links; want 2", len(byClient))
	}
	if byRun, _ := s.ListShares(ctx, a, app.ShareFilter{RunID: made[2].RunID, Limit: 10}); len(byRun) != 1 || byRun[0].ID != made[2].ID {
		t.Fatalf("by run: %+v; want the third link", byRun)
	}
	if other, _ := s.ListShares(ctx, b, app.ShareFilter{Limit: 10}); len(other) != 0 {
		t.Fatalf("another agency lists %d links; want none", len(other))
	}
	if _, err := s.RevokeShare(ctx, b, made[0].ID, at); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another agency's revoke: %v; want NotFound", err)
	}
	if _, err := s.RevokeShare(ctx, a, id(), at); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("an unknown id: %v; want NotFound", err)
	}
	first := at.Add(time.Hour)
	r, err := s.RevokeShare(ctx, a, made[0].ID, first)
	if err != nil || !r.RevokedAt.Equal(first) {
		t.Fatalf("revoke = %+v, %v; want revoked at %v", r, err, first)
	}
	if r, err := s.RevokeShare(ctx, a, made[0].ID, first.Add(time.Hour)); err != nil || !r.RevokedAt.Equal(first) {
		t.Fatalf("a second revoke = %v, %v; want the first time kept", r.RevokedAt, err)
	}
	if got, _, _ := s.ShareByToken(ctx, app.HashToken("token-"+made[0].ID)); got.State(first) != action.ShareRevoked {
		t.Fatalf("state after revoke = %q; want revoked", got.State(first))
	}
	if got, _, _ := s.ShareByToken(ctx, app.HashToken("token-"+made[1].ID)); got.State(got.ExpiresAt) != action.ShareExpired {
		t.Fatalf("state at expiry = %q; want expired", got.State(got.ExpiresAt))
	}
}
