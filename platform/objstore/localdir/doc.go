// Package localdir is the object store in a local directory: the embedded
// default (--data-dir), for one machine or a volume every process of a
// deployment mounts.
//
// An object is the file at its key under the directory, its bytes and
// nothing else, so that the gateway sends it with sendfile(2) and an
// operator can back the directory up with any tool. A Put writes a
// temporary file in the directory's .tmp folder, fsyncs it, renames it
// over the object and fsyncs the object's directory: a reader sees the old
// object or the new one, whole, and a Put that returned survives a crash.
// Keys never start a segment with a dot (objstore.CheckKey), so .tmp is
// never an object; New removes what crashed Puts left there.
package localdir
