// Package objstore is the object-store port: files kept by key, written
// whole from a stream and read back from any offset. The collections
// service keeps its assets there and the actions service its generated
// images; the gateway reads both straight from it when it serves their
// URLs, so that no service sits in the path of a download.
//
// Two adapters meet the port, held to one contract suite
// (objstoretest.RunAll): a local directory (localdir, the embedded
// default, --data-dir) and any S3-compatible store (s3store, --s3-*).
// backends chooses and opens one from the command line's settings.
package objstore
