package app

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// This file holds what the handlers share: record ids, names and text
// clean-up.

// recordSpace is the UUID namespace of record ids derived from names.
var recordSpace = uuid.MustParse("6f1c2b7e-3c1d-5e7a-9b0c-a1d2e3f4a5b6")

// newID is the id of the n-th new record of a resource in this run: the
// same every time the run's writes are built, so writing them twice writes
// the same rows.
func (x *Exec) newID(resource string, n int) string {
	return uuid.NewSHA1(recordSpace, []byte(x.RunID+"|"+resource+"|"+itoa(n))).String()
}

// keyID is the id of the client's record of a resource that a refresh
// updates in place: the same for the same key, run after run.
func (x *Exec) keyID(resource, key string) string {
	return uuid.NewSHA1(recordSpace, []byte(x.Client.ID+"|"+resource+"|"+key)).String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// ts is a timestamp as rows carry it.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// clientName is how generated text names the client.
func (x *Exec) clientName() string {
	if x.Client.Name != "" {
		return x.Client.Name
	}
	if x.Client.Domain != "" {
		return x.Client.Domain
	}
	return "our company"
}

// clientDomain is the client's domain, bare.
func (x *Exec) clientDomain() string {
	d := strings.ToLower(strings.TrimSpace(x.Client.Domain))
	if u, err := url.Parse(d); err == nil && u.Host != "" {
		d = u.Hostname()
	}
	return strings.TrimPrefix(strings.TrimSuffix(d, "/"), "www.")
}

// normalURL is a URL as refresh keys use it: lower-case scheme and host,
// no fragment, no trailing slash on a path.
func normalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host, u.Fragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), ""
	if len(u.Path) > 1 {
		u.Path = strings.TrimSuffix(u.Path, "/")
	}
	return u.String()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// clip shortens s to at most n characters, at a word boundary when it can,
// with an ellipsis when it cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	if i := strings.LastIndexAny(string(r), " ,;"); i > n/2 {
		r = []rune(string(r)[:i])
	}
	return strings.TrimRight(string(r), " ,;.") + "…"
}

// oneLine removes what a model may wrap a short text in: quotes, a
// heading mark, line breaks.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, "# ")
	return strings.Trim(s, "\"'“”")
}

// WordCount counts the words of HTML or plain text: runs of characters
// outside tags, separated by spaces or tags. Entities (&amp;) count as the
// text they stand for, which is never a space.
func WordCount(s string) int {
	n, inTag, inWord := 0, false, false
	for _, r := range s {
		switch {
		case r == '<':
			inTag, inWord = true, false
		case r == '>' && inTag:
			inTag = false
		case inTag:
		case unicode.IsSpace(r):
			inWord = false
		case !inWord:
			inWord = true
			n++
		}
	}
	return n
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a URL slug of a title.
func slug(title string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	if s == "" {
		s = "post"
	}
	return s
}

// lines splits text into its non-empty lines, without list marks.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimLeft(l, "-*•0123456789.) ")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// published is how content is stored: a draft, or published at now when
// the client deploys without review.
func (x *Exec) published() (status string, published bool) {
	if x.Client.AutoDeploy {
		return "published", true
	}
	return "draft", false
}
