// Package mediastore keeps the files actions generate (featured images) on
// the object store (platform/objstore) that the collections service's
// assets use too: a local directory, or an S3-compatible bucket, where
// several replicas of the actions service need no shared volume. Each file
// is the object media/<name>; the gateway serves it from there at
// /media/<name> (platform/publicfile).
//
// MigrateBlobDir moves the images of the directory format this replaced
// (one file per image in --data-dir, a header line with its type before
// its bytes) into the store, at start, so that links given out before an
// upgrade keep working.
package mediastore
