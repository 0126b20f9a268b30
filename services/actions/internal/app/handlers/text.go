package handlers

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// What the handlers share about text: asking the generator, naming the
// client, and cleaning up what a model wrote.

// write asks the text generator for fields and checks it gave them all.
func write(ctx context.Context, x *action.Exec, kind, instructions string, inputs map[string]string, fields ...provider.TextField) (provider.Text, error) {
	t, err := x.P.Text.Generate(ctx, provider.TextRequest{Kind: kind, Instructions: instructions, Inputs: inputs, Fields: fields})
	if err != nil {
		return provider.Text{}, err
	}
	for _, f := range fields {
		if strings.TrimSpace(t.Fields[f.Name]) == "" {
			return provider.Text{}, provider.Failure("text generator", 502, nil, "the text generator's answer had no %s", f.Name)
		}
	}
	return t, nil
}

// clientName is how generated text names the client.
func clientName(x *action.Exec) string {
	if x.Client.Name != "" {
		return x.Client.Name
	}
	if x.Client.Domain != "" {
		return x.Client.Domain
	}
	return "our company"
}

// clientDomain is the client's domain, bare.
func clientDomain(x *action.Exec) string {
	d := strings.ToLower(strings.TrimSpace(x.Client.Domain))
	if u, err := url.Parse(d); err == nil && u.Host != "" {
		d = u.Hostname()
	}
	return strings.TrimPrefix(strings.TrimSuffix(d, "/"), "www.")
}

func clientDomainOrName(x *action.Exec) string {
	if d := clientDomain(x); d != "" {
		return d
	}
	return clientName(x)
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
