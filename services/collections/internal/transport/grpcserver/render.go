package grpcserver

import (
	"maps"
	"slices"
	"time"

	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// The JSON bodies of the public reads, rendered from the domain values in
// one pass (platform/render). They carry the same JSON as the typed
// responses through the gateway; TestRenderedMatchesTyped holds them to it.
// An item's field values are written as the stored JSON, never decoded.

func writeCollection(w *render.Writer, c app.Collection) {
	w.Open()
	w.Key("name")
	w.String(c.Name)
	w.Key("slug")
	w.String(c.Slug)
	w.Key("fields")
	w.OpenArray()
	for _, f := range c.Fields {
		w.Open()
		w.Key("key")
		w.String(f.Key)
		w.Key("type")
		w.String(f.Type)
		w.Key("required")
		w.Bool(f.Required)
		w.Key("options")
		w.OpenArray()
		for _, o := range f.Options {
			w.String(o)
		}
		w.CloseArray()
		if f.Target != "" {
			w.Key("target")
			w.String(f.Target)
		}
		if f.MaxLength > 0 {
			w.Key("max_length")
			w.Int(int64(f.MaxLength))
		}
		if f.Localized {
			w.Key("localized")
			w.Bool(true)
		}
		w.Close()
	}
	w.CloseArray()
	w.Key("is_system")
	w.Bool(c.IsSystem)
	w.Close()
}

func renderCollections(cs []app.Collection) []byte {
	w := render.NewWriter(64 + 256*len(cs))
	w.Open()
	w.Key("collections")
	w.OpenArray()
	for _, c := range cs {
		writeCollection(w, c)
	}
	w.CloseArray()
	w.Close()
	return w.Bytes()
}

func writeItem(w *render.Writer, c app.Collection, it *app.Item) {
	writeItemExpanded(w, c, it, nil, nil)
}

// writeItemExpanded writes it with the fields of tree expanded by e.
func writeItemExpanded(w *render.Writer, c app.Collection, it *app.Item, e *expander, tree app.Expansion) {
	w.Open()
	w.Key("id")
	w.String(it.ID)
	w.Key("is_published")
	w.Bool(it.IsPublished)
	for _, f := range [...]struct {
		key string
		at  *time.Time
	}{{"publish_at", it.PublishAt}, {"unpublish_at", it.UnpublishAt}} {
		w.Key(f.key)
		if f.at != nil {
			w.Time(*f.at)
		} else {
			w.Null()
		}
	}
	w.Key("created_at")
	w.Time(it.CreatedAt)
	w.Key("updated_at")
	w.Time(it.UpdatedAt)
	if it.ReadIn != "" {
		// A field of the same name (a collection made before locales)
		// wins, as in the typed answer.
		if _, ok := c.Field("locale"); !ok {
			w.Key("locale")
			w.String(it.ReadIn)
		}
		if _, ok := c.Field("locale_fallbacks"); !ok {
			w.Key("locale_fallbacks")
			w.Open()
			for _, k := range slices.Sorted(maps.Keys(it.Fallbacks)) {
				w.Key(k)
				w.String(it.Fallbacks[k])
			}
			w.Close()
		}
	}
	for _, f := range c.Fields {
		w.Key(f.Key)
		if sub, ok := tree[f.Key]; ok && e != nil {
			e.write(w, f, it.Values[f.Key], sub)
		} else if raw, ok := it.Values[f.Key]; ok {
			w.Raw(raw)
		} else {
			w.Null()
		}
	}
	w.Close()
}

func renderItems(c app.Collection, items []app.Item, limit, offset int32) []byte {
	return renderItemsExpanded(c, nil, items, limit, offset, nil)
}

// renderItemsExpanded is renderItems with the fields e names expanded and,
// when shown is not nil, only shown's fields in each item (the collection
// is written whole).
func renderItemsExpanded(c app.Collection, shown app.Projection, items []app.Item, limit, offset int32, e *expander) []byte {
	size := 256
	for i := range items {
		size += 160
		for _, v := range items[i].Values {
			size += len(v) + 24
		}
	}
	w := render.NewWriter(size)
	w.Open()
	w.Key("collection")
	writeCollection(w, c)
	w.Key("items")
	w.OpenArray()
	ic := projected(c, shown)
	for i := range items {
		if e != nil {
			writeItemExpanded(w, ic, &items[i], e, e.x.Fields)
		} else {
			writeItem(w, ic, &items[i])
		}
	}
	w.CloseArray()
	w.Key("limit")
	w.Int(int64(limit))
	w.Key("offset")
	w.Int(int64(offset))
	w.Close()
	return w.Bytes()
}

// projected is c as its items are written under the projection shown:
// with only shown's fields (c itself when shown is nil, every field).
func projected(c app.Collection, shown app.Projection) app.Collection {
	if shown != nil {
		c.Fields = shown
	}
	return c
}

// renderItem is the body of the single-item routes: {"item": {...}}.
func renderItem(c app.Collection, it app.Item) []byte { return renderItemExpanded(c, it, nil) }

// renderItemExpanded is renderItem with the fields e names expanded.
func renderItemExpanded(c app.Collection, it app.Item, e *expander) []byte {
	size := 192
	for _, v := range it.Values {
		size += len(v) + 24
	}
	w := render.NewWriter(size)
	w.Open()
	w.Key("item")
	if e != nil {
		writeItemExpanded(w, c, &it, e, e.x.Fields)
	} else {
		writeItem(w, c, &it)
	}
	w.Close()
	return w.Bytes()
}
