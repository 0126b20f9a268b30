package grpcserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/atrium-hq/atrium/services/actions/internal/app"
)

// The rendered body and the typed response, as the gateway would write
// it, are the same JSON.
func TestRenderedRunMatchesTheTypedResponse(t *testing.T) {
	run := app.Run{Action: "generate_blog", ClientID: "0190a5e4-7b7e-7c1a-9f00-5b1f2e3d4c5a", Status: "success", StatusCode: 200,
		Data: map[string]any{"id": "x", "post_title": `Bread <b>&</b> "butter"`, "word_count": 712.0, "score": 86.7,
			"published": false, "published_at": nil, "issues": []any{map[string]any{"check": "title_length", "n": 3.0}}, "tags": []any{}}}
	rendered, err := renderRun(run)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := typedRun(run)
	if err != nil {
		t.Fatal(err)
	}
	viaProtojson, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(rendered, &a); err != nil {
		t.Fatalf("rendered body is not JSON: %v\n%s", err, rendered)
	}
	if err := json.Unmarshal(viaProtojson, &b); err != nil {
		t.Fatal(err)
	}
	delete(b, "rendered_json")
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("rendered %s\ntyped    %s", rendered, viaProtojson)
	}
}

// The 202's body, written directly, is byte for byte what renderRun
// writes for the same run and data.
func TestAcceptedBodyIsTheRenderedRun(t *testing.T) {
	const id = "0190a5e4-7b7e-7c1a-9f00-000000000001"
	url := "/api/v1/runs/" + id
	run := app.Run{Action: "generate_blog", ClientID: "0190a5e4-7b7e-7c1a-9f00-5b1f2e3d4c5a", Status: app.StatusPending, StatusCode: 202}
	got := acceptedBody(run, id, "queued", url)
	run.Data = acceptedData(id, "queued", url)
	want, err := renderRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("accepted body\n%s\nrenderRun\n%s", got, want)
	}
}

func BenchmarkAcceptedBody(b *testing.B) {
	const id = "0190a5e4-7b7e-7c1a-9f00-000000000001"
	url := "/api/v1/runs/" + id
	run := app.Run{Action: "generate_blog", ClientID: "0190a5e4-7b7e-7c1a-9f00-5b1f2e3d4c5a", Status: app.StatusPending, StatusCode: 202}
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := run
			r.Data = acceptedData(id, "queued", url)
			if _, err := renderRun(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			acceptedBody(run, id, "queued", url)
		}
	})
}
