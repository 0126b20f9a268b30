package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	atrium "github.com/atrium-hq/atrium/sdk/go"
)

// TestCLIActionFieldTypes: field=value arguments become the JSON types the
// action's input_schema gives; a value of the wrong type is a usage error
// naming the field.
func TestCLIActionFieldTypes(t *testing.T) {
	a := atrium.Action{Name: "demo", InputSchema: map[string]any{"properties": map[string]any{
		"action": map[string]any{"type": "string"}, "client_id": map[string]any{"type": "string"},
		"count": map[string]any{"type": "integer"}, "ratio": map[string]any{"type": "number"},
		"dry_run": map[string]any{"type": "boolean"}, "name": map[string]any{"type": "string"},
		"keywords": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"sizes":    map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"options":  map[string]any{"type": "object"},
	}}}
	got, err := actionFields(a, []string{"count=3", "ratio=0.5", "dry_run=true", "name=a=b", "keywords=rye, spelt", "sizes=1,2", `options={"x":1}`, "extra:=[1]"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":3,"dry_run":true,"extra":[1],"keywords":["rye","spelt"],"name":"a=b","options":{"x":1},"ratio":0.5,"sizes":[1,2]}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("fields = %s\nwant     %s", b, want)
	}
	for arg, words := range map[string]string{
		"count=three": "count=three: must be an integer", "dry_run=maybe": "true or false", "sizes=1,x": "must be an integer",
		"client_id=x": `no field "client_id"`, "novalue": "field=value", "options=[]": "JSON object",
	} {
		_, err := actionFields(a, []string{arg})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), words) {
			t.Fatalf("%s: %v; want a usage error saying %q", arg, err, words)
		}
	}
}
