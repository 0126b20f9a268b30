package app

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
)

// Expanding references (expand on the item list and get): each named
// reference or asset field's id is replaced by the object it names,
// recursively with dots (author.avatar) up to MaxExpandDepth levels. The
// objects are read one query per referenced collection and level (and one
// for the assets of a level), never one per item.

// MaxExpandDepth is how many levels of references expand may follow.
const MaxExpandDepth = 3

// maxExpand bounds the expand parameter in bytes.
const maxExpand = 1000

// Expansion is a parsed expand parameter: the fields to expand, each with
// the fields to expand in what it refers to.
type Expansion map[string]Expansion

// LinkedItem is an item an expanded field refers to, with its collection.
type LinkedItem struct {
	Collection Collection
	Item       Item
}

// Expanded is what a read expands: which fields, and the objects they
// refer to by id. An id missing from Items or Assets names nothing that
// exists (or nothing the caller may see) and expands to null.
type Expanded struct {
	Fields Expansion
	Items  map[string]LinkedItem
	Assets map[string]Asset
}

// Expandable reports whether expand can name f: references and assets.
func (f Field) Expandable() bool { return f.Type == TypeReference || f.Type == TypeAsset }

func expandableList(c Collection) string {
	var keys []string
	for _, f := range c.Fields {
		if f.Expandable() {
			keys = append(keys, f.Key)
		}
	}
	if len(keys) == 0 {
		return "none (collection " + c.Slug + " has no reference or asset fields)"
	}
	return strings.Join(keys, ", ")
}

// RefID is the id a reference or asset value holds, "" for none.
func RefID(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	id, ok := value.ParseID(s)
	if !ok {
		return ""
	}
	return id
}

// Expand reads what the fields named by expand refer to in items of c. It
// returns nil when expand is empty. publishedOnly hides drafts: a draft
// expands to null.
func (u *Content) Expand(ctx context.Context, siteID string, c Collection, items []Item, expand string, publishedOnly bool) (*Expanded, error) {
	if expand == "" {
		return nil, nil
	}
	if len(expand) > maxExpand {
		return nil, apperr.Invalid("expand must be at most %d characters; got %d", maxExpand, len(expand))
	}
	var all map[string]Collection // the site's collections by slug, read once
	target := func(slug string) (Collection, error) {
		if all == nil {
			cs, err := u.store.Collections(ctx, siteID)
			if err != nil {
				return Collection{}, err
			}
			all = make(map[string]Collection, len(cs))
			for _, c := range cs {
				all[c.Slug] = c
			}
		}
		t, ok := all[slug]
		if !ok {
			return Collection{}, collectionNotFound(slug)
		}
		return t, nil
	}
	tree := Expansion{}
	for _, path := range strings.Split(expand, ",") {
		path = strings.TrimSpace(path)
		segs := strings.Split(path, ".")
		if len(segs) > MaxExpandDepth {
			return nil, apperr.Invalid("expand %q is %d levels deep; at most %d", path, len(segs), MaxExpandDepth)
		}
		cur, node := c, tree
		for i, seg := range segs {
			f, ok := cur.Field(seg)
			if !ok || !f.Expandable() {
				where := ""
				if i > 0 {
					where = " in " + strings.Join(segs[:i], ".") + " (collection " + cur.Slug + ")"
				}
				return nil, apperr.Invalid("Invalid expand field %q%s. Expandable: %s", seg, where, expandableList(cur))
			}
			sub, ok := node[seg]
			if !ok {
				sub = Expansion{}
				node[seg] = sub
			}
			if i < len(segs)-1 {
				if f.Type == TypeAsset {
					return nil, apperr.Invalid("expand %q: %s is an asset, which has no fields to expand", path, strings.Join(segs[:i+1], "."))
				}
				var err error
				if cur, err = target(f.Target); err != nil {
					return nil, err
				}
			}
			node = sub
		}
	}
	x := &Expanded{Fields: tree, Items: map[string]LinkedItem{}, Assets: map[string]Asset{}}
	type node struct {
		c     Collection
		tree  Expansion
		items []Item
	}
	level := []node{{c, tree, items}}
	tried := map[string]bool{}
	for depth := 0; depth < MaxExpandDepth && len(level) > 0; depth++ {
		wantItems := map[string]map[string]bool{} // by target slug
		wantAssets := map[string]bool{}
		type pending struct {
			target string
			tree   Expansion
			ids    []string
		}
		var next []pending
		for _, n := range level {
			for key, sub := range n.tree {
				f, _ := n.c.Field(key)
				var ids []string
				for _, it := range n.items {
					if id := RefID(it.Values[key]); id != "" {
						ids = append(ids, id)
					}
				}
				if f.Type == TypeAsset {
					for _, id := range ids {
						if !tried[id] {
							wantAssets[id] = true
						}
					}
					continue
				}
				if wantItems[f.Target] == nil {
					wantItems[f.Target] = map[string]bool{}
				}
				for _, id := range ids {
					if !tried[id] {
						wantItems[f.Target][id] = true
					}
				}
				if len(sub) > 0 {
					next = append(next, pending{f.Target, sub, ids})
				}
			}
		}
		for slug, ids := range wantItems {
			if len(ids) == 0 {
				continue
			}
			tc, err := target(slug)
			if err != nil {
				return nil, err
			}
			list := slices.Sorted(maps.Keys(ids))
			got, err := u.store.ItemsByID(ctx, tc.ID, list)
			if err != nil {
				return nil, err
			}
			for _, id := range list {
				tried[id] = true
			}
			for _, it := range got {
				if publishedOnly && !it.IsPublished {
					continue
				}
				x.Items[it.ID] = LinkedItem{Collection: tc, Item: it}
			}
		}
		if len(wantAssets) > 0 {
			list := slices.Sorted(maps.Keys(wantAssets))
			got, err := u.store.AssetsByID(ctx, siteID, list)
			if err != nil {
				return nil, err
			}
			for _, id := range list {
				tried[id] = true
			}
			for _, a := range got {
				x.Assets[a.ID] = a
			}
		}
		level = level[:0]
		for _, p := range next {
			n := node{tree: p.tree}
			for _, id := range p.ids {
				if li, ok := x.Items[id]; ok {
					n.c = li.Collection
					n.items = append(n.items, li.Item)
				}
			}
			if len(n.items) > 0 {
				level = append(level, n)
			}
		}
	}
	return x, nil
}
