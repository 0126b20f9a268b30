package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/audit"
	"github.com/atrium-hq/atrium/platform/events"
	"github.com/atrium-hq/atrium/platform/objstore"
	"github.com/atrium-hq/atrium/platform/outbox"
	"github.com/atrium-hq/atrium/platform/pagination"
	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/platform/store"
	"github.com/atrium-hq/atrium/platform/value"
	"github.com/atrium-hq/atrium/services/collections/internal/app/filetype"
)

// Asset is a file of a site: its metadata here, its bytes on the object
// store under ObjectKey, served at a URL whose path is its Name.
type Asset struct {
	ID     string
	SiteID string
	// Name is the file's capability name (publicfile.NewName): the URL's
	// unguessable part.
	Name        string
	Filename    string
	ContentType string
	Size        int64
	// Width and Height are set for images with a size of their own.
	Width, Height *int
	Alt           string
	SHA256        string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ObjectKey is where the asset's bytes are on the object store.
func (a Asset) ObjectKey() string {
	k, _ := publicfile.AssetKey(a.Name)
	return k
}

// AssetPatch is a change to an asset's metadata; nil fields are kept.
type AssetPatch struct {
	Alt, Filename *string
	At            time.Time
}

// AssetConfig is what a deployment allows of uploads.
type AssetConfig struct {
	// MaxBytes is the largest file (--max-asset-bytes).
	MaxBytes int64
	// AllowSVG admits SVG files (--allow-svg-assets).
	AllowSVG bool
}

// Asset limits and defaults.
const (
	// DefaultMaxAssetBytes is --max-asset-bytes unless set: 25 MiB.
	DefaultMaxAssetBytes = 25 << 20
	// LimitMaxAssetBytes is the most --max-asset-bytes may be: sizes are
	// 32-bit numbers in the API (no 64-bit integers in JSON).
	LimitMaxAssetBytes = 1<<31 - 1
	// MaxFilename is the longest file name, in characters.
	MaxFilename = 255
	// MaxAlt is the longest alt text, in characters.
	MaxAlt = 1000
)

// Validate checks the configuration.
func (c AssetConfig) Validate() error {
	if c.MaxBytes < 1 || c.MaxBytes > LimitMaxAssetBytes {
		return fmt.Errorf("--max-asset-bytes must be from 1 to %d (2 GiB - 1); got %d", int64(LimitMaxAssetBytes), c.MaxBytes)
	}
	return nil
}

// assetPolicy is the asset list's limit rule, the item list's.
var assetPolicy = itemPolicy

// Assets is the assets use cases.
type Assets struct {
	store   AssetStore
	objects objstore.Store
	clock   Clock
	cfg     AssetConfig
	logger  *slog.Logger
}

// NewAssets returns the assets use cases, keeping files on objects.
func NewAssets(store AssetStore, objects objstore.Store, clock Clock, cfg AssetConfig, logger *slog.Logger) *Assets {
	return &Assets{store: store, objects: objects, clock: clock, cfg: cfg, logger: logger}
}

// Allowed lists the kinds this deployment accepts, for messages.
func (u *Assets) Allowed() []filetype.Type {
	if u.cfg.AllowSVG {
		return filetype.All
	}
	return filetype.All[:len(filetype.All)-1]
}

func (u *Assets) allowedList() string {
	var names []string
	for _, t := range u.Allowed() {
		names = append(names, t.Name+" ("+t.MIME+")")
	}
	return strings.Join(names, ", ")
}

// NewAsset is an upload: what the client said, then its file.
type NewAsset struct {
	Filename string
	// DeclaredType is the Content-Type the client gave the file.
	DeclaredType string
	// Size is the file's length when the client said it, -1 otherwise.
	Size int64
	Alt  *string
	// Body yields the file.
	Body io.Reader
	// Trailer, called once Body has ended, returns the fields the client
	// gave after the file (an alt part after the file part), if any.
	Trailer func() (alt *string)
	// Accepted, when set, is called once the upload's header has passed
	// every check that needs no file, before Body is read: the transport
	// tells the client to send the file.
	Accepted func()
}

// checkFilename validates a file name: the name people see and save the
// file as, so no path (slashes), nothing invisible.
func checkFilename(field, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !value.Text(name, MaxFilename, value.OneLine) || value.Blank(name) {
		return apperr.Invalid("%s must be a file name of 1 to %d characters without slashes or control characters, such as hero.jpg; got %s",
			field, MaxFilename, value.Describe(name))
	}
	return nil
}

func checkAlt(field string, alt *string) (string, error) {
	if alt == nil {
		return "", nil
	}
	if !value.Text(*alt, MaxAlt, value.OneLine) {
		return "", apperr.Invalid("%s must be text of at most %d characters on one line, without control characters; got %s", field, MaxAlt, value.Describe(*alt))
	}
	return strings.TrimSpace(*alt), nil
}

func (u *Assets) tooLarge() error {
	return apperr.TooLarge("the file is larger than this deployment's limit of %d bytes (%s); upload a smaller file", u.cfg.MaxBytes, mib(u.cfg.MaxBytes))
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Upload checks an upload and streams its file to the object store as it
// arrives, never holding it whole: its kind is read from its first bytes
// (and must be the kind it was declared, and one this deployment allows),
// its SHA-256 and size counted on the way (413 past the limit), an
// image's size read from its header as it passes. Only then is the asset
// written, with its asset.created event, in one transaction; an upload
// that fails anywhere leaves no file and no asset.
func (u *Assets) Upload(ctx context.Context, siteID string, in NewAsset) (Asset, error) {
	if err := checkFilename("filename", in.Filename); err != nil {
		return Asset{}, err
	}
	alt, err := checkAlt("alt", in.Alt)
	if err != nil {
		return Asset{}, err
	}
	declared, ok := filetype.Declared(in.DeclaredType)
	if !ok {
		return Asset{}, apperr.Invalid("the Content-Type of the file, %q, is not a media type; send the file's type (%s) or none", in.DeclaredType, u.allowedList())
	}
	if declared != "" {
		t, known := filetype.ByMIME(declared)
		if !known || (t == filetype.SVG && !u.cfg.AllowSVG) {
			return Asset{}, u.refuseKind(declared)
		}
	}
	if in.Size > u.cfg.MaxBytes {
		return Asset{}, u.tooLarge()
	}
	if in.Size == 0 {
		return Asset{}, apperr.Invalid("the file is empty; upload a file of at least one byte")
	}
	if in.Accepted != nil {
		in.Accepted()
	}

	// The first bytes say what the file is.
	head := make([]byte, filetype.SniffLen)
	n, err := io.ReadFull(in.Body, head)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		head = head[:n]
	case err != nil:
		return Asset{}, err
	}
	if len(head) == 0 {
		return Asset{}, apperr.Invalid("the file is empty; upload a file of at least one byte")
	}
	kind, ok, other := filetype.Detect(head)
	switch {
	case !ok:
		return Asset{}, apperr.Invalid("the file's content is not a kind of file assets may be (it looks like %s); allowed: %s", other, u.allowedList())
	case kind == filetype.SVG && !u.cfg.AllowSVG:
		return Asset{}, u.refuseKind(kind.MIME)
	case declared != "" && declared != kind.MIME:
		return Asset{}, apperr.Invalid("the file was declared %s but its content is %s (%s); send the Content-Type that matches the file, or none", declared, kind.Name, kind.MIME)
	}

	now := u.clock.Now()
	a := Asset{ID: store.NewID(), SiteID: siteID, Name: publicfile.NewName(kind.Ext), Filename: in.Filename, ContentType: kind.MIME,
		Alt: alt, CreatedAt: now, UpdatedAt: now}
	src := &uploadReader{r: io.MultiReader(bytes.NewReader(head), in.Body), max: u.cfg.MaxBytes, hash: sha256.New(), tooLarge: u.tooLarge, kind: kind.Name}
	var probe *filetype.Probe
	if kind.Image {
		probe = filetype.NewProbe(kind)
		src.probe = probe
	}
	err = u.objects.Put(ctx, a.ObjectKey(), src, in.Size, kind.MIME)
	if err != nil {
		if probe != nil {
			probe.Abort()
		}
		var ae *apperr.Error
		if errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return Asset{}, err
		}
		if errors.Is(err, objstore.ErrSizeMismatch) {
			return Asset{}, apperr.Invalid("the file's bytes did not match its declared length of %d bytes", in.Size)
		}
		if src.readErr != nil {
			return Asset{}, src.readErr // the client's stream, as it failed
		}
		return Asset{}, apperr.Unavailable(err, "the file could not be stored; retry the upload")
	}
	a.Size, a.SHA256 = src.n, hex.EncodeToString(src.hash.Sum(nil))
	if probe != nil {
		size, err := probe.Result()
		switch {
		case errors.Is(err, filetype.ErrNoSize):
		case err != nil:
			u.forget(ctx, a)
			return Asset{}, apperr.Invalid("the file is not a valid %s: %v", kind.Name, err)
		default:
			a.Width, a.Height = &size.Width, &size.Height
		}
	}
	if in.Trailer != nil {
		if late := in.Trailer(); late != nil {
			if in.Alt != nil {
				u.forget(ctx, a)
				return Asset{}, apperr.Invalid("alt was given twice; give it once")
			}
			if a.Alt, err = checkAlt("alt", late); err != nil {
				u.forget(ctx, a)
				return Asset{}, err
			}
		}
	}
	err = u.store.InTx(ctx, func(tx AssetTx) error {
		e, err := assetEvent(a, events.AssetCreated)
		if err != nil {
			return err
		}
		if err := tx.InsertAsset(ctx, a, e); err != nil {
			return err
		}
		fields := []string{"filename", "content_type", "size"}
		if a.Alt != "" {
			fields = append(fields, "alt")
		}
		return record(ctx, tx, audit.Change{Action: "asset.created", ResourceType: "asset", ResourceID: a.ID, Fields: fields}, a.SiteID, "", a.UpdatedAt)
	})
	if err != nil {
		u.forget(ctx, a)
		return Asset{}, err
	}
	return a, nil
}

func (u *Assets) refuseKind(mimeType string) error {
	if mimeType == filetype.SVG.MIME {
		return apperr.Invalid("SVG files are not allowed on this deployment: SVG can carry scripts, and an operator admits it with --allow-svg-assets (SVG is then served with a Content-Security-Policy that blocks them); allowed: %s", u.allowedList())
	}
	return apperr.Invalid("files of type %s are not allowed; allowed: %s", mimeType, u.allowedList())
}

// forget removes the file of an upload that will not become an asset. A
// failure leaves an object nobody can name (its capability was never
// given out), which is logged.
func (u *Assets) forget(ctx context.Context, a Asset) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := u.objects.Delete(ctx, a.ObjectKey()); err != nil {
		u.logger.WarnContext(ctx, "the file of a failed upload could not be removed from the object store", "key", a.ObjectKey(), "error", err)
	}
}

// uploadReader is the file on its way to the store: counted against the
// limit, hashed, and shown to the image probe.
type uploadReader struct {
	r        io.Reader
	max      int64
	n        int64
	hash     hash.Hash
	probe    *filetype.Probe
	tooLarge func() error
	kind     string
	readErr  error
}

func (r *uploadReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.n += int64(n)
		if r.n > r.max {
			return 0, r.tooLarge()
		}
		r.hash.Write(p[:n])
		if r.probe != nil {
			if _, perr := r.probe.Write(p[:n]); perr != nil {
				return 0, apperr.Invalid("the file is not a valid %s: %v", r.kind, perr)
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.readErr = err
	}
	return n, err
}

// Assets lists a page of a site's assets, newest first.
func (u *Assets) List(ctx context.Context, siteID string, limit, offset *int32) ([]Asset, pagination.Page, error) {
	page, err := assetPolicy.Parse(limit, offset)
	if err != nil {
		return nil, page, err
	}
	as, err := u.store.Assets(ctx, siteID, page)
	return as, page, err
}

func assetNotFound(id string) error { return value.NotFound("asset", id) }

// Get returns one of a site's assets; another site's is not found.
func (u *Assets) Get(ctx context.Context, siteID, id string) (Asset, error) {
	canonical, err := value.PathID("asset", id)
	if err != nil {
		return Asset{}, err
	}
	a, err := u.store.Asset(ctx, siteID, canonical)
	if errors.Is(err, ErrNotFound) {
		return Asset{}, assetNotFound(id)
	}
	return a, err
}

// AssetChange is the input of Update.
type AssetChange struct {
	Alt, Filename *string
}

// Update changes an asset's alt text or file name, with its asset.updated
// event.
func (u *Assets) Update(ctx context.Context, siteID, id string, ch AssetChange) (Asset, error) {
	canonical, err := value.PathID("asset", id)
	if err != nil {
		return Asset{}, err
	}
	if ch.Alt == nil && ch.Filename == nil {
		return Asset{}, apperr.Invalid("nothing to change: give alt, filename or both")
	}
	p := AssetPatch{At: u.clock.Now()}
	if ch.Alt != nil {
		alt, err := checkAlt("alt", ch.Alt)
		if err != nil {
			return Asset{}, err
		}
		p.Alt = &alt
	}
	if ch.Filename != nil {
		if err := checkFilename("filename", *ch.Filename); err != nil {
			return Asset{}, err
		}
		p.Filename = ch.Filename
	}
	var a Asset
	err = u.store.InTx(ctx, func(tx AssetTx) error {
		a, err = tx.UpdateAsset(ctx, siteID, canonical, p)
		if errors.Is(err, ErrNotFound) {
			return assetNotFound(id)
		} else if err != nil {
			return err
		}
		e, err := assetEvent(a, events.AssetUpdated)
		if err != nil {
			return err
		}
		if err := tx.Enqueue(ctx, e); err != nil {
			return err
		}
		var fields []string
		if ch.Alt != nil {
			fields = append(fields, "alt")
		}
		if ch.Filename != nil {
			fields = append(fields, "filename")
		}
		return record(ctx, tx, audit.Change{Action: "asset.updated", ResourceType: "asset", ResourceID: a.ID, Fields: fields}, siteID, "", p.At)
	})
	return a, err
}

// Delete deletes an asset, with its asset.deleted event, then its file.
// Items that hold its id keep it (as references do: docs/collections.md).
// Browsers and CDNs may keep copies of the file: it was served as
// immutable for a year.
func (u *Assets) Delete(ctx context.Context, siteID, id string) error {
	canonical, err := value.PathID("asset", id)
	if err != nil {
		return err
	}
	var a Asset
	err = u.store.InTx(ctx, func(tx AssetTx) error {
		a, err = tx.DeleteAsset(ctx, siteID, canonical)
		if errors.Is(err, ErrNotFound) {
			return assetNotFound(id)
		} else if err != nil {
			return err
		}
		a.UpdatedAt = u.clock.Now()
		e, err := assetEvent(a, events.AssetDeleted)
		if err != nil {
			return err
		}
		if err := tx.Enqueue(ctx, e); err != nil {
			return err
		}
		return record(ctx, tx, audit.Change{Action: "asset.deleted", ResourceType: "asset", ResourceID: a.ID}, siteID, "", a.UpdatedAt)
	})
	if err != nil {
		return err
	}
	u.forget(ctx, a)
	return nil
}

// assetEvent is the event saying that a was created, updated or deleted
// (what: events.AssetCreated, ...).
func assetEvent(a Asset, what *events.Def[events.AssetEvent]) (outbox.Event, error) {
	return outbox.Of(what, events.AssetEvent{
		ID: a.ID, SiteID: a.SiteID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256, At: a.UpdatedAt,
	}, a.UpdatedAt)
}
