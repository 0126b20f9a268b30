// Package textsearch is the one list of the languages a collection's
// full-text search may use: PostgreSQL's text search configurations. The
// collections service checks a collection's search_language against it,
// and the Studio's schema builder offers it, so that neither states it
// again.
package textsearch
