package rest

import (
	"bytes"
	"encoding/json"
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

// NewDecoder reads the whole (size-limited) body first, so that an error
// can be explained with the field it is about.
func (m jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return bodyError(err, nil)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return io.EOF // an empty body is an empty request message
		}
		if err := m.JSONPb.Unmarshal(data, v); err != nil {
			return bodyError(err, data)
		}
		return nil
	})
}

var (
	protojsonErr  = regexp.MustCompile(`^proto:\s*(syntax error )?\(line (\d+):(\d+)\):\s*(.*)$`)
	wellKnownErr  = regexp.MustCompile(`^invalid google\.protobuf\.(\w+) value ("(?:[^"\\]|\\.)*")$`)
	wellKnownForm = map[string]string{
		"Timestamp": "an RFC 3339 timestamp such as 2026-01-02T15:04:05Z",
		"Duration":  "a duration in seconds such as \"1.5s\"",
	}
)

// fieldWithValue finds the top-level field of body holding the JSON string
// literal, which names the field a well-known-type error is about.
func fieldWithValue(body []byte, literal string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return ""
	}
	for k, v := range obj {
		if string(bytes.TrimSpace(v)) == literal {
			return k
		}
	}
	return ""
}

func bodyError(err error, body []byte) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("request body too large: the limit is %d bytes", tooLarge.Limit)
	}
	// protojson randomly writes U+00A0 instead of a space in its messages
	// (per binary, so that nobody matches them byte for byte); fold it.
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	if m := protojsonErr.FindStringSubmatch(msg); m != nil {
		what := "invalid request body"
		if m[1] != "" {
			what = "request body is not valid JSON"
		}
		if wk := wellKnownErr.FindStringSubmatch(m[4]); wk != nil {
			if field := fieldWithValue(body, wk[2]); field != "" && wellKnownForm[wk[1]] != "" {
				return fmt.Errorf("%s: %s must be %s; got %s", what, field, wellKnownForm[wk[1]], wk[2])
			}
		}
		return fmt.Errorf("%s at line %s, column %s: %s", what, m[2], m[3], m[4])
	}
	if strings.HasPrefix(msg, "json: ") || strings.Contains(msg, "unexpected EOF") {
		return fmt.Errorf("request body is not valid JSON: %s", strings.TrimPrefix(msg, "json: "))
	}
	return fmt.Errorf("invalid request body: %s", strings.TrimPrefix(msg, "proto: "))
}
