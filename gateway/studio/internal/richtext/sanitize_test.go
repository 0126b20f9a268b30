package richtext

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// assertSafe re-parses out as a browser would and fails on anything that
// could run or restyle the console: an element outside the allowlist, an
// attribute outside its element's list (so no on* handler and no style), a
// link or image address whose scheme is not allowed. It also checks that
// out is well-formed (assertWellFormed).
func assertSafe(t testing.TB, in string, out string) {
	t.Helper()
	assertWellFormed(t, in, out)
	full := out
	in, out = short(in), short(out)
	if strings.Contains(strings.ToLower(full), "<script") {
		t.Fatalf("Sanitize(%q) = %q: holds <script", in, out)
	}
	nodes, err := html.ParseFragment(strings.NewReader(full), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		t.Fatalf("Sanitize(%q) = %q: does not parse: %v", in, out, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			names, ok := allowed[n.DataAtom]
			// The parser adds a <tbody> to a table we wrote with one
			// already; nothing else may appear that we did not allow.
			if !ok || n.Namespace != "" {
				t.Fatalf("Sanitize(%q) = %q: element <%s> is not allowed", in, out, n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Fatalf("Sanitize(%q) = %q: event handler %s on <%s>", in, out, a.Key, n.Data)
				}
				if a.Key == "rel" && n.DataAtom == atom.A {
					continue
				}
				if !slices.Contains(names, a.Key) {
					t.Fatalf("Sanitize(%q) = %q: attribute %s on <%s> is not allowed", in, out, a.Key, n.Data)
				}
				if a.Key == "href" || a.Key == "src" {
					assertSafeURL(t, in, out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
}

// short keeps failure messages readable when the input is a megabyte.
func short(s string) string {
	if len(s) <= 400 {
		return s
	}
	return s[:200] + fmt.Sprintf(" ...(%d bytes)... ", len(s)-400) + s[len(s)-200:]
}

// assertSafeURL is an independent reading of a URL's scheme: every
// character up to the first ':' that a browser might skip removed.
func assertSafeURL(t testing.TB, in, out, u string) {
	t.Helper()
	var b strings.Builder
	for _, r := range u {
		if r > ' ' && r != 0x7f {
			b.WriteRune(r)
		}
	}
	lower := strings.ToLower(b.String())
	for _, bad := range []string{"javascript:", "data:", "vbscript:", "file:", "blob:"} {
		if strings.HasPrefix(lower, bad) {
			t.Fatalf("Sanitize(%q) = %q: kept the address %q", in, out, u)
		}
	}
}

// assertWellFormed checks that every tag out opens is closed, in order,
// and that it closes none it did not open.
func assertWellFormed(t testing.TB, in, out string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(out))
	in, out = short(in), short(out)
	var stack []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if len(stack) != 0 {
				t.Fatalf("Sanitize(%q) = %q: unclosed %v", in, out, stack)
			}
			return
		case html.StartTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); a == atom.Br || a == atom.Hr || a == atom.Img {
				continue
			}
			stack = append(stack, string(name))
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("Sanitize(%q) = %q: </%s> closes nothing open (open: %v)", in, out, name, stack)
			}
			stack = stack[:len(stack)-1]
		case html.SelfClosingTagToken, html.CommentToken, html.DoctypeToken:
			t.Fatalf("Sanitize(%q) = %q: unexpected %v token", in, out, tt)
		}
	}
}

// xssVectors are from the OWASP XSS Filter Evasion Cheat Sheet, with a few
// of the browsers' URL-parsing quirks added. Each must come out harmless;
// the text around it must survive.
var xssVectors = []string{
	`<script>alert('XSS')</script>`,
	`<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>`,
	`<img src=x onerror=alert(1)>`,
	`<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>`,
	`<img src="javascript:alert('XSS');">`,
	`<IMG SRC=JaVaScRiPt:alert('XSS')>`,
	"<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
	`<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>`,
	`<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>`,
	`<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>`,
	`<a href="jav&#x09;ascript:alert(1)">tab</a>`,
	`<a href="jav&#x0A;ascript:alert(1)">newline</a>`,
	`<a href="jav&#x0D;ascript:alert(1)">cr</a>`,
	`<a href=" &#14;  javascript:alert('XSS');">leading</a>`,
	`<a href="java	script:alert(1)">raw tab</a>`,
	`<a href="JAVASCRIPT&colon;alert(1)">colon entity</a>`,
	`<a href="javascript&#58alert(1)">no semicolon</a>`,
	`<a href="vbscript:msgbox(1)">vb</a>`,
	`<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>`,
	`<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">`,
	`<svg onload=alert(1)>`,
	`<svg/onload=alert('XSS')>`,
	`<svg><script>alert(1)</script></svg>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<scr<script>ipt>alert(1)</script>`,
	`<<SCRIPT>alert("XSS");//\<</SCRIPT>`,
	`<SCRIPT/XSS SRC="http://xss.example/xss.js"></SCRIPT>`,
	`<BODY onload!#$%&()*~+-_.,:;?@[/|\]^` + "`" + `=alert("XSS")>`,
	`<iframe src="javascript:alert(1)"></iframe>`,
	`<IFRAME SRC=# onmouseover="alert(document.cookie)"></IFRAME>`,
	`<object data="javascript:alert(1)"></object>`,
	`<embed src="data:text/html,<script>alert(1)</script>">`,
	`<form action="javascript:alert(1)"><input type=submit></form>`,
	`<p style="width: expression(alert('XSS'));">expression</p>`,
	`<DIV STYLE="background-image: url(javascript:alert('XSS'))">bg</DIV>`,
	`<STYLE>@import'http://xss.example/xss.css';</STYLE>`,
	`<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>`,
	`<LINK REL="stylesheet" HREF="javascript:alert('XSS');">`,
	`<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">`,
	`<TABLE BACKGROUND="javascript:alert('XSS')"><TD BACKGROUND="javascript:alert('XSS')">cell`,
	`<a href="x" title="a" onmouseover="alert(1)">quoted</a>`,
	`<a href='x' title="it's "nested"" onclick='alert("1")'>nested quotes</a>`,
	`<img """><script>alert("XSS")</script>">`,
	`<img src=x:alert(alt) onerror=eval(src) alt=0>`,
	`<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">`,
	`<BGSOUND SRC="javascript:alert('XSS');">`,
	`<BR SIZE="&{alert('XSS')}">`,
	`<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<template><script>alert(1)</script></template>`,
	`<a href="&#x6a;avascript:alert(1)">hex entity</a>`,
	`<a href="\x01javascript:alert(1)">control</a>`,
	`<xmp><script>alert(1)</script></xmp>`,
	`<textarea><script>alert(1)</script></textarea>`,
	`<a href="javas&#99;ript:alert(1)">dec entity</a>`,
	`<img src="  JaVaScRiPt :alert(1)">`,
	`<a href="/files/ok"><img src="x" onerror="x" style="x"></a>`,
}

func TestSanitizeMakesXSSVectorsHarmless(t *testing.T) {
	for _, in := range xssVectors {
		out := string(Sanitize(in))
		assertSafe(t, in, out)
		// The words around a vector are the author's: they stay.
		if strings.Contains(in, ">quoted<") && !strings.Contains(out, "quoted") {
			t.Errorf("Sanitize(%q) = %q: lost the link text", in, out)
		}
	}
}

func TestSanitizeDropsDangerousURLsButKeepsTheText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<a href="jav&#x09;ascript:alert(1)">click</a>`, `<a rel="noopener noreferrer nofollow">click</a>`},
		{`<a href="JaVaScRiPt:alert(1)">click</a>`, `<a rel="noopener noreferrer nofollow">click</a>`},
		{`<a href=" data:text/html,x">click</a>`, `<a rel="noopener noreferrer nofollow">click</a>`},
		{`<img src="javascript:alert(1)" alt="cat">`, `<img alt="cat">`},
		{`<img src="mailto:a@b.example" alt="cat">`, `<img alt="cat">`},
		{`<p onclick="x()" style="color:red" class="x" id="y">text</p>`, `<p>text</p>`},
		{`<a href="java&#0;script:alert(1)">nul</a>`, `<a rel="noopener noreferrer nofollow">nul</a>`},
		{`<a href="&#14;javascript:alert(1)">so</a>`, `<a rel="noopener noreferrer nofollow">so</a>`},
		{`<a href="  /files/ab/doc.pdf  ">pdf</a>`, `<a href="/files/ab/doc.pdf" rel="noopener noreferrer nofollow">pdf</a>`},
		{`<a href="http:javascript:alert(1)">http first</a>`, `<a href="http:javascript:alert(1)" rel="noopener noreferrer nofollow">http first</a>`},
		{`<img src="/files/x.png" srcset="javascript:alert(1) 2x" alt="&lt;script&gt;">`, `<img src="/files/x.png" alt="&lt;script&gt;">`},
		{`<base href="javascript:/"><a href="x">x</a>`, `<a href="x" rel="noopener noreferrer nofollow">x</a>`},
		{`<script>alert(1)</script>after`, `after`},
		{`<svg onload=alert(1)><circle/></svg>after`, `after`},
	}
	for _, tt := range tests {
		if got := string(Sanitize(tt.in)); got != tt.want {
			t.Errorf("Sanitize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestSanitizeKeepsWhatTheToolbarMakes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"paragraphs and breaks", `<p>one<br>two</p><p>three</p>`, `<p>one<br>two</p><p>three</p>`},
		{"headings", `<h1>a</h1><h2>b</h2><h3>c</h3><h4>d</h4><h5>e</h5><h6>f</h6>`, `<h1>a</h1><h2>b</h2><h3>c</h3><h4>d</h4><h5>e</h5><h6>f</h6>`},
		{"lists", `<ul><li>a</li><li>b<ol start="3"><li>c</li></ol></li></ul>`, `<ul><li>a</li><li>b<ol start="3"><li>c</li></ol></li></ul>`},
		{"unclosed items are closed", `<ul><li>a<li>b</ul>`, `<ul><li>a</li><li>b</li></ul>`},
		{"http link", `<a href="https://example.com/a?b=1&amp;c=2" title="T">x</a>`, `<a href="https://example.com/a?b=1&amp;c=2" title="T" rel="noopener noreferrer nofollow">x</a>`},
		{"mailto link", `<a href="mailto:ed@example.com">mail</a>`, `<a href="mailto:ed@example.com" rel="noopener noreferrer nofollow">mail</a>`},
		{"relative link", `<a href="/items/42#top">item</a>`, `<a href="/items/42#top" rel="noopener noreferrer nofollow">item</a>`},
		{"given rel replaced", `<a href="/x" rel="opener" target="_blank">x</a>`, `<a href="/x" rel="noopener noreferrer nofollow">x</a>`},
		{"file image", `<img src="/files/ab12/cat.png" alt="A cat" width="640" height="480">`, `<img src="/files/ab12/cat.png" alt="A cat" width="640" height="480">`},
		{"https image", `<img src="https://cdn.example/c.jpg" alt="">`, `<img src="https://cdn.example/c.jpg" alt="">`},
		{"bad sizes dropped", `<img src="/files/c.png" width="100%" height="1e9">`, `<img src="/files/c.png">`},
		{"inline", `<strong>s</strong><em>e</em><b>b</b><i>i</i><u>u</u><s>s</s><code>c</code>`, `<strong>s</strong><em>e</em><b>b</b><i>i</i><u>u</u><s>s</s><code>c</code>`},
		{"code block", `<pre><code class="language-go">if a &lt; b {}</code></pre>`, `<pre><code class="language-go">if a &lt; b {}</code></pre>`},
		{"other classes dropped", `<code class="btn danger">x</code>`, `<code>x</code>`},
		{"quote and rule", `<blockquote><p>q</p></blockquote><hr>`, `<blockquote><p>q</p></blockquote><hr>`},
		{"table", `<table><thead><tr><th scope="col">h</th></tr></thead><tbody><tr><td colspan="2" rowspan="1">d</td></tr></tbody></table>`, `<table><thead><tr><th scope="col">h</th></tr></thead><tbody><tr><td colspan="2" rowspan="1">d</td></tr></tbody></table>`},
		{"figure", `<figure><img src="/files/a.png" alt="a"><figcaption>cap</figcaption></figure>`, `<figure><img src="/files/a.png" alt="a"><figcaption>cap</figcaption></figure>`},
		{"inline wrappers unwrapped", `<span style="color:red">kept</span> <font>text</font>`, `kept text`},
		{"a div of text is a paragraph", `<div class="x"><span>one</span> line</div><div>two</div><div><br></div>`, `<p>one line</p><p>two</p><p><br></p>`},
		{"a div of blocks is unwrapped", `<div><p>a</p><div>b</div></div><section><h2>c</h2></section>`, `<p>a</p><p>b</p><h2>c</h2>`},
		{"empty div dropped", `<div></div><p>a</p>`, `<p>a</p>`},
		{"entities kept escaped", `<p>a &lt;b&gt; &amp; &quot;c&quot; &#169;</p>`, `<p>a &lt;b&gt; &amp; &#34;c&#34; ©</p>`},
		{"comments dropped", `<p>a<!-- secret -->b</p>`, `<p>ab</p>`},
		{"misnested repaired", `<b><i>x</b>y</i>`, `<b><i>x</i></b><i>y</i>`},
		{"uppercase tags", `<P>A<BR></P>`, `<p>A<br></p>`},
		{"pre leading newline kept", "<pre>\n\nx</pre>", "<pre>\n\nx</pre>"},
		{"empty", ``, ``},
		{"plain text", `just text & more`, `just text &amp; more`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Sanitize(tt.in))
			if got != tt.want {
				t.Errorf("Sanitize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			assertSafe(t, tt.in, got)
			if again := string(Sanitize(got)); again != got {
				t.Errorf("Sanitize is not stable on its own output:\n once  %q\n twice %q", got, again)
			}
		})
	}
}

func TestSanitizeTruncatesLongInputWithANote(t *testing.T) {
	in := strings.Repeat("<p>é word</p>", MaxInput/len("<p>é word</p>")+10)
	out := string(Sanitize(in))
	if !strings.HasSuffix(out, TruncatedNote) {
		t.Fatalf("output of %d bytes of input does not end with the note: ...%q", len(in), out[max(0, len(out)-200):])
	}
	if len(out) > MaxInput+len(TruncatedNote)+64 {
		t.Errorf("output is %d bytes, more than the %d read", len(out), MaxInput)
	}
	assertSafe(t, "(long input)", out)

	short := strings.Repeat("a", MaxInput)
	if got := string(Sanitize(short)); got != short {
		t.Errorf("input of exactly MaxInput bytes was changed (len %d)", len(got))
	}
}

func TestSanitizeCutsDeepNestingWithoutLosingText(t *testing.T) {
	const n = 200000
	in := strings.Repeat("<b>", n) + "deep" + strings.Repeat("</b>", n)
	start := time.Now()
	out := string(Sanitize(in))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Sanitize of %d nested elements took %v", n, d)
	}
	if !strings.Contains(out, "deep") {
		t.Errorf("the text inside the nesting was lost")
	}
	if c := strings.Count(out, "<b>"); c > maxDepth {
		t.Errorf("output nests %d elements, more than %d", c, maxDepth)
	}
	assertWellFormed(t, "(deep nesting)", out)

	// Nesting the parser accepts is kept up to maxDepth, then unwrapped.
	in = strings.Repeat("<b>", 300) + "deep" + strings.Repeat("</b>", 300)
	out = string(Sanitize(in))
	if c := strings.Count(out, "<b>"); c != maxDepth || !strings.Contains(out, ">deep<") {
		t.Errorf("300 nested <b>: kept %d (want %d) and the text: %q", c, maxDepth, short(out))
	}
	assertWellFormed(t, "(deep nesting)", out)
}

func FuzzSanitize(f *testing.F) {
	for _, v := range xssVectors {
		f.Add(v)
	}
	f.Add(`<table><tr><td>a<table><tr><td>b</table></table>`)
	f.Add("<pre>\n<code>x</code></pre><ul><li><p>a<li>b")
	f.Add(`<a href="/files/x"><img src=/files/y></a>`)
	f.Fuzz(func(t *testing.T, in string) {
		out := string(Sanitize(in))
		assertSafe(t, in, out)
		if strings.Contains(strings.ToLower(out), "<script") {
			t.Fatalf("output holds <script: %q", out)
		}
	})
}

// benchHTML is about 100 KiB of the markup an editor produces, with some
// attributes to drop.
func benchHTML() string {
	var b strings.Builder
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2><p style="color:red">Some <strong>bold</strong> and <em>emphasised</em> text with a <a href="https://example.com/%d" onclick="x()">link</a> and <code>code</code>.</p>`, i, i, i)
		b.WriteString(`<ul><li>one</li><li>two <img src="/files/a.png" alt="a" onerror="x"></li></ul><table><tr><td>cell</td><td>cell</td></tr></table><script>bad()</script>`)
	}
	return b.String()
}

func BenchmarkSanitize100KiB(b *testing.B) {
	in := benchHTML()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		Sanitize(in)
	}
}
