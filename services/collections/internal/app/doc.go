// Package app is the collections service's domain and use cases. A site is
// the tenant of the collections interface: an API key bound to a site reads
// and writes that site's collections and items.
package app
