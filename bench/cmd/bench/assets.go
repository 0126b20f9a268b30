package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The assets' routes of bench collections: uploads of a 1 MiB and a 10 MiB
// file (raw bodies, the JPEG's type and ?filename=), and downloads of the
// same two files by their URLs without a key, each against the files floor
// (bench/floor/files.go): uploads streamed into a directory with the same
// durability, downloads by http.FileServer from the same bytes.

// assetRoutes are the asset route names, in the order they run.
var assetRoutes = []string{"upload1m", "upload10m", "download1m", "download10m"}

func isAssetRoute(name string) bool {
	for _, r := range assetRoutes {
		if r == name {
			return true
		}
	}
	return false
}

// assetSizes are the files' sizes by route.
var assetSizes = map[string]int{"upload1m": 1 << 20, "upload10m": 10 << 20, "download1m": 1 << 20, "download10m": 10 << 20}

// assetFile writes a file of n bytes that Atrium takes as a JPEG of
// 256 by 256 (a real JPEG, then incompressible bytes after its end, which
// readers ignore) and returns its path.
func assetFile(dir string, n int) (string, error) {
	m := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for x := range 256 {
		for y := range 256 {
			m.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: 128, A: 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, nil); err != nil {
		return "", err
	}
	rest := make([]byte, n-b.Len())
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(rest)
	b.Write(rest)
	path := filepath.Join(dir, fmt.Sprintf("asset-%d.jpg", n))
	return path, os.WriteFile(path, b.Bytes(), 0o600)
}

// assetBench is the state of the asset routes in one store's run.
type assetBench struct {
	tmp        string
	floorDir   string
	atriumData string // Atrium's --data-dir
	floorAddr  string
	floorPid   int
	files      map[int]string // size: the file's path
	urls       map[string]string
}

// startFilesFloor starts the files floor on cpu, serving dir.
func startFilesFloor(ctx context.Context, dir, cpu string) (*exec.Cmd, string, error) {
	return startFloorWith(ctx, cpu, "--files", dir)
}

// assetRoute is the route of name for the floor and for Atrium; downloads
// need the asset uploaded first (prepareDownloads).
func (a *assetBench) assetRoute(name string) map[string]route {
	size := assetSizes[name]
	if strings.HasPrefix(name, "upload") {
		up := route{method: "POST", path: "/api/public/v1/assets?filename=bench.jpg", bodyFile: a.files[size], contentType: "image/jpeg"}
		return map[string]route{"floor": up, "atrium": up}
	}
	return map[string]route{
		"floor":  {method: "GET", path: "/files/" + filepath.Base(a.files[size])},
		"atrium": {method: "GET", path: a.urls[name]},
	}
}

// prepareDownloads uploads the two files through Atrium's API, checks that
// Atrium serves them byte for byte, and puts the same bytes where the
// floor's http.FileServer serves them.
func (a *assetBench) prepareDownloads(ctx context.Context, atrium *atriumProc, key string) error {
	a.urls = map[string]string{}
	for _, name := range []string{"download1m", "download10m"} {
		path := a.files[assetSizes[name]]
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, "POST", "http://"+atrium.api+"/api/public/v1/assets?filename="+filepath.Base(path), bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "image/jpeg")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		var out struct{ Asset struct{ URL string } }
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("upload %s: %d: %w", name, resp.StatusCode, err)
		}
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("upload %s: status %d", name, resp.StatusCode)
		}
		u := strings.TrimPrefix(out.Asset.URL, "http://"+atrium.api)
		got, err := http.Get(out.Asset.URL)
		if err != nil {
			return err
		}
		served, err := io.ReadAll(got.Body)
		got.Body.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", out.Asset.URL, err)
		}
		if !bytes.Equal(served, data) {
			return fmt.Errorf("%s is not served as uploaded (%d bytes)", out.Asset.URL, len(served))
		}
		a.urls[name] = u
		if err := os.WriteFile(filepath.Join(a.floorDir, filepath.Base(path)), data, 0o600); err != nil { //nolint:gosec // G703: the bench's own file, named by assetFile
			return err
		}
	}
	return nil
}

// cleanUploads removes the files the upload rounds wrote, so that a run of
// 10 MiB uploads does not fill the disk: Atrium's assets (their records
// stay: the store is not what uploads measure) and the floor's uploads.
func (a *assetBench) cleanUploads() error {
	if err := os.RemoveAll(filepath.Join(a.atriumData, "objects", "assets")); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(a.floorDir, "uploads"))
}

// megabytesPerSecond prints each server's transfer rate on a route: its
// requests per second times the file's size.
func megabytesPerSecond(name string, results map[string][]loadResult) {
	size := float64(assetSizes[name]) / (1 << 20)
	rate := map[string]float64{}
	for _, server := range []string{"floor", "atrium"} {
		rs := results[server]
		sum := 0.0
		for _, r := range rs {
			sum += r.RPS
		}
		rate[server] = sum / float64(len(rs)) * size
	}
	what := "uploaded"
	if strings.HasPrefix(name, "download") {
		what = "served"
	}
	fmt.Printf("  MiB/s %s: Atrium %.0f, floor %.0f (Atrium / floor %.2f)\n", what, rate["atrium"], rate["floor"], rate["atrium"]/rate["floor"])
}
