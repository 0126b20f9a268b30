package rest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
)

// JSONProtocolErrors wraps a listener so that the responses net/http writes
// itself, before any handler runs, go out as Atrium's JSON error body like
// every other error, and always as a 4xx: a request net/http cannot parse
// (400), oversized headers (431), a Transfer-Encoding it does not support
// (net/http says 501), an HTTP version it does not speak (505), an Expect
// header other than 100-continue (417). A 5xx would tell the client to
// retry a request that can never succeed.
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

// expectationFailed matches net/http's answer to an Expect header other
// than 100-continue: headers only, no body. No Atrium handler answers 417.
var expectationFailed = regexp.MustCompile(`^HTTP/1\.1 417 Expectation Failed\r\n(?s:.*)\r\n\r\n$`)

func (c jsonErrorConn) Write(b []byte) (int, error) {
	// net/http's own responses are errors (4xx, 5xx): a success, the most
	// of every write, skips the matching below.
	if len(b) < 12 || string(b[:9]) != "HTTP/1.1 " || (b[9] != '4' && b[9] != '5') {
		return c.Conn.Write(b) // a body, or a response of a handler
	}
	code, msg := 0, ""
	if m := protocolError.FindSubmatch(b); m != nil {
		code, msg = explainProtocolError(string(m[1]), string(m[2]))
	} else if expectationFailed.Match(b) {
		code, msg = http.StatusExpectationFailed, `unsupported Expect header: the only expectation Atrium meets is "100-continue"`
	} else {
		return c.Conn.Write(b)
	}
	body, _ := json.Marshal(Body{Error: msg})
	resp := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
	if _, err := c.Conn.Write([]byte(resp)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// explainProtocolError turns net/http's status and plain-text body into a
// 4xx status and a message for people.
func explainProtocolError(code, text string) (int, string) {
	// net/http's bodies read "400 Bad Request" or "400 Bad Request: <detail>".
	_, detail, _ := strings.Cut(text, ": ")
	switch code {
	case "431":
		return http.StatusRequestHeaderFieldsTooLarge, "request headers too large: the limit is 64 KiB"
	case "501":
		return http.StatusBadRequest, "unsupported Transfer-Encoding: send the body whole with a Content-Length, or chunked"
	case "505":
		return http.StatusBadRequest, "unsupported HTTP version: use HTTP/1.1 (or HTTP/2)"
	}
	if detail != "" {
		return http.StatusBadRequest, "malformed HTTP request: " + detail
	}
	return http.StatusBadRequest, "malformed HTTP request: the request line, a header, or the percent-encoding of the path could not be parsed"
}
