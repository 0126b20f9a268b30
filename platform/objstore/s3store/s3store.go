package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/atrium-hq/atrium/platform/objstore"
)

const (
	// DefaultPartSize is the part size of a Put of unknown size: S3's
	// smallest part (5 MiB) would do, but every part is a round trip.
	DefaultPartSize = 8 << 20
	// MinPartSize is the smallest part S3 accepts (but for the last).
	MinPartSize = 5 << 20
	// maxSinglePut is the largest object one PUT may carry (S3: 5 GiB).
	maxSinglePut = 5 << 30
)

// Config locates the bucket.
type Config struct {
	// Endpoint is the service's URL: https://s3.us-east-1.amazonaws.com,
	// https://<account>.r2.cloudflarestorage.com, https://storage.googleapis.com,
	// http://127.0.0.1:7070. http is for a local server only.
	Endpoint string
	Bucket   string
	// Region is the bucket's region (us-east-1 unless set; R2 takes auto).
	Region string
	// Prefix starts every key, so that deployments can share a bucket
	// ("atrium/", with its slash).
	Prefix string
	// Credentials signs the requests: the standard AWS credential
	// variables, files and roles (Credentials builds them).
	Credentials *credentials.Credentials
	// PartSize is the part of a Put of unknown size held in memory;
	// 0 means DefaultPartSize, at least MinPartSize.
	PartSize int64
}

// Credentials returns the credentials of the standard AWS chain, as every
// AWS tool reads them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN from env (the process environment, or what a command
// was given instead; nil means the process's), else the shared
// credentials file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE), else a
// role: web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, as on
// EKS), the ECS task role, the EC2 instance's.
func Credentials(env func(string) (string, bool)) *credentials.Credentials {
	if env == nil {
		env = lookupProcessEnv
	}
	get := func(k string) string { v, _ := env(k); return v }
	if id, secret := get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"); id != "" || secret != "" {
		return credentials.NewStaticV4(id, secret, get("AWS_SESSION_TOKEN"))
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
}

var lookupProcessEnv = os.LookupEnv

// Store keeps objects in an S3 bucket.
type Store struct {
	core   minio.Core
	bucket string
	prefix string
	part   int64
	// parts are the buffers of Puts of unknown size.
	parts sync.Pool
}

var _ objstore.Store = (*Store)(nil)

// New returns a store on cfg's bucket after checking, within ctx, that the
// bucket exists and the credentials may reach it: a deployment configured
// wrongly stops at start with the reason, not at its first upload.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3store: the bucket (--s3-bucket) is required")
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("s3store: the endpoint (--s3-endpoint) must be an http or https URL with a host and no path, such as https://s3.us-east-1.amazonaws.com; got %q", cfg.Endpoint)
	}
	if cfg.Prefix != "" {
		if err := objstore.CheckKey(strings.TrimSuffix(cfg.Prefix, "/")); err != nil || !strings.HasSuffix(cfg.Prefix, "/") {
			return nil, fmt.Errorf("s3store: the prefix (--s3-prefix) must be key segments ending in '/', such as atrium/; got %q", cfg.Prefix)
		}
	}
	part := cfg.PartSize
	if part == 0 {
		part = DefaultPartSize
	}
	if part < MinPartSize || part > maxSinglePut {
		return nil, fmt.Errorf("s3store: the part size must be from %d to %d bytes; got %d", MinPartSize, maxSinglePut, part)
	}
	creds := cfg.Credentials
	if creds == nil {
		creds = Credentials(nil)
	}
	client, err := minio.New(u.Host, &minio.Options{Creds: creds, Secure: u.Scheme == "https", Region: cfg.Region})
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	switch {
	case err != nil:
		return nil, fmt.Errorf("s3store: cannot reach bucket %q at %s (is the endpoint right, and may these credentials read it?): %w", cfg.Bucket, cfg.Endpoint, err)
	case !ok:
		return nil, fmt.Errorf("s3store: bucket %q does not exist at %s; create it first", cfg.Bucket, cfg.Endpoint)
	}
	s := &Store{core: minio.Core{Client: client}, bucket: cfg.Bucket, prefix: cfg.Prefix, part: part}
	s.parts.New = func() any { b := make([]byte, part); return &b }
	return s, nil
}

// Put implements objstore.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := objstore.CheckKey(key); err != nil {
		return err
	}
	if size > maxSinglePut {
		return fmt.Errorf("s3store: put %s: %d bytes is more than one PUT carries (%d)", key, size, int64(maxSinglePut))
	}
	src := objstore.NewSource(ctx, r, size)
	opts := minio.PutObjectOptions{ContentType: contentType, DisableMultipart: true}
	var err error
	if size >= 0 {
		_, err = s.core.Client.PutObject(ctx, s.bucket, s.prefix+key, src, size, opts)
	} else {
		err = s.putUnknown(ctx, s.prefix+key, src, opts)
	}
	if err = src.Finish(err); err != nil {
		if src.Err() != nil {
			return err // the caller's reader, as it failed
		}
		return fmt.Errorf("s3store: put %s: %w", key, err)
	}
	return nil
}

// putUnknown stores an object whose size shows only at its end: one PUT
// if it fits in a part, a multipart upload otherwise.
func (s *Store) putUnknown(ctx context.Context, object string, src io.Reader, opts minio.PutObjectOptions) (err error) {
	bp := s.parts.Get().(*[]byte) //nolint:errcheck // the pool holds only these
	defer s.parts.Put(bp)
	buf := *bp
	n, err := io.ReadFull(src, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		_, err = s.core.Client.PutObject(ctx, s.bucket, object, bytes.NewReader(buf[:n]), int64(n), opts)
		return err
	}
	if err != nil {
		return err
	}
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, object, opts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// Uploaded parts are billed until aborted.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = s.core.AbortMultipartUpload(actx, s.bucket, object, id)
		}
	}()
	var parts []minio.CompletePart
	for number := 1; ; number++ {
		p, err := s.core.PutObjectPart(ctx, s.bucket, object, id, number, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return err
		}
		parts = append(parts, minio.CompletePart{PartNumber: number, ETag: p.ETag})
		n, err = io.ReadFull(src, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
	}
	_, err = s.core.CompleteMultipartUpload(ctx, s.bucket, object, id, parts, opts)
	return err
}

// Open implements objstore.Store. It sends the GET at once: its answer
// says whether the object exists, its size, time and version, and its body
// is what a whole read consumes. A read from elsewhere (a Range request)
// costs a second, ranged GET, made only if the object is still the version
// the first one found (If-Match), so that a read never mixes two versions.
func (s *Store) Open(ctx context.Context, key string) (objstore.Object, error) {
	if err := objstore.CheckKey(key); err != nil {
		return nil, err
	}
	body, info, _, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("%w: %s", objstore.ErrNotFound, key)
		}
		return nil, fmt.Errorf("s3store: open %s: %w", key, err)
	}
	return &object{s: s, ctx: ctx, key: s.prefix + key, etag: info.ETag, size: info.Size, mod: info.LastModified, body: body}, nil
}

// object reads an S3 object. Seeks only move where the next Read reads:
// http.ServeContent seeks to the end and back to learn the size, which
// must not cost a request.
type object struct {
	s         *Store
	ctx       context.Context
	key, etag string
	size      int64
	mod       time.Time
	body      io.ReadCloser // reads from at; nil once closed
	pos, at   int64         // where the next Read reads; where body reads
}

func (b *object) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.body == nil || b.pos != b.at {
		if b.body != nil {
			_ = b.body.Close()
			b.body = nil
		}
		opts := minio.GetObjectOptions{}
		if err := opts.SetRange(b.pos, 0); err != nil {
			return 0, err
		}
		if b.etag != "" {
			if err := opts.SetMatchETag(b.etag); err != nil {
				return 0, err
			}
		}
		body, _, _, err := b.s.core.GetObject(b.ctx, b.s.bucket, b.key, opts)
		if err != nil {
			return 0, fmt.Errorf("s3store: read %s from byte %d: %w", b.key, b.pos, err)
		}
		b.body, b.at = body, b.pos
	}
	n, err := b.body.Read(p)
	b.pos += int64(n)
	b.at += int64(n)
	if errors.Is(err, io.EOF) && b.pos < b.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *object) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, errors.New("s3store: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("s3store: negative position")
	}
	b.pos = offset
	return offset, nil
}

func (b *object) Close() error {
	if b.body == nil {
		return nil
	}
	err := b.body.Close()
	b.body = nil
	b.pos, b.at = b.size, -1 // a Read after Close reads nothing
	return err
}

func (b *object) Size() int64        { return b.size }
func (b *object) ModTime() time.Time { return b.mod }

// Delete implements objstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := objstore.CheckKey(key); err != nil {
		return err
	}
	err := s.core.Client.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return fmt.Errorf("s3store: delete %s: %w", key, err)
	}
	return nil
}
