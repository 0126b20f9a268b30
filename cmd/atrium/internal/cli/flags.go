package cli

// Flags and helpers several verbs share.

import (
	"flag"
	"strings"
)

// pageFlags are the paging flags of the lists.
type pageFlags struct {
	limit, offset int
	all           bool
	// pageSize: with --all, --limit is the size of each page read (the
	// datasets page by cursor at any size).
	pageSize bool
}

func (p *pageFlags) define(fs *flag.FlagSet, what string) {
	fs.IntVar(&p.limit, "limit", 0, "at most this many "+what+" (default: the API's page size; with --all, where the list allows it, the size of each page)")
	fs.IntVar(&p.offset, "offset", 0, "skip this many "+what)
	fs.BoolVar(&p.all, "all", false, "every "+what+", page after page")
}

func (p *pageFlags) check() error {
	if p.limit < 0 || p.offset < 0 {
		return usagef("--limit and --offset must be 0 or more")
	}
	if p.all && p.limit > 0 && !p.pageSize {
		return usagef("--all reads every page; it does not take --limit")
	}
	return nil
}

// filterFlag parses --filter field=value.
func filterFlag(s string) (field, value string, err error) {
	if s == "" {
		return "", "", nil
	}
	field, value, ok := strings.Cut(s, "=")
	if !ok || field == "" {
		return "", "", usagef("--filter %s: write it field=value", s)
	}
	return field, value, nil
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for e := range strings.SplitSeq(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
