package backends_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/backends"
	"github.com/atrium-hq/atrium/platform/objstore/objstoretest"
)

func roundTrip(t *testing.T, s objstore.Store) {
	t.Helper()
	if err := s.Put(t.Context(), "media/x.png", bytes.NewReader([]byte("png")), 3, "image/png"); err != nil {
		t.Fatal(err)
	}
	if got, err := objstore.ReadAll(t.Context(), s, "media/x.png"); err != nil || string(got) != "png" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

func TestDataDirKeepsObjectsUnderObjects(t *testing.T) {
	dir := t.TempDir()
	o, err := backends.Open(t.Context(), backends.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	roundTrip(t, o.Store)
	if o.Temporary || !strings.Contains(o.Describe, dir) {
		t.Errorf("Temporary = %v, Describe = %q; want a lasting directory under %s", o.Temporary, o.Describe, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "objects", "media", "x.png")); err != nil {
		t.Errorf("the object is not a file under the data directory's objects: %v", err)
	}
}

func TestNoDataDirIsTemporaryAndRemoved(t *testing.T) {
	o, err := backends.Open(t.Context(), backends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, o.Store)
	dir := filepath.Dir(strings.TrimPrefix(o.Describe, "directory "))
	if !o.Temporary {
		t.Fatal("no --data-dir: want a temporary directory")
	}
	o.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the temporary directory %s outlived Close: %v", dir, err)
	}
}

func TestS3Bucket(t *testing.T) {
	srv := objstoretest.S3(t)
	env := srv.Env()
	o, err := backends.Open(t.Context(), backends.Config{S3Endpoint: srv.Endpoint, S3Bucket: srv.Bucket, S3Region: srv.Region, S3Prefix: "deployment-a/",
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	roundTrip(t, o.Store)
	if !strings.Contains(o.Describe, srv.Bucket) || !strings.Contains(o.Describe, "deployment-a/") {
		t.Errorf("Describe = %q; want the bucket and prefix named", o.Describe)
	}
}

func TestMisconfigurationStopsTheStart(t *testing.T) {
	srv := objstoretest.S3(t)
	env := func(k string) (string, bool) { v, ok := srv.Env()[k]; return v, ok }
	for _, tc := range []struct {
		name string
		cfg  backends.Config
		want string
	}{
		{"endpoint without a bucket", backends.Config{S3Endpoint: srv.Endpoint}, "need --s3-bucket"},
		{"no such bucket", backends.Config{S3Endpoint: srv.Endpoint, S3Bucket: srv.Bucket + "-missing", Env: env}, "does not exist"},
		{"wrong credentials", backends.Config{S3Endpoint: srv.Endpoint, S3Bucket: srv.Bucket,
			Env: func(k string) (string, bool) {
				return map[string]string{"AWS_ACCESS_KEY_ID": "nobody", "AWS_SECRET_ACCESS_KEY": "wrong"}[k], true
			}}, "cannot reach bucket"},
		{"endpoint with a path", backends.Config{S3Endpoint: srv.Endpoint + "/bucket", S3Bucket: srv.Bucket, Env: env}, "no path"},
		{"prefix without its slash", backends.Config{S3Endpoint: srv.Endpoint, S3Bucket: srv.Bucket, S3Prefix: "atrium", Env: env}, "ending in '/'"},
	} {
		o, err := backends.Open(t.Context(), tc.cfg)
		if err == nil {
			o.Close()
			t.Errorf("%s: opened; want an error saying %q", tc.name, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestFilesOutliveTheProcessWithADatabase: with a database, a temporary
// directory is refused (the records would outlive the files); a directory
// or a bucket is taken, and without a database the temporary one is too.
func TestFilesOutliveTheProcessWithADatabase(t *testing.T) {
	if err := (backends.Config{}).CheckKept(true); !errors.Is(err, backends.ErrFilesNotKept) ||
		!strings.Contains(err.Error(), "--data-dir") || !strings.Contains(err.Error(), "--s3-bucket") {
		t.Fatalf("no place for files with a database: %v; want ErrFilesNotKept naming --data-dir and --s3-bucket", err)
	}
	for _, c := range []backends.Config{{DataDir: t.TempDir()}, {S3Bucket: "atrium"}} {
		if err := c.CheckKept(true); err != nil {
			t.Errorf("%+v with a database: %v; want it taken", c, err)
		}
	}
	if err := (backends.Config{}).CheckKept(false); err != nil {
		t.Errorf("no place for files on the memory store: %v; want a temporary directory taken", err)
	}
}
