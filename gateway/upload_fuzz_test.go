package gateway

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// FuzzUploadParse sends the upload parser any Content-Type, query and
// body. Whatever it makes of them, it must not panic, and what it accepts
// must be able to travel to the collections service: the header and the
// late alt marshal as protobuf (text that cannot was a 500), and every
// refusal is a 400 that says something. The seeds are the forms clients
// send and the ones that broke (make test runs them; make fuzz explores).
func FuzzUploadParse(f *testing.F) {
	form := func(parts ...[3]string) (string, []byte) { // name, filename, content
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.SetBoundary("BOUNDARY")
		for _, p := range parts {
			h := textproto.MIMEHeader{}
			disp := `form-data; name="` + p[0] + `"`
			if p[1] != "" {
				disp += `; filename="` + p[1] + `"`
			}
			h.Set("Content-Disposition", disp)
			w, _ := mw.CreatePart(h)
			_, _ = w.Write([]byte(p[2]))
		}
		_ = mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	for _, seed := range []struct {
		ct, query string
		body      []byte
	}{
		{"image/png", "filename=a.png", []byte(png)},
		{"image/png", "filename=a.png&alt=A+loaf", []byte(png)},
		{"image/png", "filename=caf%E9.png", []byte(png)},
		{"image/png", "filename=a.png&alt=%FF", []byte(png)},
		{"image/png\xff", "filename=a.png", []byte(png)},
		{"image/png", "filename=a.png&filename=b.png", nil},
		{"image/png", "title=x", nil},
		{"", "", nil},
		{"multipart/form-data", "", nil},
		{"multipart/form-data; boundary=BOUNDARY", "", []byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\xff.png\"\r\nContent-Type: image/png\r\n\r\nxx\r\n--BOUNDARY--\r\n")},
		{"multipart/form-data; boundary=BOUNDARY", "", []byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/\xffpng\r\n\r\nxx\r\n--BOUNDARY--\r\n")},
		{"multipart/form-data; boundary=BOUNDARY", "", []byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''caf%C3%A9.png\r\n\r\nxx\r\n--BOUNDARY--\r\n")},
		{"multipart/form-data; boundary=BOUNDARY", "", []byte("--BOUNDARY\r\nno header end")},
		{"multipart/form-data; boundary=BOUNDARY", "x=1", nil},
	} {
		f.Add(seed.ct, seed.query, seed.body)
	}
	for _, parts := range [][][3]string{
		{{"file", "a.png", png}},
		{{"alt", "", "The shop"}, {"file", "a.png", png}},
		{{"file", "a.png", png}, {"alt", "", "caf\xe9"}},
		{{"alt", "", "\xff"}, {"file", "a.png", png}},
		{{"file", "a.png", png}, {"file", "b.png", png}},
		{{"alt", "", "x"}, {"file", "a.png", png}, {"alt", "", "y"}},
		{{"title", "", "x"}, {"file", "a.png", png}},
		{{"alt", "", "x"}},
		{{"file", "", png}},
	} {
		ct, body := form(parts...)
		f.Add(ct, "", body)
	}
	f.Fuzz(func(t *testing.T, contentType, query string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, uploadPath, bytes.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", contentType)
		u := &upload{r: r}
		prog := &progress{r: r.Body, rc: http.NewResponseController(httptest.NewRecorder()), timeout: time.Second}
		head, file, rest, err := u.parse(prog)
		if err != nil {
			wantRefusal(t, err)
			return
		}
		if _, merr := proto.Marshal(&collectionsv1.CreateAssetRequest{Part: &collectionsv1.CreateAssetRequest_Upload{Upload: head}}); merr != nil {
			t.Fatalf("accepted a header that cannot reach the service: %v (%q)", merr, head)
		}
		if _, err := io.Copy(io.Discard, file); err != nil {
			return // a malformed form's file part: the body's failure
		}
		alt, err := rest()
		if err != nil {
			wantRefusal(t, err)
			return
		}
		if alt != nil {
			fields := &collectionsv1.CreateAssetRequest{Part: &collectionsv1.CreateAssetRequest_Fields{Fields: &collectionsv1.AssetFields{Alt: alt}}}
			if _, err := proto.Marshal(fields); err != nil {
				t.Fatalf("accepted an alt that cannot reach the service: %v (%q)", err, *alt)
			}
		}
	})
}

// wantRefusal fails unless err is a 400 with a message, or the body's own
// failure (answered 400 or 408 by bodyError).
func wantRefusal(t *testing.T, err error) {
	t.Helper()
	if s, ok := status.FromError(err); ok {
		if s.Code() != codes.InvalidArgument || s.Message() == "" {
			t.Fatalf("refusal %v; want InvalidArgument with a message", err)
		}
		return
	}
	if be := (&upload{g: &Gateway{}}).bodyError(err); status.Code(be) != codes.InvalidArgument {
		t.Fatalf("body failure %v answers %v", err, be)
	}
}
