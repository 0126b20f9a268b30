package richtext

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestMarkdownToHTML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"headings", "# One\n## Two ##\n###### Six", "<h1>One</h1>\n<h2>Two</h2>\n<h6>Six</h6>\n"},
		{"not a heading", "#hashtag", "<p>#hashtag</p>\n"},
		{"paragraphs", "one\ntwo\n\nthree", "<p>one\ntwo</p>\n<p>three</p>\n"},
		{"hard break", "one  \ntwo\\\nthree", "<p>one<br>\ntwo<br>\nthree</p>\n"},
		{"bullets", "- a\n- b\n* c", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<ul>\n<li>c</li>\n</ul>\n"},
		{"ordered from 3", "3. a\n4. b", "<ol start=\"3\">\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"nested", "- a\n  - b\n- c", "<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ul>\n"},
		{"loose list", "- a\n\n  more\n- b", "<ul>\n<li><p>a</p>\n<p>more</p>\n</li>\n<li>b</li>\n</ul>\n"},
		{"lazy continuation", "- a\nstill a", "<ul>\n<li>a\nstill a</li>\n</ul>\n"},
		{"link", `[Atrium](https://atrium.example/docs "The docs")`, "<p><a href=\"https://atrium.example/docs\" title=\"The docs\">Atrium</a></p>\n"},
		{"image", `![A cat](/files/ab/cat.png)`, "<p><img src=\"/files/ab/cat.png\" alt=\"A cat\"></p>\n"},
		{"emphasis", "**bold** and *em* and __b__ and _e_", "<p><strong>bold</strong> and <em>em</em> and <strong>b</strong> and <em>e</em></p>\n"},
		{"snake case", "a_b_c and 2*3*4", "<p>a_b_c and 2<em>3</em>4</p>\n"},
		{"code span", "use `a <b> & c` here", "<p>use <code>a &lt;b&gt; &amp; c</code> here</p>\n"},
		{"no markup in code", "`**not bold**`", "<p><code>**not bold**</code></p>\n"},
		{"fence", "```go\nif a < b {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n}\n</code></pre>\n"},
		{"quote", "> quoted\n> **text**", "<blockquote>\n<p>quoted\n<strong>text</strong></p>\n</blockquote>\n"},
		{"rule", "a\n\n---\n\nb", "<p>a</p>\n<hr>\n<p>b</p>\n"},
		{"escapes", `\*not em\* \[not link\]`, "<p>*not em* [not link]</p>\n"},
		{"raw html is text", `<script>alert(1)</script>`, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"},
		{"javascript link is text", `[click](javascript:alert(1))`, "<p>click</p>\n"},
		{"obfuscated link is text", "[click](JaVa\tScRiPt:alert(1))", "<p>[click](JaVa\tScRiPt:alert(1))</p>\n"},
		{"data image is its alt", `![x](data:image/png;base64,AAAA)`, "<p>x</p>\n"},
		{"quotes in attributes", `[a](/x "say \"hi\"")`, "<p><a href=\"/x\" title=\"say &#34;hi&#34;\">a</a></p>\n"},
		{"unclosed", "**open and [bracket and `tick", "<p>**open and [bracket and `tick</p>\n"},
		{"crlf", "# T\r\n\r\np", "<h1>T</h1>\n<p>p</p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MarkdownToHTML(tt.in); got != tt.want {
				t.Errorf("MarkdownToHTML(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLooksLikeMarkdown(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"# Title\n\ntext", true},
		{"- one\n- two", true},
		{"1. first", true},
		{"Some **bold** text", true},
		{"a [link](https://x.example)", true},
		{"some `code`", true},
		{"> a quote", true},
		{"Text with `<p>` in code", true},
		{"```html\n<p>example</p>\n```", true},
		{"<p>Some <strong>HTML</strong></p>", false},
		{"<h1># not markdown</h1>", false},
		{"just plain text, nothing else", false},
		{"", false},
		{"price: 5 * 3 = 15", false},
	}
	for _, tt := range tests {
		if got := LooksLikeMarkdown(tt.in); got != tt.want {
			t.Errorf("LooksLikeMarkdown(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestPreviewRendersEachKindOfValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"html", `<p onclick="x">Hi <b>there</b></p>`, `<p>Hi <b>there</b></p>`},
		{"markdown", "# Hi\n\n[x](javascript:alert(1)) *there*", "<h1>Hi</h1>\n<p>x <em>there</em></p>\n"},
		{"plain text keeps paragraphs", "one\n\ntwo", "<p>one</p>\n<p>two</p>\n"},
		{"markdown link gets rel", "[a](https://x.example)", "<p><a href=\"https://x.example\" rel=\"noopener noreferrer nofollow\">a</a></p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Preview(tt.in))
			if got != tt.want {
				t.Errorf("Preview(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			assertSafe(t, tt.in, got)
		})
	}
}

// TestMarkdownStaysLinearOnUnclosedMarkup feeds a megabyte of openers that
// never close: a renderer that searched for each closer from every opener
// would take minutes; this one reads the text a few times.
func TestMarkdownStaysLinearOnUnclosedMarkup(t *testing.T) {
	for _, unit := range []string{"[", "*a ", "_a ", "`", "![", "[a](", "- ", "> ", "**a ", "[a]", "\n\n- a\n\n"} {
		in := strings.Repeat(unit, MaxInput/len(unit))
		start := time.Now()
		out := MarkdownToHTML(in)
		t.Logf("%q: %v", unit, time.Since(start))
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("MarkdownToHTML of 1 MiB of %q took %v", unit, d)
		}
		assertSafe(t, "1 MiB of "+unit, string(Sanitize(out)))
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# a\n- b\n  - c\n> d", "[a](b \"c\") ![d](e)", "**a *b* c**", "```\nx\n```", "1) a\n2) b", "`a``b`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := MarkdownToHTML(in)
		if strings.Contains(strings.ToLower(out), "<script") {
			t.Fatalf("MarkdownToHTML(%q) = %q holds <script", in, out)
		}
		assertSafe(t, in, string(Sanitize(out)))
		LooksLikeMarkdown(in)
	})
}

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"tags and entities", `<p>Fish &amp; <b>chips</b></p>`, 0, "Fish & chips"},
		{"blocks separate words", `<h1>Title</h1><p>one</p><ul><li>a</li><li>b</li></ul>`, 0, "Title one a b"},
		{"inline does not", `<p>un<b>broken</b></p>`, 0, "unbroken"},
		{"white space collapsed", "<p>  a \n\t b  </p>", 0, "a b"},
		{"scripts and styles left out", `<style>p{}</style><p>seen</p><script>hidden()</script><svg><text>no</text></svg>`, 0, "seen"},
		{"void dropped elements do not hide the rest", `<p>a<input value="x">b</p><embed src="y"><p>c</p>`, 0, "ab c"},
		{"cut at a word", `<p>The quick brown fox</p>`, 12, "The quick…"},
		{"fits exactly", `<p>The quick</p>`, 9, "The quick"},
		{"one long word", `<p>Supercalifragilistic</p>`, 5, "Super…"},
		{"runes not bytes", `<p>ééééé ééé</p>`, 5, "ééééé…"},
		{"text without tags", "plain & simple", 0, "plain & simple"},
		{"empty", "", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PlainText(tt.in, tt.max); got != tt.want {
				t.Errorf("PlainText(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestPlainTextReadsOnlyWhatTheExcerptNeeds(t *testing.T) {
	in := strings.Repeat("<p>word word word</p>", 50000)
	start := time.Now()
	got := PlainText(in, 20)
	if got != "word word word word…" {
		t.Errorf("PlainText = %q", got)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a 20-character excerpt of %d bytes took %v", len(in), d)
	}
}

func FuzzPlainText(f *testing.F) {
	f.Add("<p>Fish &amp; <b>chips</b></p><script>x</script>", 10)
	f.Add("<input><embed>text<svg><p>a</svg>", 3)
	f.Fuzz(func(t *testing.T, in string, max int) {
		max %= 500
		got := PlainText(in, max)
		if n := utf8.RuneCountInString(got); max > 0 && n > max+1 {
			t.Fatalf("PlainText(%q, %d) = %q: %d characters", in, max, got, n)
		}
		if strings.Contains(got, "  ") || got != strings.TrimSpace(got) {
			t.Fatalf("PlainText(%q, %d) = %q: white space not collapsed", in, max, got)
		}
	})
}
