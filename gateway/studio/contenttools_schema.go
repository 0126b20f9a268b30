package studio

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/platform/textsearch"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// fieldTypes are the types a field may have (FieldDefinition.type).
var fieldTypes = []string{"text", "rich_text", "number", "integer", "boolean", "date", "datetime", "email", "url",
	"select", "multi_select", "json", "reference", "asset"}

// searchLanguages are the search languages a collection may set: the
// list the collections service checks them against (platform/textsearch).
var searchLanguages = textsearch.Languages

// fieldForm is a field's form as posted (kept when the service refuses it).
type fieldForm struct {
	Key, Type, Options, Target, MaxLength string
	Required                              bool
	Error                                 string
}

// collectionForm is the create and rename forms as posted.
type collectionForm struct {
	Name, Slug, Language, Error string
}

// readFieldForm reads a field's form. Whether its values are allowed is
// the service's to say; this only refuses what is not a value at all (a
// maximum length that is not a whole number).
func readFieldForm(form url.Values) (fieldForm, *collectionsv1.FieldDefinition, error) {
	ff := fieldForm{Key: strings.TrimSpace(form.Get("key")), Type: form.Get("type"), Options: form.Get("options"),
		Target: form.Get("target"), MaxLength: strings.TrimSpace(form.Get("max_length")), Required: form.Get("required") != ""}
	def := &collectionsv1.FieldDefinition{Key: ff.Key, Type: ff.Type, Required: ff.Required}
	if ff.Type == "select" || ff.Type == "multi_select" {
		for line := range strings.Lines(ff.Options) {
			if o := strings.TrimSpace(line); o != "" {
				def.Options = append(def.Options, o)
			}
		}
	}
	if ff.Type == "reference" && ff.Target != "" {
		def.Target = &ff.Target
	}
	if ff.MaxLength != "" {
		n, err := strconv.ParseInt(ff.MaxLength, 10, 32)
		if err != nil || n < 1 {
			return ff, nil, fmt.Errorf("the maximum length %q is not a whole number of characters from 1; leave it empty for no maximum", ff.MaxLength)
		}
		def.MaxLength = new(int32(n))
	}
	return ff, def, nil
}

// formOf is a field's definition as its change form shows it.
func formOf(f *collectionsv1.FieldDefinition) fieldForm {
	ff := fieldForm{Key: f.GetKey(), Type: f.GetType(), Options: strings.Join(f.GetOptions(), "\n"), Target: f.GetTarget(), Required: f.GetRequired()}
	if f.MaxLength != nil {
		ff.MaxLength = strconv.Itoa(int(f.GetMaxLength()))
	}
	return ff
}

type schemaData struct {
	Collections []*collectionsv1.Collection
	Languages   []string
	Create      collectionForm
	MayCreate   bool
	Base        string
}

// schemaPage lists the site's collections with their fields, and the form
// that creates one.
func (s *Studio) schemaPage(v *visit) error {
	return s.renderSchema(v, http.StatusOK, collectionForm{Language: "simple"})
}

func (s *Studio) renderSchema(v *visit, code int, form collectionForm) error {
	resp, err := call(v, collectionsv1.SchemaService_ListSchemaCollections_FullMethodName, s.schema.ListSchemaCollections, &collectionsv1.ListSchemaCollectionsRequest{})
	if err != nil {
		return err
	}
	d := schemaData{Collections: resp.GetCollections(), Languages: searchLanguages, Create: form, Base: v.path("sites", v.site, "schema"),
		MayCreate: v.may(collectionsv1.SchemaService_CreateSchemaCollection_FullMethodName)}
	s.render(v, code, "contenttools/schema", View{Title: "Schema", Crumbs: s.siteCrumbs(v)}, d)
	return nil
}

// createCollection adds a collection to the site.
func (s *Studio) createCollection(v *visit) error {
	form := collectionForm{Name: strings.TrimSpace(v.r.PostFormValue("name")), Slug: strings.TrimSpace(v.r.PostFormValue("slug")),
		Language: v.r.PostFormValue("search_language")}
	resp, err := call(v, collectionsv1.SchemaService_CreateSchemaCollection_FullMethodName, s.schema.CreateSchemaCollection,
		&collectionsv1.CreateSchemaCollectionRequest{Name: form.Name, Slug: form.Slug, SearchLanguage: form.Language})
	if err != nil {
		msg, ok := errForm(err)
		if !ok {
			return err
		}
		form.Error = msg
		return s.renderSchema(v, formCode(msg), form)
	}
	v.setFlash("Created the collection " + resp.GetCollection().GetName() + ". Add its fields.")
	return v.redirect(v.path("sites", v.site, "schema", resp.GetCollection().GetSlug()), "")
}

type schemaField struct {
	Def  *collectionsv1.FieldDefinition
	Form fieldForm
}

type schemaCollectionData struct {
	C         *collectionsv1.Collection
	Fields    []schemaField
	Types     []string
	Languages []string
	Targets   []*collectionsv1.Collection
	Rename    collectionForm
	Add       fieldForm
	MayUpdate bool
	Base      string
	// List is the schema page of the site.
	List string
}

// schemaCollectionPage is one collection's builder: rename it, add a
// field, change or remove one.
func (s *Studio) schemaCollectionPage(v *visit) error {
	return s.renderSchemaCollection(v, http.StatusOK, nil)
}

// renderSchemaCollection draws the builder; edit, when a form was refused,
// puts its input and error back in its place (by the form's name: rename,
// add, or field:<key>).
func (s *Studio) renderSchemaCollection(v *visit, code int, edit func(*schemaCollectionData)) error {
	slug := v.r.PathValue("slug")
	resp, err := call(v, collectionsv1.SchemaService_ListSchemaCollections_FullMethodName, s.schema.ListSchemaCollections, &collectionsv1.ListSchemaCollectionsRequest{})
	if err != nil {
		return err
	}
	i := slices.IndexFunc(resp.GetCollections(), func(c *collectionsv1.Collection) bool { return c.GetSlug() == slug })
	if i < 0 {
		return errNotFound("the site has no collection " + quote(slug))
	}
	c := resp.GetCollections()[i]
	d := schemaCollectionData{C: c, Types: fieldTypes, Languages: searchLanguages, Targets: resp.GetCollections(),
		Rename:    collectionForm{Name: c.GetName(), Language: c.GetSearchLanguage()},
		Add:       fieldForm{Type: "text"},
		MayUpdate: v.may(collectionsv1.SchemaService_UpdateSchemaCollection_FullMethodName),
		Base:      v.path("sites", v.site, "schema", slug), List: v.path("sites", v.site, "schema")}
	if d.Rename.Language == "" {
		d.Rename.Language = "simple"
	}
	for _, f := range c.GetFields() {
		d.Fields = append(d.Fields, schemaField{Def: f, Form: formOf(f)})
	}
	if edit != nil {
		edit(&d)
	}
	crumbs := append(s.siteCrumbs(v), Link{Label: "Schema", Href: v.path("sites", v.site, "schema")})
	s.render(v, code, "contenttools/schema-collection", View{Title: "Schema of " + c.GetName(), Crumbs: crumbs}, d)
	return nil
}

// updateCollection sends one change of the builder; a refusal the person
// can fix re-draws the builder with it (edit), anything else is the error.
func (s *Studio) updateCollection(v *visit, req *collectionsv1.UpdateSchemaCollectionRequest, done string, edit func(*schemaCollectionData, string)) error {
	req.Slug = v.r.PathValue("slug")
	_, err := call(v, collectionsv1.SchemaService_UpdateSchemaCollection_FullMethodName, s.schema.UpdateSchemaCollection, req)
	if err != nil {
		msg, ok := errForm(err)
		if !ok {
			return err
		}
		return s.renderSchemaCollection(v, formCode(msg), func(d *schemaCollectionData) { edit(d, msg) })
	}
	v.setFlash(done)
	return v.redirect(v.path("sites", v.site, "schema", req.Slug), "")
}

// renameCollection changes the collection's name and search language.
func (s *Studio) renameCollection(v *visit) error {
	form := collectionForm{Name: strings.TrimSpace(v.r.PostFormValue("name")), Language: v.r.PostFormValue("search_language")}
	req := &collectionsv1.UpdateSchemaCollectionRequest{Name: &form.Name, SearchLanguage: &form.Language}
	return s.updateCollection(v, req, "Saved the collection's name and search language.", func(d *schemaCollectionData, msg string) {
		form.Error = msg
		d.Rename = form
	})
}

// addField adds a field to the collection.
func (s *Studio) addField(v *visit) error {
	ff, def, err := readFieldForm(v.r.PostForm)
	if err != nil {
		ff.Error = sentence(err.Error())
		return s.renderSchemaCollection(v, http.StatusBadRequest, func(d *schemaCollectionData) { d.Add = ff })
	}
	req := &collectionsv1.UpdateSchemaCollectionRequest{AddFields: []*collectionsv1.FieldDefinition{def}}
	return s.updateCollection(v, req, "Added the field "+def.GetKey()+".", func(d *schemaCollectionData, msg string) {
		ff.Error = fieldMessage(msg)
		d.Add = ff
	})
}

// changeField changes a field's settings; its key and type stay.
func (s *Studio) changeField(v *visit) error {
	key := v.r.PathValue("key")
	form := url.Values{}
	for k, vs := range v.r.PostForm {
		form[k] = vs
	}
	form.Set("key", key)
	ff, def, err := readFieldForm(form)
	keep := func(d *schemaCollectionData, msg string) {
		ff.Error = fieldMessage(msg)
		for i := range d.Fields {
			if d.Fields[i].Def.GetKey() == key {
				ff.Type = d.Fields[i].Def.GetType()
				d.Fields[i].Form = ff
			}
		}
	}
	if err != nil {
		return s.renderSchemaCollection(v, http.StatusBadRequest, func(d *schemaCollectionData) { keep(d, sentence(err.Error())) })
	}
	req := &collectionsv1.UpdateSchemaCollectionRequest{UpdateFields: []*collectionsv1.FieldDefinition{def}}
	return s.updateCollection(v, req, "Saved the field "+key+".", keep)
}

// removeField removes a field and, with it, its values in every item.
func (s *Studio) removeField(v *visit) error {
	key := v.r.PathValue("key")
	req := &collectionsv1.UpdateSchemaCollectionRequest{RemoveFields: []string{key}}
	return s.updateCollection(v, req, "Removed the field "+key+" and its values.", func(d *schemaCollectionData, msg string) {
		for i := range d.Fields {
			if d.Fields[i].Def.GetKey() == key {
				d.Fields[i].Form.Error = msg
			}
		}
	})
}

// fieldInputsData is what the field-inputs template draws: a field's
// inputs, their ids prefixed with ID; New for the add form, which also
// asks the key and the type.
type fieldInputsData struct {
	Form    fieldForm
	ID      string
	Targets []*collectionsv1.Collection
	Types   []string
	New     bool
}

func fieldInputs(f fieldForm, id string, targets []*collectionsv1.Collection, isNew bool) fieldInputsData {
	return fieldInputsData{Form: f, ID: id, Targets: targets, Types: fieldTypes, New: isNew}
}

// fieldPath is how the service names the field of a request it refuses
// (fields[3].key: the collection's fields with the new one merged in);
// the page shows the message by the field's own form, where "Key" says it.
var fieldPath = regexp.MustCompile(`^(?i:add_fields|update_fields|fields)\[\d+\]\.`)

// fieldMessage is a refusal of one field's form, worded for that form.
func fieldMessage(msg string) string {
	return sentence(fieldPath.ReplaceAllString(msg, ""))
}
