package pagination

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/apperr"
)

func TestParse(t *testing.T) {
	crm := Policy{DefaultLimit: 50, MaxLimit: 200, Clamp: true}
	strict := Policy{DefaultLimit: 100, MaxLimit: 1000}
	tests := []struct {
		name          string
		policy        Policy
		limit, offset *int32
		want          Page
		wantErr       string
	}{
		{"defaults", crm, nil, nil, Page{Limit: 50}, ""},
		{"explicit", crm, new(int32(7)), new(int32(3)), Page{Limit: 7, Offset: 3}, ""},
		{"clamped", crm, new(int32(201)), nil, Page{Limit: 200}, ""},
		{"at max", crm, new(int32(200)), nil, Page{Limit: 200}, ""},
		{"zero", crm, new(int32(0)), nil, Page{}, "limit must be an integer of at least 1"},
		{"negative", crm, new(int32(-5)), nil, Page{}, "got -5"},
		{"negative offset", crm, nil, new(int32(-1)), Page{}, "offset must be an integer of 0 or more"},
		{"strict over max", strict, new(int32(1001)), nil, Page{}, "limit must be an integer from 1 to 1000"},
		{"strict max", strict, new(int32(1000)), nil, Page{Limit: 1000}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.policy.Parse(tt.limit, tt.offset)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() error = %v, want it to contain %q", err, tt.wantErr)
				}
				if apperr.KindOf(err) != apperr.KindInvalid {
					t.Fatalf("Parse() error kind = %v, want KindInvalid", apperr.KindOf(err))
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestCursorBoundToItsQuery: a cursor gives back its position with the
// same parameters only; with others, or altered, it is a 400 that says
// what to do.
func TestCursorBoundToItsQuery(t *testing.T) {
	c := Cursor("0192f7c4-0000-7000-8000-000000000001", "webhook-1", "failed")
	if got, err := ReadCursor(c, "the webhook and status", "webhook-1", "failed"); err != nil || got != "0192f7c4-0000-7000-8000-000000000001" {
		t.Fatalf("ReadCursor with the same parameters = %q, %v", got, err)
	}
	for name, tc := range map[string]struct {
		cursor string
		params []string
		want   string
	}{
		"other status":  {c, []string{"webhook-1", "pending"}, "cursor belongs to another query: it is bound to the webhook and status"},
		"other webhook": {c, []string{"webhook-2", "failed"}, "belongs to another query"},
		"params moved":  {c, []string{"webhook-1failed", ""}, "belongs to another query"},
		"not base64":    {"%%%", []string{"webhook-1", "failed"}, "cursor is malformed: send back next_cursor exactly as received"},
		"not a cursor":  {"e30", []string{"webhook-1", "failed"}, "cursor is malformed"}, // {}
	} {
		_, err := ReadCursor(tc.cursor, "the webhook and status", tc.params...)
		if apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a 400 saying %q", name, err, tc.want)
		}
	}
}
