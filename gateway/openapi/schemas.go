package openapi

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/atrium-hq/atrium/platform/render"
	"github.com/atrium-hq/atrium/platform/value"
	// The messages the documents describe, for their field presence.
	_ "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/audit/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/data/v1"
	_ "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

var (
	// A value is lower case words with _, joined by / + . or - (media
	// types such as image/svg+xml); a dot that ends a sentence is not one.
	oneOf    = regexp.MustCompile(`(?:One|Subset|One or both) of: ([a-z0-9_]+(?:[/+.-][a-z0-9_]+)*(?:, [a-z0-9_]+(?:[/+.-][a-z0-9_]+)*)*)`)
	dateOnly = regexp.MustCompile(`\bYYYY-MM-DD\b`)
	// mayBeNull is how a comment says that the JSON may show null (and
	// "non-null" is not).
	mayBeNull = regexp.MustCompile(`(?i)(?:^|[^-\w])null\b`)
	// notUUID is how a comment says that a field named like an id is not
	// always a UUID (an audit event's actor may be "admin", its resource
	// a dataset, its trace id 32 hexadecimal digits).
	notUUID = regexp.MustCompile(`\bnot\s+(?:always\s+)?a\s+UUID\b`)
)

// isIDName tells the ids, which are UUIDs; a webhook event's id is one
// too except for a test send's (evt_test_<uuid>).
func isIDName(v any) bool {
	name, _ := v.(string)
	return (name == "id" || strings.HasSuffix(name, "_id")) && name != "event_id"
}

// completeSchemas turns what the proto comments and field declarations
// state into schema, on the generator's definitions: "One of: a, b" and
// "Subset of: a, b" become enumerations, "YYYY-MM-DD" the date format,
// every id a UUID, a comment that says a field may be null makes it
// nullable, and a response lists as required every field its JSON always
// carries. rendered_json, internal to the gateway and the services, goes.
func completeSchemas(defs document) error {
	for name, d := range defs {
		def, _ := d.(document)
		props, _ := def["properties"].(document)
		delete(props, render.Field)
		for pname, p := range props {
			describeValue(pname, p.(document))
		}
		md := messageOf(name, props)
		if md == nil {
			md = bodyMessageOf(name)
		}
		if md != nil {
			addMaxima(md, props)
		}
		if md == nil || isRequest(name) {
			continue
		}
		var required []any
		for i := range md.Fields().Len() {
			f := md.Fields().Get(i)
			if _, shown := props[string(f.Name())]; shown && f.ContainingOneof() == nil {
				required = append(required, string(f.Name()))
			}
		}
		if len(required) > 0 {
			def["required"] = required
		}
	}
	return nil
}

// addMaxima shows the max_items of md's fields (value.CheckItems, on
// every request) on their properties: maxItems on an array, maxProperties
// on an object (a google.protobuf.Struct or a map).
func addMaxima(md protoreflect.MessageDescriptor, props document) {
	for pname, p := range props {
		fd := md.Fields().ByName(protoreflect.Name(pname))
		if fd == nil {
			continue
		}
		if max, ok := value.MaxItems(fd); ok {
			prop, _ := p.(document)
			if prop["type"] == "array" {
				prop["maxItems"] = max
			} else if prop != nil {
				prop["maxProperties"] = max
			}
		}
	}
}

// describeValue completes one property (or parameter) from its comment.
func describeValue(name string, prop document) {
	desc, _ := prop["description"].(string)
	target := prop
	if prop["type"] == "array" {
		target, _ = prop["items"].(document)
	}
	if mayBeNull.MatchString(desc) {
		prop["x-nullable"] = true
	}
	if target == nil || target["type"] != "string" {
		return
	}
	if m := oneOf.FindStringSubmatch(desc); m != nil {
		var enum []any
		for _, v := range strings.Split(m[1], ", ") {
			enum = append(enum, v)
		}
		target["enum"] = enum
	}
	if dateOnly.MatchString(desc) {
		target["format"] = "date"
	}
	if isIDName(name) && !notUUID.MatchString(desc) {
		target["format"] = "uuid"
	}
}

// isRequest tells a request's definition (a message whose name says so,
// or the generator's body of one) from a response's. Requests keep the
// generator's required list: the fields the proto options declare.
func isRequest(name string) bool {
	return strings.HasSuffix(name, "Request") || strings.HasSuffix(name, "Body")
}

// messages indexes Atrium's messages by name: several packages may have a
// message of the same name.
var messages = sync.OnceValue(func() map[string][]protoreflect.MessageDescriptor {
	out := map[string][]protoreflect.MessageDescriptor{}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(fd.Package()), "atrium.") {
			for i := range fd.Messages().Len() {
				md := fd.Messages().Get(i)
				out[string(md.Name())] = append(out[string(md.Name())], md)
			}
		}
		return true
	})
	return out
})

// services indexes Atrium's services by name.
var services = sync.OnceValue(func() map[string]protoreflect.ServiceDescriptor {
	out := map[string]protoreflect.ServiceDescriptor{}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(fd.Package()), "atrium.") {
			for i := range fd.Services().Len() {
				sd := fd.Services().Get(i)
				out[string(sd.Name())] = sd
			}
		}
		return true
	})
	return out
})

// methodOf is the RPC behind an operation the generator named
// <Service>_<Method>.
func methodOf(operationID string) protoreflect.MethodDescriptor {
	service, method, ok := strings.Cut(operationID, "_")
	if !ok {
		return nil
	}
	sd, ok := services()[service]
	if !ok {
		return nil
	}
	return sd.Methods().ByName(protoreflect.Name(method))
}

// bodyMessageOf is the request message behind the generator's definition
// of a body that leaves out the path's fields, <Service><Method>Body.
func bodyMessageOf(name string) protoreflect.MessageDescriptor {
	rest, ok := strings.CutSuffix(name, "Body")
	if !ok {
		return nil
	}
	for sname, sd := range services() {
		if method, ok := strings.CutPrefix(rest, sname); ok {
			if md := sd.Methods().ByName(protoreflect.Name(method)); md != nil {
				return md.Input()
			}
		}
	}
	return nil
}

// messageOf is the message behind a definition the generator named
// v1<Message>: of the messages of that name, the one that has every
// property the definition shows.
func messageOf(name string, props document) protoreflect.MessageDescriptor {
	msg, ok := strings.CutPrefix(name, "v1")
	if !ok {
		return nil
	}
	for _, md := range messages()[msg] {
		all := true
		for p := range props {
			if md.Fields().ByName(protoreflect.Name(p)) == nil {
				all = false
				break
			}
		}
		if all {
			return md
		}
	}
	return nil
}

// schemaNames names the components: a message's own name (v1Prospect is
// Prospect), the generator's body definitions as they are.
func schemaNames(defs document) (map[string]string, error) {
	names := map[string]string{}
	taken := map[string]string{}
	for old := range defs {
		name := strings.TrimPrefix(old, "v1")
		name = strings.TrimPrefix(name, "protobuf")
		if strings.HasPrefix(name, "api") {
			name = "Http" + strings.TrimPrefix(name, "apiHttp")
		}
		if other, ok := taken[name]; ok {
			return nil, fmt.Errorf("definitions %s and %s would both be named %s", other, old, name)
		}
		taken[name] = old
		names[old] = name
	}
	return names, nil
}
