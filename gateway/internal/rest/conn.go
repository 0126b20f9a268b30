package rest

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
)

// JSONProtocolErrors wraps a listener so that the plain-text errors net/http
// writes itself, for requests it cannot parse before any handler runs (a bad
// percent-escape in the path, a malformed header, oversized headers), go out
// as Atrium's JSON error body like every other error.
func JSONProtocolErrors(l net.Listener) net.Listener { return jsonErrorListener{l} }

type jsonErrorListener struct{ net.Listener }

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return jsonErrorConn{c}, nil
}

type jsonErrorConn struct{ net.Conn }

// protocolError matches the whole of net/http's own error responses (it
// writes each in one call). Responses from handlers never match: their
// headers are written sorted, so Connection never follows Content-Type.
var protocolError = regexp.MustCompile(`^HTTP/1\.1 (\d{3}) [^\r\n]*\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n(?s:(.*))$`)

func (c jsonErrorConn) Write(b []byte) (int, error) {
	m := protocolError.FindSubmatch(b)
	if m == nil {
		return c.Conn.Write(b)
	}
	code, text := string(m[1]), strings.TrimPrefix(string(m[2]), string(m[1])+" ")
	msg := "malformed HTTP request: " + strings.ToLower(text[:1]) + text[1:]
	switch code {
	case "400":
		msg = "malformed HTTP request: the request line, a header, or the percent-encoding of the path could not be parsed"
	case "431":
		msg = "request headers too large: the limit is 64 KiB"
	}
	body, _ := json.Marshal(Body{Error: msg})
	resp := fmt.Sprintf("HTTP/1.1 %s %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, statusText(code), len(body), body)
	if _, err := c.Conn.Write([]byte(resp)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func statusText(code string) string {
	switch code {
	case "400":
		return "Bad Request"
	case "431":
		return "Request Header Fields Too Large"
	case "501":
		return "Not Implemented"
	}
	return "Error"
}
