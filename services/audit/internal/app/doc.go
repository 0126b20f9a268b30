// Package app is the audit service's core: the audit events as kept, the
// port of their store, the recorder that keeps each event of the stream
// once, the trail's reads (filters, cursor paging) and the retention.
package app
