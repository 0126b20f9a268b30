package app

import "testing"

// The item write's validation is on the create path that
// bench-collections measures; these keep its cost per value in view.

var benchCollection = Collection{Slug: "posts", Fields: []Field{
	{Key: "title", Type: TypeText, Required: true},
	{Key: "body", Type: TypeRichText},
	{Key: "rating", Type: TypeNumber},
	{Key: "views", Type: TypeInteger},
	{Key: "featured", Type: TypeBoolean},
	{Key: "published_on", Type: TypeDate},
	{Key: "at", Type: TypeDatetime},
	{Key: "contact", Type: TypeEmail},
	{Key: "link", Type: TypeURL},
	{Key: "section", Type: TypeSelect, Options: []string{"news", "guides"}},
	{Key: "author", Type: TypeReference, Target: "authors"},
}}

func benchData() map[string]any {
	return map[string]any{
		"title": "Sourdough at home, step by step", "body": "<p>Flour, water, salt and time.</p>",
		"rating": 4.5, "views": 1200.0, "featured": true, "published_on": "2026-11-20", "at": "2026-11-20T08:00:00Z",
		"contact": "ana@example.com", "link": "https://bakery.example/sourdough", "section": "guides",
		"author": "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b",
	}
}

func BenchmarkCheckData(b *testing.B) {
	data := benchData()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checkData(benchCollection, data, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilterValue(b *testing.B) {
	f, _ := benchCollection.Field("published_on")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseFilterValue(f, "2026-11-20"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkItemID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := itemID("0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b", "posts"); err != nil {
			b.Fatal(err)
		}
	}
}
