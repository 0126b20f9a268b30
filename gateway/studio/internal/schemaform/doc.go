// Package schemaform turns an action's input schema into an HTML form of
// Atrium Studio, and the posted form back into the action's input.
//
// Every action publishes the JSON Schema (2020-12) of its request body in
// discovery (input_schema of ListActions, GET /api/v1/actions), read from
// the same declaration the actions service validates with. The console
// builds its forms from that schema rather than from a copy of the fields,
// so that a new action, or a new bound on a field, reaches the console
// without a change here.
//
// Build reads the schema into a Form: one Field per property with what a
// template needs to render a labelled control, its help text and its
// error (the "schemaform" template of form.html, Template, styled by
// schemaform.css, CSS). Parse reads a
// posted form back into the JSON the action expects and checks it against
// the same schema, with messages written for the person at the form
// ("Competitors: at most 10 lines; you gave 12"). The service validates
// again: what a schema cannot say (that an address is public, that a
// location is known) is its to refuse.
//
// The forms are plain HTML that work without JavaScript under the
// console's strict CSP: no script, no style attribute. A property the form
// cannot show as a control (an object, a union, a $ref) becomes a JSON
// textarea, so that an unfamiliar schema degrades one field, never the
// whole form.
package schemaform
