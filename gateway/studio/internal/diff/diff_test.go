package diff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// item decodes a JSON object as the console gets an item's data.
func item(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test item %s: %v", s, err)
	}
	return m
}

func keys(d []FieldDiff) []string {
	var out []string
	for _, f := range d {
		out = append(out, f.Key)
	}
	return out
}

func byKey(t testing.TB, d []FieldDiff, key string) FieldDiff {
	t.Helper()
	for _, f := range d {
		if f.Key == key {
			return f
		}
	}
	t.Fatalf("no field %q in %v", key, keys(d))
	return FieldDiff{}
}

// texts writes lines as "op:text" for compact comparisons.
func texts(ls []Line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = fmt.Sprintf("%s:%s", l.Op, l.Text)
	}
	return out
}

func TestUnchangedFieldsAreReportedAsUnchanged(t *testing.T) {
	b := item(t, `{"title":"Rye","price":4.5,"tags":["bread","rye"],"meta":{"a":1,"b":[true,null]},"note":null}`)
	a := item(t, `{"title":"Rye","price":4.5,"tags":["bread","rye"],"meta":{"b":[true,null],"a":1},"note":null}`)
	d := Fields(b, a, nil)
	if len(d) != 5 {
		t.Fatalf("got %d fields, want 5: %v", len(d), keys(d))
	}
	for _, f := range d {
		if f.Changed || f.TooLong {
			t.Errorf("field %s reported changed: %+v", f.Key, f)
		}
		if !slices.Equal(texts(f.Before), texts(f.After)) || len(f.Before) == 0 {
			t.Errorf("field %s: unchanged lines differ or are missing: %v | %v", f.Key, texts(f.Before), texts(f.After))
		}
		for _, l := range append(f.Before, f.After...) {
			if l.Op != Same {
				t.Errorf("field %s: line %q marked %s", f.Key, l.Text, l.Op)
			}
		}
	}
}

func TestFieldOrderFollowsTheCollectionThenSortedKeys(t *testing.T) {
	b := item(t, `{"zeta":1,"body":"x","title":"a","alpha":true}`)
	a := item(t, `{"zeta":1,"body":"y","title":"a","extra":"new"}`)
	got := keys(Fields(b, a, []string{"title", "body", "missing", "title"}))
	want := []string{"title", "body", "alpha", "extra", "zeta"}
	if !slices.Equal(got, want) {
		t.Errorf("field order = %v, want %v (collection order, then the rest sorted; unknown and repeated keys skipped)", got, want)
	}
	// Another order of the same collection reorders the page, not the result.
	got = keys(Fields(b, a, []string{"zeta", "body"}))
	want = []string{"zeta", "body", "alpha", "extra", "title"}
	if !slices.Equal(got, want) {
		t.Errorf("field order = %v, want %v", got, want)
	}
}

func TestAddedRemovedAndNullFields(t *testing.T) {
	b := item(t, `{"subtitle":"old","cleared":"text","nulled":null}`)
	a := item(t, `{"cleared":null,"nulled":"now set","fresh":[1,2]}`)
	d := Fields(b, a, nil)

	gone := byKey(t, d, "subtitle")
	if !gone.Changed || len(gone.After) != 0 || !slices.Equal(texts(gone.Before), []string{"removed:old"}) {
		t.Errorf("field removed from the item: %+v", gone)
	}
	fresh := byKey(t, d, "fresh")
	if !fresh.Changed || len(fresh.Before) != 0 || !slices.Equal(texts(fresh.After), []string{"added:[", "added:  1,", "added:  2", "added:]"}) {
		t.Errorf("field added to the item: before %v after %v", texts(fresh.Before), texts(fresh.After))
	}
	cleared := byKey(t, d, "cleared")
	if !cleared.Changed || !slices.Equal(texts(cleared.Before), []string{"removed:text"}) || !slices.Equal(texts(cleared.After), []string{"added:null"}) {
		t.Errorf("text to null: before %v after %v", texts(cleared.Before), texts(cleared.After))
	}
	nulled := byKey(t, d, "nulled")
	if !nulled.Changed || !slices.Equal(texts(nulled.Before), []string{"removed:null"}) {
		t.Errorf("null to text: before %v after %v", texts(nulled.Before), texts(nulled.After))
	}
}

func TestTypeChangeIsAChange(t *testing.T) {
	d := Fields(item(t, `{"n":1,"s":"true"}`), item(t, `{"n":"1","s":true}`), nil)
	for _, f := range d {
		if !f.Changed {
			t.Errorf("%s: a number and a string that read the same are reported unchanged", f.Key)
		}
	}
}

func TestNestedJSONShowsTheChangedLineOnly(t *testing.T) {
	b := item(t, `{"seo":{"title":"Bread","robots":{"index":true,"follow":true},"keywords":["rye","sourdough"]}}`)
	a := item(t, `{"seo":{"title":"Bread","robots":{"index":false,"follow":true},"keywords":["rye","sourdough","starter"]}}`)
	f := byKey(t, Fields(b, a, nil), "seo")
	var removed, added []string
	for _, l := range f.Before {
		if l.Op == Removed {
			removed = append(removed, strings.TrimSpace(l.Text))
		}
	}
	for _, l := range f.After {
		if l.Op == Added {
			added = append(added, strings.TrimSpace(l.Text))
		}
	}
	if !slices.Equal(removed, []string{`"sourdough"`, `"index": true`}) {
		t.Errorf("removed lines = %q", removed)
	}
	if !slices.Equal(added, []string{`"sourdough",`, `"starter"`, `"index": false`}) {
		t.Errorf("added lines = %q", added)
	}
	// The indented JSON is what the page shows: keys sorted, two spaces.
	want := "{\n  \"follow\": true,\n  \"index\": true\n}"
	if got := Format(map[string]any{"index": true, "follow": true}); got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	if got := Format(map[string]any{"html": "<p>a & b</p>"}); !strings.Contains(got, `"<p>a & b</p>"`) {
		t.Errorf("Format escapes HTML for JSON: %q", got)
	}
}

func TestOneWordChangeInAParagraphMarksItsSentence(t *testing.T) {
	p := "Our rye is baked every morning in a wood-fired oven. The starter is older than the bakery itself and is fed twice a day. Each loaf rests for eighteen hours before it is shaped, proofed and baked."
	b := map[string]any{"body": "<p>" + p + "</p><p>Second paragraph.</p>"}
	a := map[string]any{"body": "<p>" + strings.Replace(p, "twice", "three times", 1) + "</p><p>Second paragraph.</p>"}
	f := byKey(t, Fields(b, a, nil), "body")
	var removed, added []string
	for _, l := range f.Before {
		if l.Op == Removed {
			removed = append(removed, l.Text)
		}
	}
	for _, l := range f.After {
		if l.Op == Added {
			added = append(added, l.Text)
		}
	}
	if len(removed) != 1 || !strings.Contains(removed[0], "fed twice a day") || strings.Contains(removed[0], "wood-fired") {
		t.Errorf("removed = %q, want only the sentence with the word", removed)
	}
	if len(added) != 1 || !strings.Contains(added[0], "fed three times a day") {
		t.Errorf("added = %q", added)
	}
	out := string(f.HTML())
	if !strings.Contains(out, "<del>twice</del>") || !strings.Contains(out, "<ins>three times</ins>") {
		t.Errorf("the table does not mark the changed words: %s", out)
	}
}

func TestMultiLineTextDiff(t *testing.T) {
	b := map[string]any{"body": "one\ntwo\nthree\nfour\nfive"}
	a := map[string]any{"body": "zero\none\nthree\nfour!\nfive"}
	f := byKey(t, Fields(b, a, nil), "body")
	wantB := []string{"same:one", "removed:two", "same:three", "removed:four", "same:five"}
	wantA := []string{"added:zero", "same:one", "same:three", "added:four!", "same:five"}
	if !slices.Equal(texts(f.Before), wantB) || !slices.Equal(texts(f.After), wantA) {
		t.Errorf("before %v\n want %v\nafter %v\n want %v", texts(f.Before), wantB, texts(f.After), wantA)
	}
}

// TestScriptIsMinimalAndValid checks the line diff against the LCS length
// computed by dynamic programming, on random inputs.
func TestScriptIsMinimalAndValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		a := randomSeq(r, r.IntN(40))
		b := randomSeq(r, r.IntN(40))
		ops := script(a, b, MaxEdits)
		i, j, same := 0, 0, 0
		for _, op := range ops {
			switch op {
			case Same:
				if i >= len(a) || j >= len(b) || a[i] != b[j] {
					t.Fatalf("script(%v, %v) keeps unequal elements at %d,%d", a, b, i, j)
				}
				i, j, same = i+1, j+1, same+1
			case Removed:
				i++
			case Added:
				j++
			}
		}
		if i != len(a) || j != len(b) {
			t.Fatalf("script(%v, %v) consumes %d,%d of %d,%d", a, b, i, j, len(a), len(b))
		}
		if want := lcs(a, b); same != want {
			t.Fatalf("script(%v, %v) keeps %d, the longest common subsequence is %d", a, b, same, want)
		}
	}
}

func randomSeq(r *rand.Rand, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(r.IntN(5))
	}
	return s
}

func lcs(a, b []int32) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestTooManyLinesIsReportedNotCompared(t *testing.T) {
	long := strings.Repeat("line\n", MaxLines+1)
	f := byKey(t, Fields(map[string]any{"log": long}, map[string]any{"log": long + "more"}, nil), "log")
	if !f.Changed || !f.TooLong || len(f.Before) != 0 || len(f.After) != 0 {
		t.Errorf("a field of %d lines: Changed %v TooLong %v, %d/%d lines", MaxLines+1, f.Changed, f.TooLong, len(f.Before), len(f.After))
	}
	if got := string(f.HTML()); !strings.Contains(got, TooLongText) {
		t.Errorf("HTML = %q, want it to say %q", got, TooLongText)
	}
	// Unchanged, it is simply unchanged.
	if f := byKey(t, Fields(map[string]any{"log": long}, map[string]any{"log": long}, nil), "log"); f.Changed || f.TooLong {
		t.Errorf("an unchanged long field: %+v", f.Changed)
	}
}

// bigFields are two revisions of a field of about 1 MiB: every line
// edited, the worst case for the line diff.
func bigFields() (map[string]any, map[string]any) {
	var b, a strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		line := fmt.Sprintf("line %d %s", i, strings.Repeat("x", 200))
		b.WriteString(line + "\n")
		a.WriteString(line + " edited\n")
	}
	return map[string]any{"body": b.String()}, map[string]any{"body": a.String()}
}

func TestAMegabyteFieldIsQuick(t *testing.T) {
	b, a := bigFields()
	start := time.Now()
	f := Fields(b, a, nil)[0]
	// Far above what it takes (milliseconds, see BenchmarkFieldsMegabyte;
	// 3.1 s once with -race beside the rest of make test on two cores)
	// and far below what an unbounded O(N·M) diff would (minutes).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("comparing two 1 MiB revisions took %v", d)
	}
	if !f.Changed || (!f.TooLong && len(f.Before) == 0) {
		t.Errorf("the field is not reported as changed: %+v", f.TooLong)
	}

	// Under MaxLines but past MaxEdits: shown, removed then added.
	var bl, al []string
	for i := range 3000 {
		bl = append(bl, fmt.Sprintf("old %d", i))
		al = append(al, fmt.Sprintf("new %d", i))
	}
	start = time.Now()
	f = Fields(map[string]any{"x": strings.Join(bl, "\n")}, map[string]any{"x": strings.Join(al, "\n")}, nil)[0]
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("6000 edits took %v", d)
	}
	if f.TooLong || len(f.Before) != 3000 || len(f.After) != 3000 || f.Before[0].Op != Removed || f.After[2999].Op != Added {
		t.Errorf("past MaxEdits: TooLong %v, %d/%d lines", f.TooLong, len(f.Before), len(f.After))
	}
}

func BenchmarkFieldsMegabyte(b *testing.B) {
	before, after := bigFields()
	b.SetBytes(int64(len(before["body"].(string))))
	for b.Loop() {
		Fields(before, after, nil)
	}
}

func BenchmarkFieldsRichText(b *testing.B) {
	// A 100 KiB single-line rich text with one word changed.
	var sb strings.Builder
	for i := 0; sb.Len() < 100<<10; i++ {
		fmt.Fprintf(&sb, "<p>Paragraph %d has a sentence. And another one, with a clause; and more.</p>", i)
	}
	before := sb.String()
	after := strings.Replace(before, "Paragraph 500 ", "Paragraph five hundred ", 1)
	bm, am := map[string]any{"body": before}, map[string]any{"body": after}
	b.SetBytes(int64(len(before)))
	for b.Loop() {
		Fields(bm, am, nil)
	}
}

// FuzzFields checks, for any two texts, that each side's lines are that
// side's value in order, that the kept lines are the same on both sides,
// and that the table renders.
func FuzzFields(f *testing.F) {
	f.Add("one\ntwo", "one\nthree")
	f.Add("<p>A sentence. Another, with a clause.</p>", "<p>A sentence. Another, without.</p>")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, before, after string) {
		d := Fields(map[string]any{"f": before}, map[string]any{"f": after}, []string{"f"})
		if len(d) != 1 {
			t.Fatalf("%d fields", len(d))
		}
		fd := d[0]
		if fd.Changed != (before != after) {
			t.Fatalf("Changed = %v for %q -> %q", fd.Changed, before, after)
		}
		join := func(ls []Line, skip Op) (all, kept []string) {
			for _, l := range ls {
				all = append(all, l.Text)
				if l.Op == Same {
					kept = append(kept, l.Text)
				}
				if l.Op == skip {
					t.Fatalf("a line marked %s on the wrong side", skip)
				}
			}
			return all, kept
		}
		ball, bkept := join(fd.Before, Added)
		aall, akept := join(fd.After, Removed)
		if !slices.Equal(bkept, akept) {
			t.Fatalf("kept lines differ: %q vs %q", bkept, akept)
		}
		if !fd.TooLong {
			if !slices.Equal(ball, split(Format(before))) || !slices.Equal(aall, split(Format(after))) {
				t.Fatalf("lines are not the values'")
			}
		}
		_ = fd.HTML()
		Words(before, after)
	})
}
