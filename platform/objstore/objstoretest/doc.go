// Package objstoretest is the contract every object store adapter meets
// (RunAll; each adapter's test is one call), and the S3-compatible server
// the tests of the S3 adapter and the end-to-end suites use (S3).
package objstoretest
