package rest

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
	keys := slices.Sorted(maps.Keys(values))
	values = maps.Clone(values) // checkScalar may replace a value
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
		vs = slices.Clone(vs)
		for i, v := range vs {
			c, err := checkScalar(k, f, v)
			if err != nil {
				return err
			}
			vs[i] = c
		}
		values[k] = vs
	}
	return (&runtime.DefaultQueryParser{}).Parse(msg, values, filter)
}

// checkScalar checks v against the field's type and returns the value to
// parse. An integer beyond the 32-bit range becomes the nearest 32-bit
// value, so that the route's own rule for large (or negative) numbers
// judges it, as it judges any other: a limit of 99999999999 is capped like
// one of 5000.
func checkScalar(name string, f protoreflect.FieldDescriptor, v string) (string, error) {
	var err error
	switch f.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v) {
			return "", fmt.Errorf("query parameter %s is not valid UTF-8 once percent-decoded", name)
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			if !integer.MatchString(v) {
				return "", fmt.Errorf("query parameter %s must be an integer; got %q", name, v)
			}
			if strings.HasPrefix(v, "-") {
				return strconv.Itoa(math.MinInt32), nil
			}
			return strconv.Itoa(math.MaxInt32), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(v, 10, 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = strconv.ParseUint(v, 10, 32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = strconv.ParseUint(v, 10, 64)
	case protoreflect.BoolKind:
		if v != "true" && v != "false" {
			return "", fmt.Errorf("query parameter %s must be true or false; got %q", name, v)
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		_, err = strconv.ParseFloat(v, 64)
	}
	if err != nil {
		return "", fmt.Errorf("query parameter %s must be a number; got %q", name, v)
	}
	return v, nil
}

// integer matches a decimal integer of any size.
var integer = regexp.MustCompile(`^[+-]?[0-9]+$`)
