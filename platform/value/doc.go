// Package value is the one statement of what a request value may be, for
// every interface: the kinds of value they share (string, integer, number,
// boolean, date, timestamp, http(s) URL, email, UUID, JSON), each with one
// check, one description of what it accepts and one wording of the 400
// that refuses it; what "required" means; the canonical id (a UUID in
// lower case) with the 404 of a path id and the 400 of a body id; how
// a filter_value query parameter is read as a kind; and how many
// entries a request's lists and maps may hold (CheckItems), read from the
// atrium.limits.v1.max_items option of each field.
//
// A service builds its own field types on top (a collections select is a
// string from a list, a reference a UUID of an item), but never states one
// of these rules again. The rules are about values, not about any domain:
// that a CRM name is one line of at most 200 characters is the CRM's
// choice of Rule; what "one line" means is here.
//
// The texts are pinned by a table test (wording_test.go) because the docs
// quote them.
package value
