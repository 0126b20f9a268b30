package value

import (
	"strconv"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/atrium-hq/atrium/platform/apperr"
	limitsv1 "github.com/atrium-hq/atrium/proto/atrium/limits/v1"
)

// The well-known types that are a map or a list in disguise: a Struct is a
// map of keys to values, a ListValue a list of values.
const (
	structName    protoreflect.FullName = "google.protobuf.Struct"
	listValueName protoreflect.FullName = "google.protobuf.ListValue"
)

// Countable tells the fields whose size a client chooses, which therefore
// declare a maximum with the atrium.limits.v1.max_items option: repeated
// fields, maps, and the google.protobuf.Struct and ListValue fields (a JSON
// object and a JSON array). A google.protobuf.Value field is a scalar slot
// by contract (a timestamp or null, a default): a list or an object sent
// there is refused by the service's check of that value, and its size is
// bounded by the message size like every other value's.
func Countable(fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() {
		return true
	}
	if md := fd.Message(); md != nil {
		return md.FullName() == structName || md.FullName() == listValueName
	}
	return false
}

// MaxItems returns the maximum a field declares with the
// atrium.limits.v1.max_items option, if it declares one.
func MaxItems(fd protoreflect.FieldDescriptor) (int, bool) {
	opts, ok := fd.Options().(*descriptorpb.FieldOptions)
	if !ok || opts == nil || !proto.HasExtension(opts, limitsv1.E_MaxItems) {
		return 0, false
	}
	n, _ := proto.GetExtension(opts, limitsv1.E_MaxItems).(uint32)
	return int(n), true
}

// CheckItems returns nil when every field of m, and of the messages nested
// in it, holds at most the entries its max_items option allows, or else
// the 400 of the first that holds more: "<field> has <n> items; at most
// <max> are allowed" (keys for a JSON object), the field named by its
// path in the request (fields[2].options). Every service's server runs it
// on every request before the service sees it (platform/rpc), so that a
// rule stated in the proto is enforced for the gateway's calls and for
// direct gRPC calls alike.
func CheckItems(m proto.Message) error { return CheckBody(m, "") }

// CheckBody is CheckItems for a request whose field body is the whole
// HTTP body (a google.api.http rule's body: "params"): a client never
// named that field, so the 400 calls it "the request body".
func CheckBody(m proto.Message, body string) error {
	if m == nil {
		return nil
	}
	r := m.ProtoReflect()
	p := planOf(r.Descriptor())
	if len(p) == 0 {
		return nil
	}
	return p.check(r, "", protoreflect.Name(body))
}

// A plan is what CheckItems looks at in a message: the fields that declare
// a maximum and those whose messages hold one, worked out once per
// message type so that a request with nothing to count costs one lookup.
type plan []step

type step struct {
	fd     protoreflect.FieldDescriptor
	max    int
	capped bool
	nested plan // the plan of the field's message, for Atrium's own messages
}

var plans sync.Map // protoreflect.FullName -> plan

func planOf(md protoreflect.MessageDescriptor) plan {
	if p, ok := plans.Load(md.FullName()); ok {
		return p.(plan)
	}
	p := buildPlan(md, map[protoreflect.FullName]bool{})
	plans.Store(md.FullName(), p)
	return p
}

// buildPlan walks md's fields; visiting guards against a message that
// contains itself (none of Atrium's requests does today: such a field
// would need a maximum of its own to be bounded).
func buildPlan(md protoreflect.MessageDescriptor, visiting map[protoreflect.FullName]bool) plan {
	visiting[md.FullName()] = true
	defer delete(visiting, md.FullName())
	var p plan
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		s := step{fd: fd}
		s.max, s.capped = MaxItems(fd)
		s.capped = s.capped && Countable(fd) // a maximum means nothing elsewhere (a test holds the protos to it)
		if sub := fd.Message(); sub != nil && !fd.IsMap() && sub.ParentFile().Package() != "google.protobuf" && !visiting[sub.FullName()] {
			s.nested = buildPlan(sub, visiting)
		}
		if s.capped || len(s.nested) > 0 {
			p = append(p, s)
		}
	}
	return p
}

// check checks m, whose fields are named prefix + their name, except a
// top-level field named body (see CheckBody).
func (p plan) check(m protoreflect.Message, prefix string, body protoreflect.Name) error {
	for _, s := range p {
		if !m.Has(s.fd) {
			continue
		}
		// The name is built only when needed: most requests pass.
		name := func() string {
			if body != "" && s.fd.Name() == body {
				return "the request body"
			}
			return prefix + string(s.fd.Name())
		}
		v := m.Get(s.fd)
		switch {
		case s.fd.IsList():
			list := v.List()
			if s.capped && list.Len() > s.max {
				return tooMany(name(), list.Len(), s.max, "items")
			}
			if len(s.nested) > 0 {
				for i := range list.Len() {
					if err := s.nested.check(list.Get(i).Message(), name()+"["+strconv.Itoa(i)+"].", ""); err != nil {
						return err
					}
				}
			}
		case s.fd.IsMap():
			if n := v.Map().Len(); s.capped && n > s.max {
				return tooMany(name(), n, s.max, "keys")
			}
		case s.fd.Message().FullName() == structName:
			if n := entries(v.Message(), "fields"); s.capped && n > s.max {
				return tooMany(name(), n, s.max, "keys")
			}
		case s.fd.Message().FullName() == listValueName:
			if n := entries(v.Message(), "values"); s.capped && n > s.max {
				return tooMany(name(), n, s.max, "items")
			}
		case len(s.nested) > 0:
			inner := name() + "."
			if body != "" && s.fd.Name() == body {
				inner = "" // the body's fields are the client's top level
			}
			if err := s.nested.check(v.Message(), inner, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// entries counts the map or list field of a Struct or ListValue by name,
// through reflection, so that dynamic messages count as generated ones do.
func entries(m protoreflect.Message, field protoreflect.Name) int {
	fd := m.Descriptor().Fields().ByName(field)
	if fd == nil || !m.Has(fd) {
		return 0
	}
	if fd.IsMap() {
		return m.Get(fd).Map().Len()
	}
	return m.Get(fd).List().Len()
}

// tooMany is the 400 of a field over its maximum. The docs quote it
// (docs/http-api.md, "Limits").
func tooMany(name string, n, max int, what string) error {
	return apperr.Invalid("%s has %d %s; at most %d are allowed", name, n, what, max)
}
