package floor

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// Files is the floor of the assets' files: downloads by http.FileServer
// from a directory (open, stat, sendfile: what serving a file costs), and
// uploads streamed into it the way a careful server would (a temporary
// file, the SHA-256 on the way, fsync, rename), with no type check, no
// probe, no record and no gRPC hop.
type Files struct {
	dir string
}

// NewFiles returns the floor serving dir (downloads from dir, uploads into
// dir/uploads).
func NewFiles(dir string) *Files { return &Files{dir: dir} }

// Handler routes the floor's endpoints.
func (f *Files) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /files/", http.StripPrefix("/files/", http.FileServer(http.Dir(f.dir))))
	mux.HandleFunc("POST /api/public/v1/assets", f.upload)
	return mux
}

func (f *Files) upload(w http.ResponseWriter, r *http.Request) {
	dir := filepath.Join(f.dir, "uploads")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var name [16]byte
	_, _ = rand.Read(name[:])
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, hex.EncodeToString(name[:])))
	}
	if err == nil {
		// As durable as Atrium's local directory: the rename reaches the disk.
		var d *os.File
		if d, err = os.Open(dir); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"size": n, "sha256": hex.EncodeToString(h.Sum(nil))})
}
