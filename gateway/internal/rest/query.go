package rest

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// QueryParser checks query parameters before grpc-gateway's parser fills
// the request: only the request's own top-level scalar fields are accepted,
// by their snake_case names, each once, with values of the field's type.
// grpc-gateway alone would ignore unknown parameters, so a misspelt filter
// would silently return unfiltered data.
type QueryParser struct{}

// Parse implements runtime.QueryParameterParser.
func (QueryParser) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	fields := msg.ProtoReflect().Descriptor().Fields()
	var allowed []string
	for i := range fields.Len() {
		f := fields.Get(i)
		if !filter.HasCommonPrefix([]string{string(f.Name())}) && f.Kind() != protoreflect.MessageKind && f.Kind() != protoreflect.GroupKind {
			allowed = append(allowed, string(f.Name()))
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return fmt.Errorf("unknown query parameter %q; this route takes no query parameters", k)
			}
			return fmt.Errorf("unknown query parameter %q; allowed: %s", k, strings.Join(allowed, ", "))
		}
		f := fields.ByName(protoreflect.Name(k))
		vs := values[k]
		if !f.IsList() && len(vs) > 1 {
			return fmt.Errorf("query parameter %s is given %d times; give it once", k, len(vs))
		}
		for _, v := range vs {
			if err := checkScalar(k, f, v); err != nil {
				return err
			}
		}
	}
	return (&runtime.DefaultQueryParser{}).Parse(msg, values, filter)
}

func checkScalar(name string, f protoreflect.FieldDescriptor, v string) error {
	var err error
	switch f.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if _, err = strconv.ParseInt(v, 10, 32); err != nil {
			return fmt.Errorf("query parameter %s must be an integer; got %q", name, v)
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(v, 10, 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = strconv.ParseUint(v, 10, 32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = strconv.ParseUint(v, 10, 64)
	case protoreflect.BoolKind:
		if v != "true" && v != "false" {
			return fmt.Errorf("query parameter %s must be true or false; got %q", name, v)
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		_, err = strconv.ParseFloat(v, 64)
	}
	if err != nil {
		return fmt.Errorf("query parameter %s must be a number; got %q", name, v)
	}
	return nil
}
