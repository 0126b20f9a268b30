package objstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/atrium-hq/atrium/platform/objstore/s3store"
)

// The S3-compatible server of the tests: versitygw on a directory, which
// `make services-up` (run by make test and .ci/run) starts with these
// credentials. TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY and TEST_S3_SECRET_KEY
// point the tests at another.
const (
	DefaultS3Endpoint  = "http://127.0.0.1:7070"
	DefaultS3AccessKey = "atrium-test"
	DefaultS3SecretKey = "atrium-test-secret" //nolint:gosec // G101: the local test server's, public by design (make services-up)
	// S3Region is the region the tests ask for (versitygw's default).
	S3Region = "us-east-1"
)

// S3Server is the test S3 server with a bucket of the test's own.
type S3Server struct {
	Endpoint, AccessKey, SecretKey, Region, Bucket string
}

// Config is the s3store configuration of the test's bucket.
func (s S3Server) Config() s3store.Config {
	return s3store.Config{Endpoint: s.Endpoint, Bucket: s.Bucket, Region: s.Region,
		Credentials: credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")}
}

// Env is the environment a process reaching the bucket needs: the
// standard AWS credential variables.
func (s S3Server) Env() map[string]string {
	return map[string]string{"AWS_ACCESS_KEY_ID": s.AccessKey, "AWS_SECRET_ACCESS_KEY": s.SecretKey}
}

// Flags are the command-line settings of the bucket (credentials aside:
// Env).
func (s S3Server) Flags() []string {
	return []string{"--s3-endpoint=" + s.Endpoint, "--s3-bucket=" + s.Bucket, "--s3-region=" + s.Region}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// S3 returns the test S3 server with a new, empty bucket for t, removed
// with everything in it when t ends. When the server cannot be reached the
// test fails, naming it; it is skipped only when ATRIUM_TEST_SKIP_S3=1 is
// set outside CI, so a suite that did not run never counts as passing.
func S3(t testing.TB) S3Server {
	t.Helper()
	srv := S3Server{
		Endpoint:  env("TEST_S3_ENDPOINT", DefaultS3Endpoint),
		AccessKey: env("TEST_S3_ACCESS_KEY", DefaultS3AccessKey),
		SecretKey: env("TEST_S3_SECRET_KEY", DefaultS3SecretKey),
		Region:    S3Region,
	}
	u, err := url.Parse(srv.Endpoint)
	if err != nil || u.Host == "" {
		t.Fatalf("TEST_S3_ENDPOINT must be an http(s) URL; got %q", srv.Endpoint)
	}
	client, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
		Secure: u.Scheme == "https", Region: srv.Region})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	srv.Bucket = "atrium-test-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.MakeBucket(ctx, srv.Bucket, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		if os.Getenv("ATRIUM_TEST_SKIP_S3") == "1" && os.Getenv("CI") == "" {
			t.Skipf("the S3 server is unreachable and ATRIUM_TEST_SKIP_S3=1: %v", err)
		}
		t.Fatalf("an S3-compatible server is required for this test and did not create a bucket at %s: %v\n"+
			"start it with make services-up (versitygw on 127.0.0.1:7070) or point TEST_S3_ENDPOINT at one", srv.Endpoint, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for o := range client.ListObjects(ctx, srv.Bucket, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil {
				t.Errorf("empty test bucket %s: %v", srv.Bucket, o.Err)
				return
			}
			if err := client.RemoveObject(ctx, srv.Bucket, o.Key, minio.RemoveObjectOptions{}); err != nil {
				t.Errorf("empty test bucket %s: %v", srv.Bucket, err)
				return
			}
		}
		if err := client.RemoveBucket(ctx, srv.Bucket); err != nil {
			t.Errorf("remove test bucket %s: %v", srv.Bucket, err)
		}
	})
	return srv
}
