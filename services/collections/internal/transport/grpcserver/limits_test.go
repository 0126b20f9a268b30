package grpcserver_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/atrium-hq/atrium/platform/value"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// TestProtoMaximaAreTheCollectionRules: where a request's maximum (the
// proto's max_items, enforced on each request) and a collections rule
// bound the same thing, they are one number.
func TestProtoMaximaAreTheCollectionRules(t *testing.T) {
	for _, c := range []struct {
		msg   proto.Message
		field string
		want  int
	}{
		{&collectionsv1.CreateCollectionRequest{}, "fields", app.MaxFields},
		{&collectionsv1.UpdateCollectionRequest{}, "add_fields", app.MaxFields},
		{&collectionsv1.UpdateCollectionRequest{}, "update_fields", app.MaxFields},
		{&collectionsv1.UpdateCollectionRequest{}, "remove_fields", app.MaxFields},
		{&collectionsv1.CreateSchemaCollectionRequest{}, "fields", app.MaxFields},
		{&collectionsv1.UpdateSchemaCollectionRequest{}, "add_fields", app.MaxFields},
		{&collectionsv1.UpdateSchemaCollectionRequest{}, "update_fields", app.MaxFields},
		{&collectionsv1.UpdateSchemaCollectionRequest{}, "remove_fields", app.MaxFields},
		// An item's data holds at most one key per field.
		{&collectionsv1.CreateItemRequest{}, "data", app.MaxFields},
		{&collectionsv1.UpdateItemRequest{}, "data", app.MaxFields},
		{&collectionsv1.CreateSiteItemRequest{}, "data", app.MaxFields},
		{&collectionsv1.SetSiteOriginsRequest{}, "allowed_origins", app.MaxOrigins},
		{&collectionsv1.SetSiteLocalesRequest{}, "locales", app.MaxLocales},
	} {
		md := c.msg.ProtoReflect().Descriptor()
		fd := md.Fields().ByName(protoreflect.Name(c.field))
		if fd == nil {
			t.Fatalf("%s has no field %s", md.FullName(), c.field)
		}
		if got, ok := value.MaxItems(fd); !ok || got != c.want {
			t.Errorf("%s declares max_items %d (%v); the collections rule says %d", fd.FullName(), got, ok, c.want)
		}
	}
}
