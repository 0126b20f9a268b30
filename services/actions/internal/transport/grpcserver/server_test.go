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
