package schemaform_test

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"os"

	"github.com/atrium-hq/atrium/gateway/studio/internal/schemaform"
)

// schema is run_llm_visibility's input schema as discovery lists it, cut
// to two fields.
const schema = `{"type":"object","title":"run_llm_visibility",
 "required":["action","client_id","brand_name"],
 "properties":{
  "action":{"const":"run_llm_visibility"},
  "client_id":{"type":"string","format":"uuid"},
  "brand_name":{"type":"string","minLength":1,"maxLength":100,"description":"The brand to look for in the answer."},
  "competitors":{"type":"array","items":{"type":"string","minLength":1,"maxLength":100},"maxItems":3,"description":"Competitor brands to look for too."}}}`

// A console handler: the form for GET, Parse for POST, and the form
// again with its errors when Parse refuses. The console picks the client
// itself, so client_id is not a field of the page but a value it adds.
func Example() {
	page := template.Must(schemaform.AddTo(template.New("page")))
	template.Must(page.New("action").Parse(`<form method="post">{{template "schemaform" .}}<button>Run</button></form>`))

	posted := url.Values{"brand_name": {" Rye Plumbing "}, "competitors": {"Roto-Rooter\r\nMr. Rooter\r\n\r\nDrainCo\r\nPipeMasters"}}
	posted.Set("client_id", "0190b7a8-3c1e-7d2f-9a4b-5c6d7e8f9a0b") // the client being viewed
	input, errs := schemaform.Parse([]byte(schema), posted)
	if len(errs) > 0 {
		form, err := schemaform.Build([]byte(schema), schemaform.Posted(posted), errs)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(errs["competitors"])
		_ = page.ExecuteTemplate(os.Stdout, "action", form.Without("client_id"))
		return
	}
	b, _ := json.Marshal(input)
	fmt.Println(string(b))
	// Output:
	// Competitors: at most 3 lines; you gave 4
	// <form method="post">
	// <div class="sf-field sf-text">
	// <label for="sf-brand_name">Brand name <span class="sf-required">(required)</span></label>
	// <input type="text" id="sf-brand_name" name="brand_name" value=" Rye Plumbing " required maxlength="100" aria-describedby="sf-brand_name-help sf-brand_name-hint">
	// <p id="sf-brand_name-help" class="sf-help">The brand to look for in the answer.</p><p id="sf-brand_name-hint" class="sf-hint">At most 100 characters.</p>
	// </div>
	//
	// <div class="sf-field sf-textarea-list sf-invalid">
	// <label for="sf-competitors">Competitors</label>
	// <textarea id="sf-competitors" name="competitors" rows="6" spellcheck="false" aria-invalid="true" aria-describedby="sf-competitors-error sf-competitors-help sf-competitors-hint">
	// Roto-Rooter
	// Mr. Rooter
	//
	// DrainCo
	// PipeMasters</textarea>
	// <p id="sf-competitors-error" class="sf-error">Competitors: at most 3 lines; you gave 4</p><p id="sf-competitors-help" class="sf-help">Competitor brands to look for too.</p><p id="sf-competitors-hint" class="sf-hint">One per line, at most 3 lines, each at most 100 characters.</p>
	// </div>
	// <button>Run</button></form>
}
