package rest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
)

// Marshaler is the JSON marshaler of both muxes: proto field names
// (snake_case), zero values printed, unset messages as null, unknown body
// fields refused. HttpBody responses pass through untouched.
func Marshaler() runtime.Marshaler {
	return &runtime.HTTPBodyMarshaler{Marshaler: jsonMarshaler{&runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}}
}

// jsonMarshaler rewrites body decoding errors into messages for people.
type jsonMarshaler struct{ *runtime.JSONPb }

func (m jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	dec := m.JSONPb.NewDecoder(r)
	return runtime.DecoderFunc(func(v any) error {
		err := dec.Decode(v)
		if err == nil || errors.Is(err, io.EOF) {
			return err
		}
		return bodyError(err)
	})
}

var protojsonErr = regexp.MustCompile(`^proto:\s*(syntax error )?\(line (\d+):(\d+)\):\s*(.*)$`)

func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("request body too large: the limit is %d bytes", tooLarge.Limit)
	}
	msg := err.Error()
	if m := protojsonErr.FindStringSubmatch(msg); m != nil {
		what := "invalid request body"
		if m[1] != "" {
			what = "request body is not valid JSON"
		}
		return fmt.Errorf("%s at line %s, column %s: %s", what, m[2], m[3], m[4])
	}
	if strings.HasPrefix(msg, "json: ") || strings.Contains(msg, "unexpected EOF") {
		return fmt.Errorf("request body is not valid JSON: %s", strings.TrimPrefix(msg, "json: "))
	}
	return fmt.Errorf("invalid request body: %s", strings.TrimPrefix(msg, "proto: "))
}
