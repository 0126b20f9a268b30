package app

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
)

// TestJSONFields: a json field takes any JSON value, stores it as given
// (HTML not escaped, structure kept) and refuses what is not JSON or too
// big, naming the field.
func TestJSONFields(t *testing.T) {
	r, _ := Lookup("seo_reports")
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for _, v := range []any{
		[]any{map[string]any{"check": "title", "detail": "<title> is empty & short"}, 3.5, nil, true},
		map[string]any{"nested": map[string]any{"deep": []any{}}},
		"just a string", 42.0, false,
	} {
		row, err := buildRow(r, "c", "rows[0]", map[string]any{"url": "https://bakery.example/", "issues": v}, now)
		if err != nil {
			t.Fatalf("issues %v: %v", v, err)
		}
		var got map[string]any
		if err := json.Unmarshal(row.Data, &got); err != nil {
			t.Fatalf("data %s: %v", row.Data, err)
		}
		want, _ := json.Marshal(v)
		if gotIssues, _ := json.Marshal(got["issues"]); string(gotIssues) != string(want) {
			t.Fatalf("issues stored as %s, want %s", gotIssues, want)
		}
		if _, isKey := row.Keys["issues"]; isKey {
			t.Fatal("a json field became a key")
		}
	}
	row, _ := buildRow(r, "c", "rows[0]", map[string]any{"url": "https://bakery.example/", "issues": []any{"<p>"}}, now)
	if !strings.Contains(string(row.Data), `["<p>"]`) {
		t.Fatalf("data %s escapes HTML", row.Data)
	}
	for name, v := range map[string]any{
		"too big": []any{strings.Repeat("x", maxJSON)},
		"NaN":     map[string]any{"score": math.NaN()},
	} {
		_, err := buildRow(r, "c", "writes[1].rows[2]", map[string]any{"url": "https://bakery.example/", "issues": v}, now)
		if apperr.KindOf(err) != apperr.KindInvalid || !strings.Contains(err.Error(), "writes[1].rows[2].issues must be a JSON value") {
			t.Errorf("%s: %v, want invalid naming writes[1].rows[2].issues", name, err)
		}
	}
}

// TestWriteRecordsRefusesBadRequests: everything wrong with a request is
// found before the store is touched (there is none here) and named.
func TestWriteRecordsRefusesBadRequests(t *testing.T) {
	d := NewDatasets(nil, nil, Clock(time.Now))
	client := uuid.NewString()
	id := uuid.NewString()
	blog := map[string]any{"post_title": "Sourdough"}
	for name, tc := range map[string]struct {
		client string
		writes []RecordWrite
		words  []string
	}{
		"client id":        {"c-1", []RecordWrite{{Resource: "blogs", Mode: WriteUpsert, Rows: []map[string]any{blog}}}, []string{`client_id must be a UUID such as 0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b; got "c-1"`}},
		"no writes":        {client, nil, []string{"writes is required"}},
		"unknown resource": {client, []RecordWrite{{Resource: "posts", Mode: WriteUpsert, Rows: []map[string]any{blog}}}, []string{`writes[0].resource: unknown dataset "posts"`, "keywords, seo_tasks", "integrations, action_runs, blog_images"}},
		"clients":          {client, []RecordWrite{{Resource: "clients", Mode: WriteUpsert, Rows: []map[string]any{blog}}}, []string{"writes[0].resource: clients is read from the CRM", "blog_images"}},
		"mode":             {client, []RecordWrite{{Resource: "blogs", Rows: []map[string]any{blog}}}, []string{"writes[0].mode must be upsert or update"}},
		"no rows":          {client, []RecordWrite{{Resource: "blogs", Mode: WriteUpsert}}, []string{"writes[0].rows is required"}},
		"old blog title":   {client, []RecordWrite{{Resource: "blogs", Mode: WriteUpsert, Rows: []map[string]any{{"title": "x"}}}}, []string{"writes[0].rows[0].title is not a field of blogs", "post_title"}},
		"missing required": {client, []RecordWrite{{Resource: "blog_images", Mode: WriteUpsert, Rows: []map[string]any{{"title": "Loaf"}}}}, []string{"writes[0].rows[0].url is required: an absolute http or https URL"}},
		"update without id": {client, []RecordWrite{{Resource: "blogs", Mode: WriteUpsert, Rows: []map[string]any{blog}},
			{Resource: "blogs", Mode: WriteUpdate, Rows: []map[string]any{blog}}}, []string{"writes[1].rows[0].id is required in update mode"}},
		"repeated id": {client, []RecordWrite{{Resource: "blogs", Mode: WriteUpsert, Rows: []map[string]any{{"id": id, "post_title": "a"}}},
			{Resource: "blogs", Mode: WriteUpdate, Rows: []map[string]any{{"id": strings.ToUpper(id), "post_title": "b"}}}},
			[]string{"writes[1].rows[0].id " + id + " is also writes[0].rows[0].id"}},
	} {
		_, err := d.WriteRecords(t.Context(), tc.client, tc.writes)
		if apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
			continue
		}
		for _, w := range tc.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q does not say %q", name, err, w)
			}
		}
	}
}
