// Package s3store is the object store on any S3-compatible service (AWS
// S3, MinIO, Cloudflare R2, Google Cloud Storage's XML API, versitygw),
// through minio-go, MinIO's Apache-2.0 client: one module, built and
// tested against the S3-compatible services rather than AWS alone, and
// sending only what S3's core API defines (the AWS SDK's default request
// checksums and signed headers are what R2 and Cloud Storage refuse).
//
// Objects are kept under Prefix in Bucket. A Put whose size is known is
// one streamed PUT, nothing buffered. A Put of unknown size (a multipart
// form's file, whose length shows only at its end) reads a part of
// PartSize into memory: if the object ends within it, it is one PUT of
// that part; otherwise a multipart upload sends it part after part, each
// buffered in turn, and is aborted if anything fails, so that a failed Put
// leaves no object and no parts. Memory per Put is at most one part,
// whatever the object's size.
package s3store
