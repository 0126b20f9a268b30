package smtpmail

import (
	"strings"
	"testing"
	"time"
)

// TestCheckSubject: a subject is one line, so it cannot add headers of
// its own, whatever reached the mailer.
func TestCheckSubject(t *testing.T) {
	for _, ok := range []string{"Your SEO plan", "Résumé — 東京 🚀", strings.Repeat("é", MaxSubjectLength)} {
		if err := checkSubject(ok); err != nil {
			t.Errorf("checkSubject(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "  ", "Hi\r\nBcc: x@y.example", "Hi\nthere", "Hi\rthere", "Hi\tthere", "Hi\x00there", "Hi\x1bthere", "Hi \xff",
		strings.Repeat("a", MaxSubjectLength+1)} {
		if err := checkSubject(bad); err == nil || !strings.Contains(err.Error(), "one line of 1 to 500 characters") {
			t.Errorf("checkSubject(%q) = %v, want an error saying what a subject may be", bad, err)
		}
	}
}

func TestNewValidatesTheConfig(t *testing.T) {
	valid := Config{Addr: "smtp.example.com:587", From: "noreply@agency.example"}
	for _, from := range []string{valid.From, "Agency Outreach <noreply@agency.example>", "Zoë <zoe@agency.example>"} {
		cfg := valid
		cfg.From = from
		if _, err := New(cfg); err != nil {
			t.Fatalf("New(%+v) = %v", cfg, err)
		}
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Addr = "" }, "Addr"},
		{func(c *Config) { c.Addr = "smtp.example.com" }, "Addr"},
		{func(c *Config) { c.Addr = "smtp.example.com:smtp" }, "port"},
		{func(c *Config) { c.Addr = "smtp.example.com:70000" }, "port"},
		{func(c *Config) { c.From = "" }, "From"},
		{func(c *Config) { c.From = "agency.example" }, "From"},
		{func(c *Config) { c.From = "noreply@agency.example\r\nBcc: x@y.example" }, "From"},
		{func(c *Config) { c.From = "noreply@[127.0.0.1]" }, "From"},
		{func(c *Config) { c.TLS = "ssl" }, "TLS"},
		{func(c *Config) { c.Username = "agency" }, "Username and Password"},
		{func(c *Config) { c.Password = "secret" }, "Username and Password"},
		{func(c *Config) { c.TLS, c.Username, c.Password = TLSNone, "agency", "secret" }, "clear text"},
		{func(c *Config) { c.HELO = "bad name\r\nMAIL FROM:<x>" }, "HELO"},
		{func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
	} {
		cfg := valid
		tc.change(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %q", cfg, err, tc.want)
		}
		if err != nil && cfg.Password != "" && strings.Contains(err.Error(), cfg.Password) {
			t.Errorf("New's error %q holds the password", err)
		}
	}
}

func TestHTMLToText(t *testing.T) {
	for _, tc := range []struct{ html, want string }{
		{"Plain text, no tags", "Plain text, no tags"},
		{"<p>One</p><p>Two</p>", "One\n\nTwo"},
		{"<h1>Title</h1>\n\n\n<p>Body   text\n  wrapped</p>", "Title\n\nBody text wrapped"},
		{"line one<br>line two<br/><br>after a blank", "line one\nline two\n\nafter a blank"},
		{"<p>Fish &amp; chips &lt;3 &eacute;t&eacute; &#8212; &#x1F680;</p>", "Fish & chips <3 été — 🚀"},
		{"<ol><li>first</li><li>second<ul><li>nested</li></ul></li></ol><p>after</p>", "1. first\n2. second\n  - nested\n\nafter"},
		{"<div>a</div><div>b</div>", "a\nb"},
		{"<table><tr><th>Keyword</th><th>Rank</th></tr><tr><td>seo</td><td>3</td></tr></table>", "Keyword Rank\nseo 3"},
		{"<html><head><title>Hidden</title><style>p{color:red}</style></head><body><script>alert(1)</script><p>Shown</p></body></html>", "Shown"},
		{`<p><a href="https://agency.example/">agency.example</a> and <a href="mailto:hi@agency.example">write to us</a> or <a href="#top">top</a></p>`,
			"agency.example and write to us (hi@agency.example) or top"},
		{"<p>inline <b>bold</b><i>italic</i> text</p>", "inline bolditalic text"},
		{"<pre>  code\n    indented\n</pre><p>after</p>", "  code\n    indented\n\nafter"},
		{`<p>An image: <img src="x.png" alt="the chart"></p>`, "An image: the chart"},
		{"<p>unclosed <b>tags", "unclosed tags"},
	} {
		if got := htmlToText(tc.html); got != tc.want {
			t.Errorf("htmlToText(%q)\n got %q\nwant %q", tc.html, got, tc.want)
		}
	}
}

func TestFoldKeepsHeaderLinesShort(t *testing.T) {
	long := "Subject: " + encodeHeader(strings.Repeat("Ünïcödé ", 40))
	folded := fold(long)
	for _, line := range strings.Split(folded, "\r\n") {
		if len(line) > 78 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	if unfolded := strings.ReplaceAll(folded, "\r\n", ""); unfolded != long {
		t.Errorf("unfolding does not give the line back:\n got %q\nwant %q", unfolded, long)
	}
}
