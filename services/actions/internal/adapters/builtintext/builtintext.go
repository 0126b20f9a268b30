// Package builtintext is the actions service's built-in text generator, the
// embedded default: it writes every kind of text an action asks for from
// templates, offline, so that Atrium works without a language model. The
// same request always gives the same text: the choice between phrasings is
// seeded from a hash of the request, never from the clock or a global
// random source, so runs are reproducible and tests are exact.
package builtintext

import (
	"context"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// Model is the Text.Model of everything the generator writes.
const Model = "atrium-builtin"

// Generator writes text from templates.
type Generator struct{}

var _ provider.TextGenerator = (*Generator)(nil)

// New returns a Generator.
func New() *Generator { return &Generator{} }

// Generate implements provider.TextGenerator. Every requested field gets a
// non-empty text: the kind's own fields from its templates, any other field
// from the request's instructions and inputs.
func (g *Generator) Generate(ctx context.Context, req provider.TextRequest) (provider.Text, error) {
	if err := ctx.Err(); err != nil {
		return provider.Text{}, err
	}
	w := newWriter(req)
	var known map[string]string
	switch req.Kind {
	case provider.TextBlogArticle:
		known = w.article(false)
	case provider.TextGeoArticle:
		known = w.article(true)
	case provider.TextPressRelease:
		known = w.pressRelease()
	case provider.TextGBPPost:
		known = w.gbpPost()
	case provider.TextOutreachEmail:
		known = w.outreachEmail()
	case provider.TextTopicalMap:
		known = w.topicalMap()
	case provider.TextPageOptimization:
		known = w.pageOptimization()
	case provider.TextLLMAnswer:
		known = w.llmAnswer()
	case provider.TextCallSummary:
		known = w.callSummary()
	case provider.TextReportNarrative:
		known = w.reportNarrative()
	}
	fields := make(map[string]string, len(req.Fields))
	for _, f := range req.Fields {
		text := strings.TrimSpace(known[f.Name])
		if text == "" {
			text = w.generic(f)
		}
		fields[f.Name] = text
	}
	return provider.Text{Fields: fields, Model: Model}, nil
}

// writer holds one request and the choices made for it.
type writer struct {
	req provider.TextRequest
	rng *rng
}

func newWriter(req provider.TextRequest) *writer {
	return &writer{req: req, rng: &rng{state: seed(req)}}
}

// seed hashes everything the text is written from, in a fixed order.
func seed(req provider.TextRequest) uint64 {
	h := fnv.New64a()
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	write(req.Kind)
	for _, m := range []map[string]string{req.Inputs, req.Hints} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			write(k)
			write(strings.TrimSpace(m[k]))
		}
		write("\x01")
	}
	return h.Sum64()
}

// rng is splitmix64: small, fast and the same on every platform and Go
// version, which math/rand does not promise.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(r.next() % uint64(n)) //nolint:gosec // G115: n > 1, and the remainder is below it
}

func (r *rng) pick(options ...string) string { return options[r.intn(len(options))] }

// shuffle returns a shuffled copy of s.
func shuffle[T any](r *rng, s []T) []T {
	out := slices.Clone(s)
	for i := len(out) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// in returns an input, trimmed and on one line, cut to at most max
// characters so that a huge input cannot blow up a title.
func (w *writer) in(name string, max int) string {
	return clip(oneLine(w.req.Inputs[name]), max)
}

// lines returns a multi-line input's non-empty lines, bullets removed.
func (w *writer) lines(name string) []string {
	var out []string
	for _, l := range strings.Split(w.req.Inputs[name], "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-*•·"))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most max characters at a word boundary.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:-")
}

func length(s string) int { return utf8.RuneCountInString(s) }

// smallWords stay lower case inside a title.
var smallWords = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "by": true, "for": true, "from": true,
	"in": true, "near": true, "of": true, "on": true, "or": true, "the": true, "to": true, "vs": true, "with": true,
}

// title capitalises the words of s for a heading, leaving words that
// already have capitals (SEO, iPhone, TX) as they are.
func title(s string) string {
	words := strings.Fields(s)
	for i, word := range words {
		if strings.IndexFunc(word, unicode.IsUpper) >= 0 || (i > 0 && smallWords[word]) {
			continue
		}
		words[i] = upperFirst(word)
	}
	return strings.Join(words, " ")
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// sentence makes s a sentence: capitalised and ending with punctuation.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = upperFirst(s)
	if !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// firstFit returns the first of the options that is at most max
// characters long; if none fits, the shortest.
func firstFit(max int, options ...string) string {
	shortest := ""
	for _, o := range options {
		if length(o) <= max {
			return o
		}
		if shortest == "" || length(o) < length(shortest) {
			shortest = o
		}
	}
	return shortest
}

// rotate returns options starting from a chosen one, so that requests vary
// in which of equally good phrasings they try first.
func (w *writer) rotate(options []string) []string {
	i := w.rng.intn(len(options))
	return append(options[i:len(options):len(options)], options[:i]...)
}

// fitLength grows lead with extras until it is at least min characters,
// never passing max; a lead over max is cut at a word.
func fitLength(lead string, extras []string, min, max int) string {
	s := clip(lead, max)
	for _, e := range extras {
		if length(s) >= min {
			break
		}
		if length(s)+1+length(e) <= max {
			s += " " + e
		}
	}
	return s
}

// domainOf returns the host of a URL or domain, without www.
func domainOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(strings.ToLower(s), "www.")
}

// tones are the voices an article or email may be written in; anything
// else is professional.
var tones = []string{"professional", "friendly", "casual", "authoritative", "playful"}

func (w *writer) tone() string {
	t := strings.ToLower(w.in("tone", 40))
	if slices.Contains(tones, t) {
		return t
	}
	return "professional"
}

// expand fills {name} placeholders.
func expand(template string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(template, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(template[i:], '}')
		if j < 0 {
			break
		}
		name := template[i+1 : i+j]
		v, ok := vars[name]
		b.WriteString(template[:i])
		if ok {
			b.WriteString(v)
		} else {
			b.WriteString(template[i : i+j+1])
		}
		template = template[i+j+1:]
	}
	b.WriteString(template)
	return b.String()
}
