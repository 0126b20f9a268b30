package grpcserver

import (
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// expander writes the expanded fields of a read (expand): each named
// field's id replaced by the item or asset it refers to, null for one that
// no longer exists. Without expand the reads never build one.
type expander struct {
	x      *app.Expanded
	assets *AssetServer
}

// newExpander is nil when x is (nothing to expand).
func (s *Server) newExpander(x *app.Expanded) *expander {
	if x == nil {
		return nil
	}
	return &expander{x: x, assets: s.assets}
}

// linked returns what the value raw of field f refers to: an item (with
// its collection) or an asset, or neither.
func (e *expander) linked(f app.Field, raw []byte) (*app.LinkedItem, *app.Asset) {
	id := app.RefID(raw)
	if id == "" {
		return nil, nil
	}
	if f.Type == app.TypeAsset {
		if a, ok := e.x.Assets[id]; ok && e.assets != nil {
			return nil, &a
		}
		return nil, nil
	}
	if li, ok := e.x.Items[id]; ok && li.Collection.Slug == f.Target {
		return &li, nil
	}
	return nil, nil
}

// write writes field f's expanded value.
func (e *expander) write(w *render.Writer, f app.Field, raw []byte, sub app.Expansion) {
	li, a := e.linked(f, raw)
	switch {
	case li != nil:
		writeItemExpanded(w, li.Collection, &li.Item, e, sub)
	case a != nil:
		e.assets.writeAsset(w, a)
	default:
		w.Null()
	}
}

// value is field f's expanded value for the typed response.
func (e *expander) value(f app.Field, raw []byte, sub app.Expansion) (*structpb.Value, error) {
	li, a := e.linked(f, raw)
	switch {
	case li != nil:
		s, err := itemPBExpanded(li.Collection, li.Item, e, sub)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	case a != nil:
		b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(e.assets.assetPB(*a))
		if err != nil {
			return nil, err
		}
		s := &structpb.Struct{}
		if err := protojson.Unmarshal(b, s); err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	}
	return structpb.NewNullValue(), nil
}
