package grpcserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// gatewayJSON is what the gateway prints for a typed message: the options
// of gateway/internal/rest's marshaler, without rendered_json.
func gatewayJSON(t *testing.T, m proto.Message) map[string]any {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "rendered_json")
	return v
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("rendered body is not JSON: %v\n%s", err, b)
	}
	return v
}

var posts = app.Collection{ID: "c1", SiteID: "s1", Name: "Posts \"quoted\" 🙂", Slug: "posts", Fields: []app.Field{
	{Key: "title", Type: app.TypeText, Required: true, MaxLength: 80, Localized: true},
	{Key: "rating", Type: app.TypeNumber},
	{Key: "tags", Type: app.TypeMultiSelect, Options: []string{"a", "b"}},
	{Key: "author", Type: app.TypeReference, Target: "authors"},
	{Key: "extra", Type: app.TypeJSON},
	{Key: "unset", Type: app.TypeBoolean},
}}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// TestRenderedMatchesTyped: the JSON the service renders for the list
// routes is the JSON the typed responses give through the gateway: the
// same collection, items with every defined field (null when unset), and
// the stored values untouched.
func TestRenderedMatchesTyped(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 120000000, time.UTC)
	var items []app.Item
	for i := range 5 {
		items = append(items, app.Item{
			ID: fmt.Sprintf("019a4b2c-3d4e-7f60-8a9b-%012d", i), CollectionID: "c1", IsPublished: i%2 == 0, Version: 1,
			CreatedAt: at.Add(time.Duration(i) * time.Second), UpdatedAt: at.Add(time.Hour),
			Values: app.Values{
				"title":  raw(fmt.Sprintf("Post <%d> \u2028 \"q\"", i)),
				"rating": raw(float64(i) / 3),
				"tags":   raw([]string{"a"}),
				"extra":  json.RawMessage(`{"nested": [1, 2.5, null, {"k": "v"}]}`), // as PostgreSQL prints JSONB
				"author": raw("019a4b2c-3d4e-7f60-8a9b-000000000000"),
			},
		})
	}
	// Items read in a locale say which, and where a value fell back from.
	items[1].ReadIn, items[1].Fallbacks = "de-AT", map[string]string{"title": "de", "rating": "en"}
	items[2].ReadIn = "de"
	typed := &collectionsv1.ListItemsResponse{Collection: collectionPB(posts), Limit: 100, Offset: 5}
	for _, it := range items {
		s, err := itemPB(posts, it)
		if err != nil {
			t.Fatal(err)
		}
		typed.Items = append(typed.Items, s)
	}
	got, want := decode(t, renderItems(posts, items, 100, 5)), gatewayJSON(t, typed)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rendered items differ from typed:\nrendered %v\ntyped    %v", got, want)
	}
	if second := got["items"].([]any)[1].(map[string]any); second["locale"] != "de-AT" || second["locale_fallbacks"].(map[string]any)["title"] != "de" {
		t.Fatalf("an item read in de-AT renders as %v", second)
	}
	if _, ok := got["items"].([]any)[0].(map[string]any)["locale"]; ok {
		t.Fatal("an item read without locale says a locale")
	}
	if got["items"].([]any)[0].(map[string]any)["unset"] != nil {
		t.Fatal("an unset field must render as null")
	}

	// A projection (fields=title,unset): the same in both, the
	// collection whole, each item its properties and those fields only.
	shown := app.Projection{posts.Fields[0], posts.Fields[5]}
	typedShown := &collectionsv1.ListItemsResponse{Collection: collectionPB(posts), Limit: 100, Offset: 5}
	for _, it := range items {
		it.Values = shown.Project(it.Values)
		s, err := itemPBExpanded(projected(posts, shown), it, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		typedShown.Items = append(typedShown.Items, s)
	}
	got, want = decode(t, renderItemsExpanded(posts, shown, items, 100, 5, nil)), gatewayJSON(t, typedShown)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("projected items differ from typed:\nrendered %v\ntyped    %v", got, want)
	}
	first := got["items"].([]any)[0].(map[string]any)
	if _, ok := first["rating"]; ok || len(first) != 8 || first["title"] == nil || len(got["collection"].(map[string]any)["fields"].([]any)) != 6 {
		t.Fatalf("projected item %v (want the 6 properties, title and unset), collection %v", first, got["collection"])
	}

	empty := &collectionsv1.ListItemsResponse{Collection: collectionPB(posts), Items: []*structpb.Struct{}, Limit: 1}
	if got, want := decode(t, renderItems(posts, nil, 1, 0)), gatewayJSON(t, empty); !reflect.DeepEqual(got, want) {
		t.Fatalf("empty page: rendered %v, typed %v", got, want)
	}

	one, err := itemPB(posts, items[1])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := decode(t, renderItem(posts, items[1])), gatewayJSON(t, &collectionsv1.GetItemResponse{Item: one}); !reflect.DeepEqual(got, want) {
		t.Fatalf("one item: rendered %v\ntyped %v", got, want)
	}

	cols := []app.Collection{posts, {Name: "Pages", Slug: "pages", IsSystem: true, Fields: []app.Field{}}}
	typedCols := &collectionsv1.ListCollectionsResponse{}
	for _, c := range cols {
		typedCols.Collections = append(typedCols.Collections, collectionPB(c))
	}
	if got, want := decode(t, renderCollections(cols)), gatewayJSON(t, typedCols); !reflect.DeepEqual(got, want) {
		t.Fatalf("collections: rendered %v\ntyped %v", got, want)
	}
}

// TestRenderedAssetsMatchTyped: the asset list's rendered body is the
// typed response's JSON: every field, width and height null for a file
// without them, the url from the public URL and the file name.
func TestRenderedAssetsMatchTyped(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 30, 0, 120000000, time.UTC)
	w, h := 1920, 1080
	as := []app.Asset{
		{ID: "019a4b2c-3d4e-7f60-8a9b-000000000001", SiteID: "s1", Name: "0123456789abcdef0123456789abcdef.png", Filename: "Été \"hero\" #1.png",
			ContentType: "image/png", Size: 123456, Width: &w, Height: &h, Alt: "A loaf <b>", SHA256: "ab", CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
		{ID: "019a4b2c-3d4e-7f60-8a9b-000000000002", SiteID: "s1", Name: "fedcba9876543210fedcba9876543210.pdf", Filename: "menu.pdf",
			ContentType: "application/pdf", Size: 1, SHA256: "cd", CreatedAt: at, UpdatedAt: at},
	}
	s := NewAssetServer(nil, func() string { return "https://cms.example.com" })
	typed := &collectionsv1.ListAssetsResponse{Limit: 100, Offset: 3}
	for _, a := range as {
		typed.Assets = append(typed.Assets, s.assetPB(a))
	}
	got, want := decode(t, s.renderAssets(as, 100, 3)), gatewayJSON(t, typed)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rendered assets differ from typed:\nrendered %v\ntyped    %v", got, want)
	}
	pdf := got["assets"].([]any)[1].(map[string]any)
	if pdf["width"] != nil || pdf["height"] != nil || pdf["url"] != "https://cms.example.com/files/fedcba9876543210fedcba9876543210.pdf/menu.pdf" {
		t.Fatalf("a PDF renders as %v", pdf)
	}
	if got, want := decode(t, s.renderAssets(nil, 1, 0)), gatewayJSON(t, &collectionsv1.ListAssetsResponse{Assets: []*collectionsv1.Asset{}, Limit: 1}); !reflect.DeepEqual(got, want) {
		t.Fatalf("empty page: rendered %v, typed %v", got, want)
	}
}
