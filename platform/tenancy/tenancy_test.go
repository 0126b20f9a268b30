package tenancy

import (
	"context"
	"errors"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

const client = "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b"

// crm is a lookup that knows one linked client and counts its calls.
type crm struct {
	calls int
	down  bool
}

func (c *crm) linked(_ context.Context, id string) (string, bool, error) {
	c.calls++
	if c.down {
		return "", false, errors.New("connection refused")
	}
	return "Bakery", id == client, nil
}

func (c *crm) exists(ctx context.Context, id string) (bool, error) {
	_, ok, err := c.linked(ctx, id)
	return ok, err
}

// TestWording pins the texts the docs quote (docs/datasets.md,
// docs/actions.md).
func TestWording(t *testing.T) {
	ctx := t.Context()
	up, down := &crm{}, &crm{down: true}
	for _, tc := range []struct {
		err  error
		kind apperr.Kind
		want string
	}{
		{second(Linked(ctx, "not-a-uuid", up.linked)), apperr.KindPermissionDenied,
			`client "not-a-uuid" is not linked to this key's agency, or does not exist; an administrator links clients to agencies`},
		{second(Linked(ctx, "0190b7a8-3c1e-7d2f-9a4b-000000000000", up.linked)), apperr.KindPermissionDenied,
			`client "0190b7a8-3c1e-7d2f-9a4b-000000000000" is not linked to this key's agency, or does not exist; an administrator links clients to agencies`},
		{second(Linked(ctx, client, down.linked)), apperr.KindUnavailable,
			`cannot check the client's link to the agency now: the CRM service is unavailable; retry later`},
		{last(Existing(ctx, "client", "nope", up.exists)), apperr.KindNotFound, `client "nope" not found`},
		{last(Existing(ctx, "agency", "0190b7a8-3c1e-7d2f-9a4b-000000000000", up.exists)), apperr.KindNotFound,
			`agency "0190b7a8-3c1e-7d2f-9a4b-000000000000" not found`},
		{last(Existing(ctx, "agency", client, down.exists)), apperr.KindUnavailable,
			`cannot check the agency now: the CRM service is unavailable; retry later`},
	} {
		if tc.err == nil || tc.err.Error() != tc.want || apperr.KindOf(tc.err) != tc.kind {
			t.Errorf("got %v (kind %d)\nwant %q (kind %d)", tc.err, apperr.KindOf(tc.err), tc.want, tc.kind)
		}
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }
func last[A any](_ A, err error) error           { return err }

func TestLinkedAnswersWithTheCanonicalID(t *testing.T) {
	c := &crm{}
	id, name, err := Linked(t.Context(), "0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B", c.linked)
	if err != nil || id != client || name != "Bakery" {
		t.Fatalf("Linked = %q, %q, %v; want the canonical id and the lookup's answer", id, name, err)
	}
	if _, _, err := Linked(t.Context(), "'; DROP TABLE clients; --", c.linked); apperr.KindOf(err) != apperr.KindPermissionDenied {
		t.Fatalf("a malformed id: %v", err)
	}
	if c.calls != 1 {
		t.Fatalf("the CRM was asked %d times; an id that is not a UUID is refused without asking", c.calls)
	}
	if id, err := Existing(t.Context(), "client", "0190B7A8-3C1E-7D2F-9A4B-5C6D7E8F9A0B", c.exists); err != nil || id != client {
		t.Fatalf("Existing = %q, %v", id, err)
	}
}
