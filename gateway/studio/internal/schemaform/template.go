package schemaform

import (
	_ "embed"
	"html/template"
)

//go:embed form.html
var formHTML string

// CSS styles the form's markup: the sf-* classes (sf-field, sf-help,
// sf-hint, sf-error, sf-group...). The console serves it with its other
// styles; it uses studio.css's variables, with fallbacks.
//
//go:embed schemaform.css
var CSS string

// Template returns the templates that render a Form: "schemaform" (its
// fields, for a <form> the page writes around them) and the
// "schemaform-field" it runs for each. Parse it into the console's own
// templates, or use AddTo.
func Template() string { return formHTML }

// AddTo parses the form's templates into t, so that t's pages can
// {{template "schemaform" .Form}}.
func AddTo(t *template.Template) (*template.Template, error) {
	return t.New("schemaform.html").Parse(formHTML)
}
