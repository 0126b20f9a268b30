package studio

import (
	"html"
	"html/template"
	"strconv"
	"strings"
)

// The item editor's controls, written in Go. As a template (a chain of
// type comparisons per field, each value through html/template's escapers
// called by reflection) they were half of the editor page's time
// (docs/performance.md, bench studio). Each value is escaped here for
// where it goes: html.EscapeString (<, >, &, ' and ") for text, a
// double-quoted attribute and a textarea's content; the links are paths
// the console built (visit.path escapes each part); a rich text preview
// is richtext.Preview's sanitised HTML. editor_controls_test.go holds the
// markup to what each type needs (labels, ids, aria, hostile values).

// controlKind is how a field type is drawn.
type controlKind int

const (
	kindInput controlKind = iota
	kindBoolean
	kindMultiSelect
	kindAsset
	kindRichText
	kindJSON
	kindSelect
	kindReference
)

// kindOf is field type t's control.
func kindOf(t string) controlKind {
	switch t {
	case "boolean":
		return kindBoolean
	case "multi_select":
		return kindMultiSelect
	case "asset":
		return kindAsset
	case "rich_text":
		return kindRichText
	case "json":
		return kindJSON
	case "select":
		return kindSelect
	case "reference":
		return kindReference
	}
	return kindInput
}

// inputTypes are the <input> type and step of the field types drawn as
// one input (text is the default).
var inputTypes = map[string][2]string{
	"email": {"email", ""}, "url": {"url", ""}, "number": {"number", "any"}, "integer": {"number", "1"},
	"date": {"date", ""}, "datetime": {"datetime-local", "1"},
}

// fieldControlsHTML is the editor's controls of fields.
func fieldControlsHTML(fields []fieldControl) template.HTML {
	var b strings.Builder
	b.Grow(1024 * len(fields))
	for i := range fields {
		writeControl(&b, &fields[i])
	}
	return template.HTML(b.String()) //nolint:gosec // G203: every value is escaped for its context (writeControl)
}

// markup writes its parts: literal markup and values already escaped.
type markup struct{ b *strings.Builder }

func (x markup) s(parts ...string) {
	for _, p := range parts {
		x.b.WriteString(p)
	}
}

// esc is a value escaped for text, an attribute or a textarea.
func esc(s string) string { return html.EscapeString(s) }

func writeControl(b *strings.Builder, f *fieldControl) {
	x := markup{b}
	invalid := ""
	if f.Error != "" {
		invalid = ` aria-invalid="true" aria-describedby="` + esc(f.ErrorID()) + `"`
	}
	required := ""
	if f.Required {
		required = " required"
	}
	x.s("\n<div class=\"field field-", esc(f.Type), "\">\n")
	switch kindOf(f.Type) {
	case kindBoolean:
		x.s(`  <div class="check"><input type="checkbox" id="`, esc(f.ID), `" name="`, esc(f.Name), `" value="on"`)
		if f.Checked {
			x.s(" checked")
		}
		x.s(invalid, ">\n  <label class=\"inline\" for=\"", esc(f.ID), "\">", esc(f.Label), "</label></div>\n  ")
		writeFieldError(x, f)
	case kindMultiSelect:
		x.s("  <fieldset")
		if f.Error != "" {
			x.s(` aria-describedby="`, esc(f.ErrorID()), `"`)
		}
		x.s("><legend>", esc(f.Label), "</legend>\n  ")
		writeFieldError(x, f)
		for i, o := range f.Options {
			id := esc(f.ID) + "-" + strconv.Itoa(i)
			x.s(`<div class="check"><input type="checkbox" id="`, id, `" name="`, esc(f.Name), `" value="`, esc(o.Value), `"`)
			if o.Selected {
				x.s(" checked")
			}
			x.s(">\n    <label class=\"inline\" for=\"", id, "\">", esc(o.Label), "</label></div>")
		}
		x.s("\n  </fieldset>\n")
	case kindAsset:
		writeAssetPicker(x, f)
	default:
		x.s(`  <label for="`, esc(f.ID), `">`, esc(f.Label))
		if f.Required {
			x.s(` <span class="muted">(required)</span>`)
		}
		x.s("</label>\n  ")
		writeFieldError(x, f)
		writeInput(x, f, required, invalid)
	}
	x.s("</div>\n")
}

// writeFieldError is the field's error, tied to its control by id.
func writeFieldError(x markup, f *fieldControl) {
	if f.Error != "" {
		x.s(`<p class="field-error" id="`, esc(f.ErrorID()), `">`, esc(f.Error), "</p>")
	}
	x.s("\n")
}

func writeAssetPicker(x markup, f *fieldControl) {
	x.s(`  <fieldset class="asset-picker" id="`, esc(f.ID), `" data-drop-url="`, esc(f.AssetsURL), `"`)
	if f.Error != "" {
		x.s(` aria-describedby="`, esc(f.ErrorID()), `"`)
	}
	x.s("><legend>", esc(f.Label))
	if f.Required {
		x.s(" (required)")
	}
	x.s("</legend>\n  ")
	writeFieldError(x, f)
	x.s(`  <p class="help">Choose one of the site's assets. New files are uploaded in the <a href="`, esc(f.AssetsURL), `">asset library</a>`)
	if f.Writable {
		x.s(", or drop a file on this box")
	}
	x.s(".</p>\n  <div class=\"assets\">\n  ")
	if !f.Required {
		x.s(`<div class="asset"><input type="radio" id="`, esc(f.ID), `-none" name="`, esc(f.Name), `" value=""`)
		if f.Value == "" {
			x.s(" checked")
		}
		x.s(`><label class="inline" for="`, esc(f.ID), `-none">No asset</label></div>`)
	}
	x.s("\n  ")
	for i, a := range f.Assets {
		id := esc(f.ID) + "-" + strconv.Itoa(i)
		x.s(`<div class="asset"><input type="radio" id="`, id, `" name="`, esc(f.Name), `" value="`, esc(a.ID), `"`)
		if a.Selected {
			x.s(" checked")
		}
		x.s(">\n    <label class=\"inline\" for=\"", id, "\">")
		if a.Thumb != "" && safeImageURL(a.Thumb) {
			x.s(`<img src="`, esc(a.Thumb), `" alt="" loading="lazy" width="96" height="72">`)
		}
		x.s("<span>", esc(a.Label), "</span></label></div>")
	}
	x.s("\n  </div>\n  ")
	if f.Writable {
		x.s(`<p class="drop-status" role="status" aria-live="polite"></p>`)
	}
	x.s("\n  </fieldset>\n")
}

// safeImageURL reports whether an asset's URL may be an image's source:
// a relative address or an http(s) one (html/template's rule for URLs,
// which refuses javascript: and the like).
func safeImageURL(u string) bool {
	if i := strings.IndexAny(u, ":/?#"); i >= 0 && u[i] == ':' {
		scheme := strings.ToLower(u[:i])
		return scheme == "http" || scheme == "https"
	}
	return true
}

func writeInput(x markup, f *fieldControl, required, invalid string) {
	maxLength := ""
	if f.MaxLength > 0 {
		maxLength = ` maxlength="` + strconv.Itoa(int(f.MaxLength)) + `"`
	}
	switch kindOf(f.Type) {
	case kindRichText:
		x.s(`  <p class="help" id="`, esc(f.HelpID()), `">HTML: the buttons insert headings, lists, links and images; Markdown works too.</p>`, "\n")
		x.s(`    <textarea id="`, esc(f.ID), `" name="`, esc(f.Name), `" rows="14" data-richtext`, required, maxLength, "\n")
		writeDescribedByHelp(x, f)
		x.s(">", esc(f.Value), "</textarea>\n    ")
		if f.Preview != "" {
			x.s(`<details class="rt-preview"><summary>Preview of `, esc(f.Label), `</summary><div class="rt-body">`, string(f.Preview), "</div></details>")
		}
		x.s("\n")
	case kindJSON:
		x.s(`  <p class="help" id="`, esc(f.HelpID()), `">JSON: an object, a list, a number, true, false or a quoted string.</p>`, "\n")
		x.s(`    <textarea class="mono" id="`, esc(f.ID), `" name="`, esc(f.Name), `" rows="6" spellcheck="false"`, required, "\n")
		writeDescribedByHelp(x, f)
		x.s(">", esc(f.Value), "</textarea>\n")
	case kindSelect:
		x.s(`    <select id="`, esc(f.ID), `" name="`, esc(f.Name), `"`, required, invalid, ">\n      <option value=\"\">— none —</option>\n      ")
		writeOptions(x, f.Options)
		x.s("\n    </select>\n")
	case kindReference:
		x.s("    ", string(referenceSelectHTML(f)), "\n    ")
		if f.More {
			x.s(`<label for="`, esc(f.ID), `-search" class="sub">Find another `, esc(f.Label), "</label>\n")
			x.s(`    <input type="search" id="`, esc(f.ID), `-search" name="q" hx-get="`, esc(f.ChoicesURL),
				`" hx-trigger="input changed delay:400ms, search" hx-target="#`, esc(f.ID), `" hx-select="#`, esc(f.ID), `" hx-swap="outerHTML">`, "\n")
			x.s(`    <p class="help">The list shows the first `, strconv.Itoa(len(f.Options)), "; type to search the others.</p>\n    ")
		}
		x.s("\n")
	default:
		typ := inputTypes[f.Type]
		if typ[0] == "" {
			typ[0] = "text"
		}
		datetime := f.Type == "datetime"
		if datetime {
			x.s(`<p class="help" id="`, esc(f.HelpID()), `">Date and time in UTC.</p>`)
		}
		x.s("\n    ", `<input type="`, typ[0], `" id="`, esc(f.ID), `" name="`, esc(f.Name), `" value="`, esc(f.Value), `"`)
		if typ[1] != "" {
			x.s(` step="`, typ[1], `"`)
		}
		x.s(required, maxLength, "\n      ")
		if f.Error != "" || datetime {
			x.s(`aria-describedby="`)
			if datetime {
				x.s(esc(f.HelpID()), " ")
			}
			if f.Error != "" {
				x.s(esc(f.ErrorID()))
			}
			x.s(`"`)
		}
		if f.Error != "" {
			x.s(` aria-invalid="true"`)
		}
		x.s(">\n")
	}
}

// writeDescribedByHelp ties a textarea to its help and error.
func writeDescribedByHelp(x markup, f *fieldControl) {
	x.s(`      aria-describedby="`, esc(f.HelpID()))
	if f.Error != "" {
		x.s(" ", esc(f.ErrorID()))
	}
	x.s(`"`)
	if f.Error != "" {
		x.s(` aria-invalid="true"`)
	}
}

func writeOptions(x markup, opts []choice) {
	for _, o := range opts {
		x.s(`<option value="`, esc(o.Value), `"`)
		if o.Selected {
			x.s(" selected")
		}
		x.s(">", esc(o.Label), "</option>")
	}
}

// referenceSelectHTML is a reference field's select: in the editor, and
// alone on the choices page the editor's search swaps in.
func referenceSelectHTML(f *fieldControl) template.HTML {
	var b strings.Builder
	x := markup{&b}
	x.s(`<select id="`, esc(f.ID), `" name="`, esc(f.Name), `"`)
	if f.Required {
		x.s(" required")
	}
	if f.Error != "" {
		x.s(` aria-invalid="true" aria-describedby="`, esc(f.ErrorID()), `"`)
	}
	x.s(">\n  <option value=\"\">— none —</option>\n  ")
	writeOptions(x, f.Options)
	x.s("\n</select>")
	return template.HTML(b.String()) //nolint:gosec // G203: every value is escaped for its context
}
