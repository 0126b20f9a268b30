package cli

// How the client commands print what the API answered: a table on a
// terminal, JSON when piped (or -o json), CSV with -o csv.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// printList prints a list of objects. cols are the table's and CSV's
// columns, in order; nil derives them from the objects (id first, then
// the others by name), for the datasets whose fields vary.
func (f *Factory) printList(v any, cols []string) error {
	if f.format() == "json" {
		return printJSON(f.env.Stdout, v)
	}
	rows, err := toRows(v)
	if err != nil {
		return err
	}
	if len(rows) == 0 && f.format() == "table" {
		fmt.Fprintln(f.env.Stderr, "nothing found")
		return nil
	}
	if cols == nil {
		cols = deriveColumns(rows)
	}
	if f.format() == "csv" {
		return printCSV(f.env.Stdout, cols, rows)
	}
	tw := tabwriter.NewWriter(f.env.Stdout, 0, 0, 2, ' ', 0)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = strings.ToUpper(c)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = tableCell(cell(r[c]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// printObject prints one object: a two-column table of its fields on a
// terminal, one CSV row, or JSON.
func (f *Factory) printObject(v any, cols []string) error {
	switch f.format() {
	case "json":
		return printJSON(f.env.Stdout, v)
	case "csv":
		rows, err := toRows([]any{v})
		if err != nil {
			return err
		}
		if cols == nil {
			cols = deriveColumns(rows)
		}
		return printCSV(f.env.Stdout, cols, rows)
	}
	rows, err := toRows([]any{v})
	if err != nil {
		return err
	}
	if cols == nil {
		cols = deriveColumns(rows)
	}
	tw := tabwriter.NewWriter(f.env.Stdout, 0, 0, 2, ' ', 0)
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t%s\n", c, tableCell(cell(rows[0][c])))
	}
	return tw.Flush()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func printCSV(w io.Writer, cols []string, rows []map[string]any) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	for _, r := range rows {
		rec := make([]string, len(cols))
		for i, c := range cols {
			rec[i] = cell(r[c])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// toRows turns a slice of objects (SDK types or maps) into maps by their
// JSON, numbers kept as written.
func toRows(v any) ([]map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("print the answer: %w", err)
	}
	return rows, nil
}

// deriveColumns is every field of the rows: id first, then by name.
func deriveColumns(rows []map[string]any) []string {
	seen := map[string]bool{}
	var cols []string
	for _, r := range rows {
		for k := range r {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	sort.Slice(cols, func(i, j int) bool {
		if (cols[i] == "id") != (cols[j] == "id") {
			return cols[i] == "id"
		}
		return cols[i] < cols[j]
	})
	return cols
}

// cell is a value as a table or CSV shows it: strings and numbers as
// they are, nothing for null, lists of strings joined by commas, other
// lists and objects as compact JSON.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				b, _ := json.Marshal(x)
				return string(b)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// tableCell keeps a table's rows on one line each, and long values short.
func tableCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}
