// Package backends chooses and opens the object store a command's settings
// describe: an S3-compatible bucket when --s3-bucket is set, otherwise a
// local directory (--data-dir, or a temporary one removed at exit). Every
// command that keeps or serves files (atrium serve, atrium-gateway,
// atrium-collections, atrium-actions) binds the same flags here.
package backends
