package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// Request is a parsed action request: the action, its client and its
// validated fields.
type Request struct {
	Action   *action.Action
	ClientID string
	Input    action.Input
}

// bodyFields are the request fields every action takes.
var bodyFields = []string{"action", "client_id"}

// multiline fields may hold line breaks; every other string is one line.
var multiline = map[string]bool{"transcript": true, "prompt": true, "html": true}

// ParseRequest checks a request body in the order a caller fixes it: the
// action, the client, then the action's fields. allowPrivate lets fetched
// URLs name private network addresses (local testing only).
func ParseRequest(body map[string]any, allowPrivate bool) (Request, error) {
	names := list(Names())
	if len(body) == 0 {
		return Request{}, apperr.Invalid("the request body must be a JSON object with action, client_id and the action's fields; actions: %s", names)
	}
	raw, ok := body["action"]
	if !ok || raw == nil {
		return Request{}, apperr.Invalid("action is required; one of: %s", names)
	}
	name, ok := raw.(string)
	if !ok {
		return Request{}, apperr.Invalid("action must be a string, one of: %s; got %s", names, describe(raw))
	}
	a, ok := Lookup(name)
	if !ok {
		return Request{}, apperr.Invalid("unknown action %q; valid actions: %s", name, names)
	}
	raw, ok = body["client_id"]
	if !ok || raw == nil || raw == "" {
		return Request{}, apperr.Invalid("client_id is required: the id of the client the action runs for, linked to your agency")
	}
	clientID, ok := raw.(string)
	if !ok {
		return Request{}, apperr.Invalid("client_id must be a string (a client's id); got %s", describe(raw))
	}
	for k := range body {
		if slices.Contains(bodyFields, k) {
			continue
		}
		if _, ok := a.Field(k); !ok {
			if len(a.Fields) == 0 {
				return Request{}, apperr.Invalid("%s is not a field of %s, which takes no fields besides action and client_id", k, a.Name)
			}
			return Request{}, apperr.Invalid("%s is not a field of %s; its fields are: %s", k, a.Name, list(a.FieldNames()))
		}
	}
	in := action.Input{}
	for _, f := range a.Fields {
		v, given := body[f.Name]
		if s, ok := v.(string); ok && s == "" && !f.Required {
			given = false // an empty optional field is an absent one
		}
		if !given || v == nil {
			if f.Required {
				return Request{}, apperr.Invalid("%s requires the field %s: %s", a.Name, f.Name, f.Description)
			}
			if f.Default != nil {
				in[f.Name] = f.Default
			}
			continue
		}
		val, err := checkField(a, f, v, allowPrivate)
		if err != nil {
			return Request{}, err
		}
		in[f.Name] = val
	}
	return Request{Action: a, ClientID: clientID, Input: in}, nil
}

// checkField validates one field's value and returns it in its Input form.
func checkField(a *action.Action, f action.Field, v any, allowPrivate bool) (any, error) {
	name := a.Name + "." + f.Name
	switch f.Type {
	case action.TString:
		s, ok := v.(string)
		if !ok {
			return nil, apperr.Invalid("%s must be a string; got %s", name, describe(v))
		}
		return checkString(name, f, s, allowPrivate)
	case action.TNumber, action.TInteger:
		n, ok := v.(float64)
		if !ok {
			if s, isStr := v.(string); isStr {
				if _, err := strconv.ParseFloat(s, 64); err == nil {
					return nil, apperr.Invalid("%s must be a JSON number, not a string; got %q", name, s)
				}
			}
			return nil, apperr.Invalid("%s must be a number; got %s", name, describe(v))
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, apperr.Invalid("%s must be a finite number", name)
		}
		kind := "a number"
		if f.Type == action.TInteger {
			kind = "an integer"
			if n != math.Trunc(n) {
				return nil, apperr.Invalid("%s must be %s%s; got %s", name, kind, bounds(f), fmtNum(n))
			}
		}
		if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
			return nil, apperr.Invalid("%s must be %s%s; got %s", name, kind, bounds(f), fmtNum(n))
		}
		return n, nil
	case action.TBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, apperr.Invalid("%s must be true or false; got %s", name, describe(v))
		}
		return b, nil
	case action.TArray:
		items, ok := v.([]any)
		if !ok {
			return nil, apperr.Invalid("%s must be an array of strings; got %s", name, describe(v))
		}
		if f.MaxItems > 0 && len(items) > f.MaxItems {
			return nil, apperr.Invalid("%s takes at most %d items; got %d", name, f.MaxItems, len(items))
		}
		out := make([]string, 0, len(items))
		for i, it := range items {
			s, ok := it.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, apperr.Invalid("%s[%d] must be a non-empty string; got %s", name, i, describe(it))
			}
			if _, err := checkString(fmt.Sprintf("%s[%d]", name, i), f, s, allowPrivate); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("field %s has unknown type %q", name, f.Type)
}

func checkString(name string, f action.Field, s string, allowPrivate bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", apperr.Invalid("%s must be valid UTF-8", name)
	}
	if strings.TrimSpace(s) == "" {
		return "", apperr.Invalid("%s must not be empty or blank", name)
	}
	if n := utf8.RuneCountInString(s); f.MaxLength > 0 && n > f.MaxLength {
		return "", apperr.Invalid("%s must be at most %d characters; got %d", name, f.MaxLength, n)
	}
	if !multiline[f.Name] {
		if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\t' }); i >= 0 {
			return "", apperr.Invalid("%s must be one line: no line breaks or control characters", name)
		}
	}
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
		return "", apperr.Invalid("%s must be one of: %s; got %q", name, list(f.Enum), s)
	}
	switch f.Format {
	case action.FormatURL:
		if err := checkURL(s, f.Fetched && !allowPrivate); err != "" {
			return "", apperr.Invalid("%s must be an absolute http or https URL%s; %s", name, publicNote(f, allowPrivate), err)
		}
	case action.FormatEmail:
		addr, err := mail.ParseAddress(s)
		if err != nil || addr.Name != "" || addr.Address != s {
			return "", apperr.Invalid("%s must be one email address such as name@example.com, without a display name; got %q", name, s)
		}
	case action.FormatUUID:
		if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
			return "", apperr.Invalid("%s must be a UUID such as 0190a5e4-7b7e-7c1a-9f00-5b1f2e3d4c5a; got %q", name, s)
		}
	}
	return s, nil
}

func publicNote(f action.Field, allowPrivate bool) string {
	if f.Fetched && !allowPrivate {
		return " on a public address"
	}
	return ""
}

// checkURL returns what is wrong with s as a URL, or "". With public, a
// host that is a private, loopback or link-local address literal, or
// localhost, is refused; names that resolve to such addresses are refused
// by the fetcher when it dials.
func checkURL(s string, public bool) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("got %q", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("the scheme must be http or https; got %q", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("it has no host; got %q", s)
	case u.User != nil:
		return "it must not carry a user name or password"
	case strings.ContainsAny(s, " \t"):
		return "it must not contain spaces (percent-encode them as %20)"
	}
	if !public {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Sprintf("%s is this machine", u.Hostname())
	}
	if ip := net.ParseIP(host); ip != nil && !publicIP(ip) {
		return fmt.Sprintf("%s is a private, loopback or link-local address", u.Hostname())
	}
	return ""
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

func publicIP(ip net.IP) bool {
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || cgnat.Contains(ip))
}

func bounds(f action.Field) string {
	switch {
	case f.Min != nil && f.Max != nil:
		return fmt.Sprintf(" between %s and %s", fmtNum(*f.Min), fmtNum(*f.Max))
	case f.Min != nil:
		return " of at least " + fmtNum(*f.Min)
	case f.Max != nil:
		return " of at most " + fmtNum(*f.Max)
	}
	return ""
}

func fmtNum(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// describe names a JSON value for a message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if utf8.RuneCountInString(v) > 40 {
			return fmt.Sprintf("a string of %d characters", utf8.RuneCountInString(v))
		}
		return strconv.Quote(v)
	case float64:
		b, _ := json.Marshal(v)
		return "the number " + string(b)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
