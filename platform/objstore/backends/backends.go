package backends

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/objstore/localdir"
	"github.com/atrium-hq/atrium/platform/objstore/s3store"
)

// Config is where a process keeps its objects.
type Config struct {
	// DataDir is the local directory (objects under DataDir/objects);
	// empty means a temporary directory removed at exit. Ignored when
	// S3Bucket is set.
	DataDir string
	// The S3-compatible bucket, used when S3Bucket is set; the credentials
	// are the standard AWS ones (s3store.Credentials), read through Env.
	S3Endpoint, S3Bucket, S3Region, S3Prefix string
	// Env looks up the AWS credential variables; nil is the process
	// environment. Commands pass what they read ATRIUM_* variables from.
	Env func(string) (string, bool)
}

// DefaultS3Endpoint is AWS S3's endpoint, for a bucket without one.
const DefaultS3Endpoint = "https://s3.amazonaws.com"

// BindFlags binds the settings to fs. dataDirUsage says what the command
// keeps there.
func (c *Config) BindFlags(fs *flag.FlagSet, dataDirUsage string) {
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, dataDirUsage+"; empty: a temporary directory removed at exit, refused where records are kept in a database (they would outlive their files). Not used with --s3-bucket")
	fs.StringVar(&c.S3Bucket, "s3-bucket", c.S3Bucket, "S3 bucket to keep files in instead of --data-dir (AWS S3 or any S3-compatible store); credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), the shared credentials file or the pod's or instance's role")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", c.S3Endpoint, "URL of the S3-compatible service (https://s3.eu-west-1.amazonaws.com, https://<account>.r2.cloudflarestorage.com, https://storage.googleapis.com); empty: "+DefaultS3Endpoint)
	fs.StringVar(&c.S3Region, "s3-region", c.S3Region, "region of --s3-bucket; empty: us-east-1 (R2: auto)")
	fs.StringVar(&c.S3Prefix, "s3-prefix", c.S3Prefix, "prefix of every key in --s3-bucket, ending in / (atrium/), so that deployments can share a bucket")
}

// ErrFilesNotKept is CheckKept's refusal.
var ErrFilesNotKept = errors.New("with --database-url the records of assets and generated images are kept across restarts, so their files must be too: " +
	"set --data-dir to a directory that outlives the process (shared with the gateway, which serves the files) or --s3-bucket; " +
	"only without a database (the in-memory store) are files kept in a temporary directory")

// CheckKept refuses, with ErrFilesNotKept, a configuration that would keep
// the files in a temporary directory while their records are in a
// database: the records would outlive the files, and every asset would
// answer 404 after a restart. withDatabase says whether the process keeps
// its records in PostgreSQL.
func (c Config) CheckKept(withDatabase bool) error {
	if withDatabase && c.DataDir == "" && c.S3Bucket == "" {
		return ErrFilesNotKept
	}
	return nil
}

// Opened is an open object store and what it is.
type Opened struct {
	objstore.Store
	// Describe says where the objects are, for the start-up log.
	Describe string
	// Temporary is set when the objects are in a temporary directory that
	// Close removes: they do not outlive the process.
	Temporary bool
	close     func()
}

// Close releases the store: it removes a temporary directory.
func (o *Opened) Close() {
	if o.close != nil {
		o.close()
		o.close = nil
	}
}

// openTimeout bounds the check that the bucket can be reached.
const openTimeout = 10 * time.Second

// Open opens the store c describes.
func Open(ctx context.Context, c Config) (*Opened, error) {
	if c.S3Bucket != "" {
		endpoint := c.S3Endpoint
		if endpoint == "" {
			endpoint = DefaultS3Endpoint
		}
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		s, err := s3store.New(ctx, s3store.Config{Endpoint: endpoint, Bucket: c.S3Bucket, Region: c.S3Region, Prefix: c.S3Prefix,
			Credentials: s3store.Credentials(c.Env)})
		if err != nil {
			return nil, err
		}
		return &Opened{Store: s, Describe: fmt.Sprintf("s3 bucket %s at %s%s", c.S3Bucket, endpoint, prefixNote(c.S3Prefix))}, nil
	}
	if c.S3Endpoint != "" || c.S3Prefix != "" || c.S3Region != "" {
		return nil, errors.New("--s3-endpoint, --s3-region and --s3-prefix need --s3-bucket: set the bucket, or leave them empty to keep files in --data-dir")
	}
	dir, temporary, cleanup := c.DataDir, false, func() {}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "atrium-data-"); err != nil {
			return nil, err
		}
		temporary, cleanup = true, func() { _ = os.RemoveAll(dir) }
	}
	s, err := localdir.New(filepath.Join(dir, "objects"))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return &Opened{Store: s, Describe: "directory " + s.Dir(), Temporary: temporary, close: cleanup}, nil
}

func prefixNote(p string) string {
	if p == "" {
		return ""
	}
	return " under " + p
}
