// Package richtext is where the Studio console turns a collection's
// rich_text value into something it can show. Atrium stores rich text as
// given (HTML or Markdown, docs/collections.md), so whatever a key holder
// wrote reaches the console's pages: the editor's preview and the excerpts
// on list pages. Nothing from a stored value may run in the console, which
// is served with a strict Content-Security-Policy, so markup is rebuilt from
// an allowlist rather than filtered against a blocklist.
//
//   - Sanitize keeps the elements a rich text toolbar can produce (headings,
//     paragraphs, lists, links, images, emphasis, code, quotes, tables,
//     figures) with a few checked attributes. Scripts, styles, frames,
//     forms, SVG and MathML go with their content; other tags go and their
//     text stays (a <div> of text becomes a <p>, so lines do not run
//     together); every event handler and style attribute goes, and so do
//     URLs whose scheme is not http, https or mailto (images: http and
//     https), however they are spelled. Its output is well-formed and safe
//     to put in a template.
//   - LooksLikeMarkdown and MarkdownToHTML give Markdown content a preview
//     too: a small CommonMark subset, whose output goes through Sanitize
//     (Preview does both).
//   - PlainText gives the text of a value, for excerpts.
//
// Every function takes any input without panicking and in time linear in
// its size; inputs beyond MaxInput are cut, with a note saying so.
package richtext
