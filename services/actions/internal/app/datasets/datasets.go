// Package datasets names the data service's datasets and the fields of
// their rows, for the handlers and the run engine that write them. The
// data service's catalog (services/data/internal/app/catalog.go) is the one
// statement of them: catalog_gen.go is generated from it (go generate
// ./services/data/internal/app), a test in the data module fails while it
// is stale, and a test here runs every action and checks each row it
// writes against All. A field name written as a string literal in a handler
// would escape both.
package datasets

// Dataset is a dataset and every field of its rows.
type Dataset struct {
	Resource string
	Fields   []Field
}

// Field is one field of a dataset's rows: its name, its type (TString,
// TNumber...) and whether every row must have it.
type Field struct {
	Name, Type string
	Required   bool
}

// Lookup returns the dataset called resource.
func Lookup(resource string) (Dataset, bool) {
	for _, d := range All {
		if d.Resource == resource {
			return d, true
		}
	}
	return Dataset{}, false
}

// Field returns the dataset's field called name.
func (d Dataset) Field(name string) (Field, bool) {
	for _, f := range d.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
