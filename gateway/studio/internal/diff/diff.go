package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Op says what happened to a line between the two revisions.
type Op int

const (
	Same    Op = iota // in both revisions
	Removed           // only in the earlier revision
	Added             // only in the later revision
)

func (o Op) String() string {
	switch o {
	case Same:
		return "same"
	case Removed:
		return "removed"
	case Added:
		return "added"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Line is one line (or, for a long line, one sentence or clause) of a
// field's value.
type Line struct {
	Text string
	Op   Op
}

// FieldDiff is the comparison of one field. Before holds the earlier
// value's lines (Same or Removed), After the later value's (Same or
// Added); lines marked Same appear in both, in the same order, which is
// how FieldDiff.HTML puts them side by side. A field missing from one
// revision has no lines on that side.
type FieldDiff struct {
	Key     string
	Changed bool
	// TooLong is set when the field changed but a side has more than
	// MaxLines lines: Before and After are then empty, and the page says
	// "changed (too long to compare)".
	TooLong       bool
	Before, After []Line
}

// MaxLines is the most lines (after splitting long lines) a side of a
// field may have to be compared.
const MaxLines = 5000

// MaxEdits is the most line edits the diff looks for a minimal script
// within; past it the differing middle of the field is shown as removed
// then added, which is correct but not minimal. It bounds the time (the
// algorithm is O((N+M)·D)) and the memory (O(D²)) of one field.
const MaxEdits = 1000

// longLine is the length (bytes) past which a line is split into
// sentences: about two lines of prose on a wide screen.
const longLine = 160

// Fields compares before and after, field by field: the keys of order
// first (those present in either revision), then the other keys of either
// revision, sorted. Unchanged fields are reported with Changed false and
// their lines marked Same.
func Fields(before, after map[string]any, order []string) []FieldDiff {
	seen := make(map[string]bool, len(before)+len(after))
	var keys []string
	for _, k := range order {
		_, inB := before[k]
		_, inA := after[k]
		if !seen[k] && (inB || inA) {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	var rest []string
	for _, m := range []map[string]any{before, after} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				rest = append(rest, k)
			}
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)

	out := make([]FieldDiff, 0, len(keys))
	for _, k := range keys {
		b, inB := before[k]
		a, inA := after[k]
		out = append(out, field(k, b, inB, a, inA))
	}
	return out
}

func field(key string, b any, inB bool, a any, inA bool) FieldDiff {
	var bt, at string
	if inB {
		bt = Format(b)
	}
	if inA {
		at = Format(a)
	}
	d := FieldDiff{Key: key, Changed: inB != inA || !sameValue(b, a)}
	var bl, al []string
	if inB {
		bl = split(bt)
	}
	if inA {
		al = split(at)
	}
	if !d.Changed {
		d.Before, d.After = same(bl), same(al)
		return d
	}
	if len(bl) > MaxLines || len(al) > MaxLines {
		d.TooLong = true
		return d
	}
	d.Before, d.After = diffLines(bl, al)
	return d
}

func same(lines []string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{Text: l, Op: Same}
	}
	return out
}

// Format writes a value as the revision page shows it: a string as it is
// (line endings made \n), anything else as JSON indented by two spaces,
// object keys sorted.
func Format(v any) string {
	if s, ok := v.(string); ok {
		return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the page escapes; "<p>" reads better than "\u003cp\u003e"
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Not JSON (a NaN, a channel): items decoded from JSON never
		// hold one, but the page must still show something.
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// sameValue compares two values as JSON, so that 1 and "1" differ but two
// objects with their keys in another order do not.
func sameValue(a, b any) bool {
	// Strings as they are: JSON would make all invalid UTF-8 alike.
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		return ok && sa == sb
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
	}
	return bytes.Equal(ja, jb)
}

var (
	// blockEnd ends a block of HTML: rich text stored as one line breaks
	// there first.
	blockEnd = regexp.MustCompile(`(?i)</(p|h[1-6]|li|ul|ol|blockquote|pre|tr|table|figure|figcaption|div)>|<br\s*/?>`)
	// sentenceEnd is a full stop, question or exclamation mark (maybe
	// closing a quote or bracket) and the space after it.
	sentenceEnd = regexp.MustCompile(`[.!?]["')\]]?\s+`)
	// clauseEnd is the same for a very long sentence: a comma, semicolon
	// or colon and the space after it.
	clauseEnd = regexp.MustCompile(`[,;:]\s+`)
)

// split cuts text into the units compared: its lines, and a long line
// into blocks, sentences, clauses and, failing those, pieces of longLine
// bytes. Joined, the units give text back, line breaks aside.
func split(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if len(line) <= longLine {
			out = append(out, line)
			continue
		}
		for _, block := range cutAfter(line, blockEnd) {
			for _, sentence := range cutAfter(block, sentenceEnd) {
				if len(sentence) <= 2*longLine {
					out = append(out, sentence)
					continue
				}
				for _, clause := range cutAfter(sentence, clauseEnd) {
					out = append(out, chunks(clause, 2*longLine)...)
				}
			}
		}
		if len(out) > MaxLines { // enough to say it is too long
			return out
		}
	}
	return out
}

// cutAfter splits s after each match of re.
func cutAfter(s string, re *regexp.Regexp) []string {
	locs := re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return []string{s}
	}
	out := make([]string, 0, len(locs)+1)
	start := 0
	for _, l := range locs {
		if l[1] > start && l[1] < len(s) {
			out = append(out, s[start:l[1]])
			start = l[1]
		}
	}
	return append(out, s[start:])
}

// chunks cuts s into pieces of at most n bytes, at character boundaries
// and, where there is one in the second half of a piece, after a space.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if sp := strings.LastIndexByte(s[:cut], ' '); sp > n/2 {
			cut = sp + 1
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// diffLines compares two lists of units and marks each side's.
func diffLines(a, b []string) (before, after []Line) {
	ids := make(map[string]int32, len(a)+len(b))
	intern := func(xs []string) []int32 {
		out := make([]int32, len(xs))
		for i, x := range xs {
			id, ok := ids[x]
			if !ok {
				id = int32(len(ids)) //nolint:gosec // G115: at most 2*MaxLines distinct units
				ids[x] = id
			}
			out[i] = id
		}
		return out
	}
	ops := script(intern(a), intern(b), MaxEdits)
	before = make([]Line, 0, len(a))
	after = make([]Line, 0, len(b))
	i, j := 0, 0
	for _, op := range ops {
		switch op {
		case Same:
			before = append(before, Line{a[i], Same})
			after = append(after, Line{b[j], Same})
			i++
			j++
		case Removed:
			before = append(before, Line{a[i], Removed})
			i++
		case Added:
			after = append(after, Line{b[j], Added})
			j++
		}
	}
	return before, after
}

// script returns an edit script turning a into b: Same consumes one
// element of each, Removed one of a, Added one of b. It is minimal when at
// most maxD edits are needed (Myers, "An O(ND) Difference Algorithm and
// Its Variations", 1986); otherwise the common prefix and suffix are kept
// and the middle removed then added.
func script(a, b []int32, maxD int) []Op {
	// The common prefix and suffix cost nothing to find and often are
	// most of a revision.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b))
	for range pre {
		ops = append(ops, Same)
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], maxD)
	if !ok {
		mid = mid[:0]
		for range len(a) - pre - suf {
			mid = append(mid, Removed)
		}
		for range len(b) - pre - suf {
			mid = append(mid, Added)
		}
	}
	ops = append(ops, mid...)
	for range suf {
		ops = append(ops, Same)
	}
	return ops
}

// myers finds a shortest edit script of at most maxD edits, or reports
// that there is none.
func myers(a, b []int32, maxD int) ([]Op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		ops := make([]Op, 0, n+m)
		for range n {
			ops = append(ops, Removed)
		}
		for range m {
			ops = append(ops, Added)
		}
		return ops, true // the only script, minimal however long
	}
	limit := min(n+m, maxD)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] is v over diagonals -d..d before step d, for the walk back.
	trace := make([][]int, 0, 16)
	for d := 0; d <= limit; d++ {
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an element of b added
			} else {
				x = v[off+k-1] + 1 // right: an element of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace from the end back to the start, collecting
// the edits in reverse.
func backtrack(trace [][]int, n, m int) []Op {
	var rev []Op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d] } // v covers -d..d
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX, prevY := 0, 0 // step 0 starts at the origin
		if d > 0 {
			prevX = at(prevK)
			prevY = prevX - prevK
		}
		for x > prevX && y > prevY {
			rev = append(rev, Same)
			x--
			y--
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, Added)
			} else {
				rev = append(rev, Removed)
			}
		}
		x, y = prevX, prevY
	}
	slices.Reverse(rev)
	return rev
}

// wordPattern cuts a line into words, runs of white space and single
// other characters.
var wordPattern = regexp.MustCompile(`[\p{L}\p{N}_]+|\s+|.`)

// maxWords bounds the word diff of one pair of lines.
const maxWords = 2000

// Words compares two lines word by word, for marking what changed inside
// a changed line: each Line is then a word, a run of spaces or a
// punctuation character. Lines of more than maxWords words are compared
// whole.
func Words(before, after string) (b, a []Line) {
	bw := wordPattern.FindAllString(before, -1)
	aw := wordPattern.FindAllString(after, -1)
	if len(bw) > maxWords || len(aw) > maxWords {
		return []Line{{before, Removed}}, []Line{{after, Added}}
	}
	return diffLines(bw, aw)
}
