package studio

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// postFields is a collection with every field type, as the end-to-end
// suite's posts.
var postFields = []*collectionsv1.FieldDefinition{
	{Key: "title", Type: "text", Required: true},
	{Key: "body", Type: "rich_text"},
	{Key: "rating", Type: "number"},
	{Key: "views", Type: "integer"},
	{Key: "featured", Type: "boolean"},
	{Key: "publish_on", Type: "date"},
	{Key: "edited_at", Type: "datetime"},
	{Key: "contact", Type: "email"},
	{Key: "source", Type: "url"},
	{Key: "category", Type: "select", Options: []string{"news", "recipes"}},
	{Key: "tags", Type: "multi_select", Options: []string{"bread", "cake", "vegan"}},
	{Key: "extra", Type: "json"},
	{Key: "author", Type: "reference", Target: new("authors")},
	{Key: "cover", Type: "asset"},
}

func TestParseFieldsReadsEachTypeAsTheServiceTakesIt(t *testing.T) {
	form := url.Values{
		"f.title": {"  Sourdough  "}, "f.body": {"<h2>Bread</h2>"}, "f.rating": {"4.5"}, "f.views": {"12"},
		"f.featured": {"on"}, "f.publish_on": {"2026-12-01"}, "f.edited_at": {"2026-11-20T08:00"},
		"f.contact": {"ana@example.com"}, "f.source": {"https://example.com/a"}, "f.category": {"news"},
		"f.tags": {"bread", "vegan"}, "f.extra": {`{"a": [1, 2]}`}, "f.author": {"a1"}, "f.cover": {"as1"},
	}
	data, errs := parseFields(postFields, form, false)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := map[string]any{
		"title": "  Sourdough  ", "body": "<h2>Bread</h2>", "rating": 4.5, "views": float64(12), "featured": true,
		"publish_on": "2026-12-01", "edited_at": "2026-11-20T08:00:00Z", "contact": "ana@example.com",
		"source": "https://example.com/a", "category": "news", "tags": []any{"bread", "vegan"},
		"extra": map[string]any{"a": []any{float64(1), float64(2)}}, "author": "a1", "cover": "as1",
	}
	if !reflect.DeepEqual(data, want) {
		t.Fatalf("data = %#v\nwant %#v", data, want)
	}
}

func TestParseFieldsClearsEmptyFieldsOnSaveAndLeavesThemOutOnCreate(t *testing.T) {
	form := url.Values{"f.title": {"T"}}
	saved, errs := parseFields(postFields, form, false)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if v, ok := saved["rating"]; !ok || v != nil {
		t.Fatalf("an emptied number on save = %v (present %v), want null to clear it", v, ok)
	}
	if saved["featured"] != false || !reflect.DeepEqual(saved["tags"], []any{}) {
		t.Fatalf("an unticked box and group on save: %v, %v", saved["featured"], saved["tags"])
	}
	created, _ := parseFields(postFields, form, true)
	for _, k := range []string{"rating", "tags", "author", "extra"} {
		if _, ok := created[k]; ok {
			t.Fatalf("creating sent the empty field %s", k)
		}
	}
}

func TestParseFieldsNamesWhatIsWrong(t *testing.T) {
	form := url.Values{"f.title": {"   "}, "f.rating": {"four"}, "f.views": {"1.5"}, "f.publish_on": {"1 Dec"},
		"f.edited_at": {"soon"}, "f.category": {"gossip"}, "f.tags": {"bread", "pie"}, "f.extra": {"{a:1}"}}
	_, errs := parseFields(postFields, form, false)
	for key, want := range map[string]string{
		"title": "required", "rating": "not a number", "views": "not a whole number", "publish_on": "2026-12-01",
		"edited_at": "UTC", "category": "news, recipes", "tags": `"pie"`, "extra": "not JSON",
	} {
		if !strings.Contains(errs[key], want) {
			t.Errorf("the error for %s = %q, want it to mention %q", key, errs[key], want)
		}
	}
}

func TestFormValuesRoundTripsAnItem(t *testing.T) {
	item := map[string]any{
		"id": "i1", "title": "T", "rating": 4.5, "views": float64(12), "featured": true, "edited_at": "2026-11-20T10:00:00+02:00",
		"tags": []any{"cake"}, "extra": map[string]any{"a": float64(1)}, "author": map[string]any{"id": "a1", "name": "Ana"},
	}
	form := formValues(postFields, item)
	if form.Get("f.edited_at") != "2026-11-20T08:00:00" {
		t.Fatalf("a datetime shows as %q, want UTC", form.Get("f.edited_at"))
	}
	if form.Get("f.author") != "a1" {
		t.Fatalf("an expanded reference shows as %q, want its id", form.Get("f.author"))
	}
	data, errs := parseFields(postFields, form, false)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for k, want := range map[string]any{"title": "T", "rating": 4.5, "views": float64(12), "featured": true,
		"edited_at": "2026-11-20T08:00:00Z", "tags": []any{"cake"}, "extra": map[string]any{"a": float64(1)}, "author": "a1"} {
		if !reflect.DeepEqual(data[k], want) {
			t.Errorf("%s after the round trip = %#v, want %#v", k, data[k], want)
		}
	}
	c := controls(postFields, form, map[string]string{"title": "too long"})
	if c[0].Error != "too long" || !c[4].Checked || !c[10].Options[1].Selected || c[10].Options[0].Selected {
		t.Fatalf("controls: %+v", c)
	}
}

func TestScheduleSendsOnlyChanges(t *testing.T) {
	cur := "2026-12-01T09:30:00Z"
	if _, changed, err := schedule("2026-12-01T09:30:00", cur); changed || err != nil {
		t.Fatalf("an unchanged time is sent (%v, %v)", changed, err)
	}
	if v, changed, _ := schedule("", cur); !changed || v != nil {
		t.Fatalf("an emptied time = %v, %v; want null to cancel it", v, changed)
	}
	if v, changed, _ := schedule("2026-12-02T10:00", cur); !changed || v != "2026-12-02T10:00:00Z" {
		t.Fatalf("a new time = %v, %v", v, changed)
	}
	if _, changed, _ := schedule("", ""); changed {
		t.Fatal("no time at all is sent")
	}
	if _, _, err := schedule("tomorrow", ""); err == nil || !strings.Contains(err.Error(), "UTC") {
		t.Fatalf("a wrong time: %v", err)
	}
}

func TestTitleFieldAndItemTitle(t *testing.T) {
	if got := titleField(postFields); got != "title" {
		t.Fatalf("titleField = %q", got)
	}
	if got := titleField([]*collectionsv1.FieldDefinition{{Key: "n", Type: "number"}, {Key: "slug", Type: "text"}}); got != "slug" {
		t.Fatalf("without a title the first text field: %q", got)
	}
	if got := itemTitle(map[string]any{"id": "i9", "title": " "}, "title"); got != "Untitled (i9)" {
		t.Fatalf("an untitled item reads %q", got)
	}
}

func TestFieldErrorsAndConflicts(t *testing.T) {
	c := &collectionsv1.Collection{Fields: postFields}
	errs := fieldErrors(c, nil, `data.rating must be a number; got "four"`)
	if errs["rating"] == "" || errs["title"] != "" {
		t.Fatalf("the service's message lands on %v", errs)
	}
	if errs := fieldErrors(c, nil, "data.tagsx is not a field"); len(errs) != 0 {
		t.Fatalf("an unknown key lands on %v", errs)
	}
	if !isConflict(status.Error(codes.FailedPrecondition, `item "x" has changed: its ETag no longer matches If-Match "1"`)) {
		t.Fatal("a stale If-Match is not a conflict")
	}
	if isConflict(status.Error(codes.FailedPrecondition, "publish_at must be in the future")) {
		t.Fatal("a refused schedule is taken for a conflict")
	}
}

// The items table's rows, written by hand for speed, escape every value
// for where it goes: a title of markup stays text, a quote cannot end the
// link's attribute.
func TestItemRowsHTMLEscapes(t *testing.T) {
	got := string(itemRowsHTML([]itemRow{{Href: `/studio/a/x/"onmouseover="alert(1)`, Title: `<script>alert("t")</script> & 'q'`, State: "draft<b>", Updated: "1 Jan"}}))
	for _, bad := range []string{"<script>", `"onmouseover="`, "<b>", ` & `} {
		if strings.Contains(got, bad) {
			t.Errorf("the row holds %q unescaped: %s", bad, got)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "&#34;onmouseover=&#34;", "&amp;", "&#39;q&#39;", `<th scope="row">`} {
		if !strings.Contains(got, want) {
			t.Errorf("the row lacks %q: %s", want, got)
		}
	}
}
