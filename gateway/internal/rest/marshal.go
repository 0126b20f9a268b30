package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/atrium-hq/atrium/platform/render"
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

// jsonMarshaler writes a service's pre-rendered JSON body through untouched
// (platform/render) and marshals anything else with protojson; it rewrites
// body decoding errors into messages for people.
type jsonMarshaler struct{ *runtime.JSONPb }

// Marshal returns a response's rendered_json as is when the service filled
// it. Otherwise it marshals the typed message, leaving rendered_json out of
// the JSON.
func (m jsonMarshaler) Marshal(v any) ([]byte, error) {
	msg, ok := v.(proto.Message)
	if !ok || !render.HasField(msg) {
		return m.JSONPb.Marshal(v)
	}
	if b, ok := render.RenderedBytes(msg); ok {
		return b, nil
	}
	// A service that was asked to render and did not: marshal the typed
	// fields, without the empty rendered_json that EmitUnpopulated prints.
	b, err := m.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	delete(obj, render.Field)
	return json.Marshal(obj)
}

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
		// The unmarshaler stops after the first JSON value; anything after
		// it would be silently dropped, so that `{...} trailing` or
		// `{...}{...}` ran as if only the first object had been sent.
		return trailingData(data)
	})
}

// trailingData refuses a body with more than whitespace after its first
// JSON value, naming where the extra data starts. The value was accepted
// by the unmarshaler, so it is valid JSON: an object's or an array's end
// is found by matching its brackets (outside strings), without decoding
// the body a second time; another value goes through a decoder.
func trailingData(data []byte) error {
	end, ok := compositeEnd(data)
	if !ok {
		dec := json.NewDecoder(bytes.NewReader(data))
		if dec.Decode(new(json.RawMessage)) != nil {
			return nil // the unmarshaler accepted it; nothing more to say
		}
		end = int(dec.InputOffset())
	}
	rest := bytes.TrimLeft(data[end:], " \t\r\n")
	if len(rest) == 0 {
		return nil
	}
	at := len(data) - len(rest)
	line, col := 1, 1
	for _, c := range data[:at] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("request body must be one JSON object with nothing after it; found more data at line %d, column %d (byte %d)", line, col, at+1)
}

// compositeEnd is the offset just past the object or array data starts
// with (after whitespace), which must be valid JSON; false if data starts
// with another value or the brackets do not close.
func compositeEnd(data []byte) (int, bool) {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	if i == len(data) || (data[i] != '{' && data[i] != '[') {
		return 0, false
	}
	depth, inString := 0, false
	for ; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped character, a quote or a backslash among them
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
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
	if line, col, esc, ok := loneSurrogate(body); ok {
		return fmt.Errorf(`request body is not valid JSON at line %d, column %d: %s is half of a UTF-16 surrogate pair; `+
			`send the whole pair (such as \ud83d\ude00) or the character itself as UTF-8`, line, col, esc)
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
		if strings.HasPrefix(m[4], "unexpected token") && json.Valid(body) {
			// Valid JSON with a value of the wrong kind where the route
			// expects another (an array for an object, say): name the field.
			line, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			if field := fieldAt(body, line, col); field != "" {
				return fmt.Errorf("invalid request body: %s has the wrong type (at line %d, column %d: %s)", field, line, col, m[4])
			}
			what = "invalid request body"
		}
		return fmt.Errorf("%s at line %s, column %s: %s", what, m[2], m[3], m[4])
	}
	msg = libraryPrefix.ReplaceAllString(msg, "")
	if strings.Contains(msg, "unexpected EOF") {
		return errors.New("request body is not valid JSON: it ends before the JSON value does")
	}
	// encoding/json's syntax errors, by type: their wording changed in Go
	// 1.27 (an invalid escape was "invalid character 'x' in string escape
	// code", it is "invalid escape sequence `\x` in string").
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) || strings.HasPrefix(err.Error(), "json: ") || strings.Contains(msg, "invalid character") {
		return fmt.Errorf("request body is not valid JSON: %s", msg)
	}
	return fmt.Errorf("invalid request body: %s", msg)
}

// libraryPrefix matches the package names libraries start their errors
// with, which mean nothing to a caller.
var libraryPrefix = regexp.MustCompile(`\b(proto|json|protojson):\s*`)

// loneSurrogate finds a \uD800-\uDFFF escape that is not part of a
// high-then-low pair, which JSON forbids in practice (RFC 8259 section 8.2)
// and protojson reports only as an unexpected end of input.
func loneSurrogate(body []byte) (line, col int, esc string, ok bool) {
	line, col = 1, 1
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\n' {
			line, col = line+1, 1
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			col++
			continue
		}
		// An escape: \uXXXX or a two-character one.
		if body[i+1] != 'u' || i+6 > len(body) {
			i++
			col += 2
			continue
		}
		hi, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		if err != nil {
			i += 5
			col += 6
			continue
		}
		switch {
		case hi >= 0xD800 && hi <= 0xDBFF:
			if i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
				if lo, err := strconv.ParseUint(string(body[i+8:i+12]), 16, 16); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					col += 12
					continue
				}
			}
			return line, col, string(body[i : i+6]), true
		case hi >= 0xDC00 && hi <= 0xDFFF:
			return line, col, string(body[i : i+6]), true
		}
		i += 5
		col += 6
	}
	return 0, 0, "", false
}

// fieldAt returns the top-level field of a JSON object body whose value
// holds the given line and column (1-based, columns in bytes), or "".
func fieldAt(body []byte, line, col int) string {
	offset, l := 0, 1
	for i := 0; i < len(body) && l < line; i++ {
		if body[i] == '\n' {
			l++
			offset = i + 1
		}
	}
	offset += col - 1
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		start := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return ""
		}
		if offset >= start && offset < int(dec.InputOffset()) {
			k, _ := key.(string)
			return k
		}
	}
	return ""
}
