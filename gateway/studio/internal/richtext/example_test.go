package richtext_test

import (
	"html/template"
	"os"

	"github.com/atrium-hq/atrium/gateway/studio/internal/richtext"
)

// The editor's preview and a list page's excerpt of one stored value.
func Example() {
	page := template.Must(template.New("item").Parse(
		`<div class="preview">{{.Preview}}</div>` + "\n" + `<p class="excerpt">{{.Excerpt}}</p>` + "\n"))
	stored := `<h2>Rye</h2><p onclick="steal()">Baked <b>daily</b>.<script>steal()</script></p><img src=x onerror=steal()>`
	_ = page.Execute(os.Stdout, map[string]any{
		"Preview": richtext.Preview(stored),
		"Excerpt": richtext.PlainText(stored, 12),
	})
	// Output:
	// <div class="preview"><h2>Rye</h2><p>Baked <b>daily</b>.</p><img src="x"></div>
	// <p class="excerpt">Rye Baked…</p>
}

func ExampleMarkdownToHTML() {
	md := "## Hours\n\n- **Mon–Fri** 7–18\n- [Holidays](/pages/holidays)\n"
	os.Stdout.WriteString(string(richtext.Sanitize(richtext.MarkdownToHTML(md))))
	// Output:
	// <h2>Hours</h2>
	// <ul>
	// <li><strong>Mon–Fri</strong> 7–18</li>
	// <li><a href="/pages/holidays" rel="noopener noreferrer nofollow">Holidays</a></li>
	// </ul>
}
