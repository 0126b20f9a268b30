// Package diff is where the Studio console compares two revisions of an
// item for the revision page: field by field, side by side, the lines of
// each value marked as kept, removed or added.
//
// Items are JSON objects, so a value is a string (often a long rich text),
// a number, a boolean, an array, an object or null. Strings are compared
// as written; other values as indented JSON, so a change deep inside an
// object shows on its own line. A long line (rich text is often one line of
// HTML) is split after block tags and sentences before comparing, so a
// one-word change in a paragraph marks that sentence, and the rendered
// table (FieldDiff.HTML) also marks the words that differ.
//
// Comparison is bounded: a field with more than MaxLines lines on a side is
// reported as changed without a comparison, and the line diff (Myers'
// O(ND) algorithm) gives up on a minimal result past MaxEdits edits, so a
// megabyte field costs milliseconds, not seconds.
//
// The markup uses the classes of CSS (diff.css, to be served with the
// console's styles: the console's Content-Security-Policy allows no inline
// style), and says what changed in words as well as colour: a +/− marker
// and, for screen readers, a visually hidden "added"/"removed".
package diff
