package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/gateway/internal/rest"
	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/value"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// An upload (POST /api/public/v1/assets) is not read whole like other
// bodies (serve's readBody): the gateway reads it as it arrives, a
// multipart form or a raw file, and sends it on as the CreateAsset
// client stream, chunk by chunk, so that no process holds the file. The
// route is the proto's, so the route middleware has authenticated the key
// and applied CreateAsset's access rule before this runs; the collections
// service applies the limits (type, size: docs/assets.md).

const (
	uploadRPC  = "/atrium.collections.v1.AssetsService/CreateAsset"
	uploadPath = "/api/public/v1/assets"
	// uploadChunk is the size of the stream's messages.
	uploadChunk = 256 << 10
	// maxFieldBytes bounds a multipart form's text field (alt).
	maxFieldBytes = 8 << 10
)

// uploadFields are what the raw form's query and the multipart form's
// fields may carry besides the file.
var (
	rawParams       = []string{"filename", "alt"}
	multipartFields = []string{"file", "alt"}
)

// uploadAsset returns the upload route's handler on mux, calling client.
func (g *Gateway) uploadAsset(mux *runtime.ServeMux, client collectionsv1.AssetsServiceClient) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		u := &upload{g: g, w: w, r: r, mux: mux}
		u.run(client)
	}
}

// upload is one upload request on its way.
type upload struct {
	g   *Gateway
	w   http.ResponseWriter
	r   *http.Request
	mux *runtime.ServeMux
	// bodyDone is set once the request's body has been read to its end:
	// an answer before that closes the connection rather than read the
	// rest of a file nobody wants.
	bodyDone bool
	// body is the request's body as run reads it.
	body *progress
}

func (u *upload) fail(ctx context.Context, err error) {
	if !u.bodyDone {
		u.w.Header().Set("Connection", "close")
	}
	var he *httpError
	if errors.As(err, &he) {
		rest.WriteJSON(u.w, he.code, rest.Body{Error: he.msg})
		return
	}
	_, outbound := runtime.MarshalerForRequest(u.mux, u.r)
	runtime.HTTPError(ctx, u.mux, outbound, u.w, u.r, err)
}

func invalid(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

// progress is the body as the handler reads it, under two bounds: each
// read must bring bytes within --request-timeout (as nginx's
// client_body_timeout), so a client that stops sending is answered 408;
// and once --request-timeout has passed the body must have kept an
// average of --min-transfer-rate (a read's deadline is never later than
// start + timeout + received/rate), so a client that sends a byte now and
// then, which the first bound alone would hold forever, is answered 408
// too. An upload of n bytes therefore ends within timeout + n/rate,
// whatever the client does.
type progress struct {
	r        io.Reader
	rc       *http.ResponseController
	timeout  time.Duration
	rate     int64 // bytes a second
	start    time.Time
	received int64
	// slow is set when the deadline of the read that failed first was the
	// rate's rather than the pause's.
	slow bool
	err  error // the first failure, for the answer
}

func newProgress(r io.Reader, rc *http.ResponseController, timeout time.Duration, rate int64) *progress {
	return &progress{r: r, rc: rc, timeout: timeout, rate: rate, start: time.Now()}
}

func (p *progress) Read(b []byte) (int, error) {
	now := time.Now()
	deadline := now.Add(p.timeout)
	byRate := p.start.Add(p.timeout + time.Duration(float64(p.received)/float64(p.rate)*float64(time.Second)))
	slow := byRate.Before(deadline)
	if slow {
		deadline = byRate
	}
	_ = p.rc.SetReadDeadline(deadline)
	n, err := p.r.Read(b)
	p.received += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && p.err == nil {
		p.err, p.slow = err, slow
	}
	return n, err
}

// httpError is an answer with a status no gRPC code maps to (408).
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// bodyError is the answer to a body that failed to arrive.
func (u *upload) bodyError(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && u.body.slow:
		return &httpError{http.StatusRequestTimeout, fmt.Sprintf(
			"the upload arrived too slowly: %d bytes in %s; after the first %s (--request-timeout) an upload must average at least %d bytes a second (--min-transfer-rate); send the file again over a faster connection",
			u.body.received, time.Since(u.body.start).Round(time.Second), u.g.cfg.RequestTimeout, u.g.cfg.MinTransferRate)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &httpError{http.StatusRequestTimeout, fmt.Sprintf("the upload stopped arriving: nothing came for %s (--request-timeout); send the file again", u.g.cfg.RequestTimeout)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalid("the request body ended before it was complete")
	}
	return invalid("the request body could not be read: %v", err)
}

func (u *upload) run(client collectionsv1.AssetsServiceClient) {
	r := u.r
	ctx := r.Context()
	sctx, cancel := context.WithCancel(ctx) // the stream's: cancelled to abort it
	defer cancel()
	body := newProgress(r.Body, http.NewResponseController(u.w), u.g.cfg.RequestTimeout, u.g.cfg.MinTransferRate)
	u.body = body
	defer func() { _ = body.rc.SetReadDeadline(time.Time{}) }()

	head, file, rest, err := u.parse(body)
	if err != nil {
		if body.err != nil {
			err = u.bodyError(body.err) // the body did not arrive: that is the answer
		}
		u.fail(ctx, err)
		return
	}
	actx, err := runtime.AnnotateContext(sctx, u.mux, r, uploadRPC, runtime.WithHTTPPathPattern(uploadPath))
	if err != nil {
		u.fail(ctx, err)
		return
	}
	var header, trailer metadata.MD
	stream, err := client.CreateAsset(actx, grpc.Header(&header), grpc.Trailer(&trailer))
	if err != nil {
		u.fail(ctx, err)
		return
	}
	resp, err := u.send(stream, cancel, head, file, rest, body)
	if err != nil && body.err != nil {
		// The body did not arrive whole: whatever the stream said after
		// (cancelled, or a service refusing a cut file), that is the answer.
		err = &abortedError{u.bodyError(body.err)}
	}
	var aborted *abortedError
	if errors.As(err, &aborted) {
		// The stream was cancelled, not answered: its metadata is not ours
		// to read (gRPC may still be writing it).
		u.fail(ctx, aborted.err)
		return
	}
	if err != nil {
		u.fail(runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{HeaderMD: header, TrailerMD: trailer}), err)
		return
	}
	_, outbound := runtime.MarshalerForRequest(u.mux, r)
	rctx, _ := runtime.AnnotateContext(ctx, u.mux, r, uploadRPC, runtime.WithHTTPPathPattern(uploadPath))
	rctx = runtime.NewServerMetadataContext(rctx, runtime.ServerMetadata{HeaderMD: header, TrailerMD: trailer})
	runtime.ForwardResponseMessage(rctx, u.mux, outbound, u.w, r, resp, u.mux.GetForwardResponseOptions()...)
}

// send streams the upload: its header, the file in chunks, then the
// fields that came after the file (rest reads them once the file is
// done). The service may refuse at any point (a wrong type, too large);
// its status is then the answer, and the rest of the body goes unread.
func (u *upload) send(stream grpc.ClientStreamingClient[collectionsv1.CreateAssetRequest, collectionsv1.CreateAssetResponse], cancel context.CancelFunc,
	head *collectionsv1.AssetUpload, file io.Reader, rest func() (*string, error), body *progress,
) (*collectionsv1.CreateAssetResponse, error) {
	refused := func() (*collectionsv1.CreateAssetResponse, error) {
		// The service ended the stream: its status says why.
		return stream.CloseAndRecv()
	}
	if err := stream.Send(&collectionsv1.CreateAssetRequest{Part: &collectionsv1.CreateAssetRequest_Upload{Upload: head}}); err != nil {
		return refused()
	}
	// The service answers the header before it takes the file: a refusal
	// that needs no file (a type not allowed, a size over the limit) comes
	// before the client has sent it.
	var md metadata.MD
	err := u.within(cancel, func() (err error) { md, err = stream.Header(); return err })
	var aborted *abortedError
	if errors.As(err, &aborted) {
		return nil, err
	}
	if err != nil || md == nil {
		return refused()
	}
	// One buffer for every chunk: Send has encoded the message into a
	// frame of its own when it returns, and the stats handlers on the
	// connection (OpenTelemetry's, the call metrics) keep no message. A
	// fresh 256 KiB per chunk was most of an upload's garbage.
	buf := make([]byte, uploadChunk)
	for {
		n, err := io.ReadFull(file, buf)
		if n > 0 {
			if serr := stream.Send(&collectionsv1.CreateAssetRequest{Part: &collectionsv1.CreateAssetRequest_Chunk{Chunk: buf[:n]}}); serr != nil {
				return refused()
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) && body.err == nil {
			break
		}
		if err != nil {
			if body.err == nil {
				body.err = err
			}
			return nil, u.abort(cancel, body.err)
		}
	}
	alt, err := rest()
	if err != nil {
		return nil, u.abort(cancel, err)
	}
	u.bodyDone = true
	if alt != nil {
		if err := stream.Send(&collectionsv1.CreateAssetRequest{Part: &collectionsv1.CreateAssetRequest_Fields{Fields: &collectionsv1.AssetFields{Alt: alt}}}); err != nil {
			return refused()
		}
	}
	var resp *collectionsv1.CreateAssetResponse
	err = u.within(cancel, func() (err error) { resp, err = stream.CloseAndRecv(); return err })
	return resp, err
}

// within runs a wait on the service (its answer to the header, its answer
// to the whole upload) for at most --request-timeout: the transfer's own
// time is bounded by its progress, but a service that has the whole file
// and does not answer is answered 504, as any request would be.
func (u *upload) within(cancel context.CancelFunc, wait func() error) error {
	done := make(chan error, 1)
	go func() { done <- wait() }()
	timer := time.NewTimer(u.g.cfg.RequestTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		cancel()
		if err := <-done; err != nil {
			u.g.cfg.Logger.DebugContext(u.r.Context(), "upload abandoned after the service's silence", "error", err)
		}
		return &abortedError{status.Errorf(codes.DeadlineExceeded, "the service did not answer within %s", u.g.cfg.RequestTimeout)}
	}
}

// abort cancels the stream, so that the service stores nothing of a file
// that did not arrive whole (closing it would end the file there), and
// returns the answer for err: the body's failure, or the multipart form's.
func (u *upload) abort(cancel context.CancelFunc, err error) error {
	cancel()
	if _, ok := status.FromError(err); ok {
		return &abortedError{err} // a refusal already worded for the caller
	}
	return &abortedError{u.bodyError(err)}
}

// abortedError is the answer to an upload the gateway cancelled.
type abortedError struct{ err error }

func (e *abortedError) Error() string { return e.err.Error() }

// parse reads what comes before the file: the multipart form's fields up
// to its file part, or the raw form's query. It returns the upload's
// header, the file, and a function that reads the form's fields after the
// file.
func (u *upload) parse(body *progress) (*collectionsv1.AssetUpload, io.Reader, func() (*string, error), error) {
	r := u.r
	contentType := r.Header.Get("Content-Type")
	mediaType, params, _ := mime.ParseMediaType(contentType)
	if mediaType != "multipart/form-data" {
		return u.parseRaw(body, contentType)
	}
	if r.URL.RawQuery != "" {
		return nil, nil, nil, invalid("a multipart upload takes no query parameters; send filename in the file part and alt as a form field")
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, nil, nil, invalid("the multipart/form-data Content-Type has no boundary parameter")
	}
	mr := multipart.NewReader(body, boundary)
	var alt *string
	seen := map[string]bool{}
	field := func(p *multipart.Part) error {
		name := p.FormName()
		switch {
		case !slices.Contains(multipartFields, name):
			return invalid("unknown form field %q; allowed fields: %s", name, strings.Join(multipartFields, ", "))
		case seen[name]:
			return invalid("form field %q was sent twice; send it once", name)
		}
		seen[name] = true
		b, err := io.ReadAll(io.LimitReader(p, maxFieldBytes+1))
		if err != nil {
			return err
		}
		if len(b) > maxFieldBytes {
			return invalid("form field %s is longer than %d bytes", name, maxFieldBytes)
		}
		if err := value.UTF8("form field "+name, string(b)); err != nil {
			return apperr.ToStatus(err).Err()
		}
		s := string(b)
		alt = &s
		return nil
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, nil, nil, invalid("the form has no file part; send the file as the form field %q, with its file name", "file")
		}
		if err != nil {
			return nil, nil, nil, multipartError(err)
		}
		if p.FormName() != "file" {
			if err := field(p); err != nil {
				return nil, nil, nil, multipartError(err)
			}
			continue
		}
		seen["file"] = true
		filename := p.FileName()
		if filename == "" {
			return nil, nil, nil, invalid("the file part has no file name: send it with filename in its Content-Disposition (curl -F file=@hero.jpg does)")
		}
		head := &collectionsv1.AssetUpload{Filename: filename, ContentType: p.Header.Get("Content-Type"), Size: -1, Alt: alt}
		if err := checkText(head, "the file part's filename", "the file part's Content-Type", "form field alt"); err != nil {
			return nil, nil, nil, err
		}
		early := alt != nil
		rest := func() (*string, error) {
			var late *string
			for {
				p, err := mr.NextPart()
				if errors.Is(err, io.EOF) {
					return late, nil
				}
				if err != nil {
					return nil, multipartError(err)
				}
				if p.FormName() == "file" {
					return nil, invalid("the form has more than one file part; upload one file per request")
				}
				alt = nil
				if err := field(p); err != nil {
					return nil, multipartError(err)
				}
				if early {
					return nil, invalid("form field %q was sent twice; send it once", "alt")
				}
				late = alt
			}
		}
		return head, p, rest, nil
	}
}

func multipartError(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) {
		return err // the body's failure: answered as such
	}
	return invalid("the multipart/form-data body is malformed: %v", err)
}

// parseRaw reads the raw form: the file is the body, its type the
// request's Content-Type, its name ?filename=.
func (u *upload) parseRaw(body *progress, contentType string) (*collectionsv1.AssetUpload, io.Reader, func() (*string, error), error) {
	q := u.r.URL.Query()
	for k, vs := range q {
		if !slices.Contains(rawParams, k) {
			return nil, nil, nil, invalid("unknown query parameter %q; allowed: %s (or send a multipart/form-data body)", k, strings.Join(rawParams, ", "))
		}
		if len(vs) > 1 {
			return nil, nil, nil, invalid("query parameter %s was given %d times; give it once", k, len(vs))
		}
	}
	if contentType == "" {
		return nil, nil, nil, invalid("the upload has no Content-Type: send the file as multipart/form-data, or raw with its own Content-Type (image/png, ...) and ?filename=")
	}
	if !q.Has("filename") {
		return nil, nil, nil, invalid("a raw upload needs ?filename= (such as ?filename=hero.jpg); or send the file as multipart/form-data")
	}
	head := &collectionsv1.AssetUpload{Filename: q.Get("filename"), ContentType: contentType, Size: u.r.ContentLength}
	if u.r.ContentLength < 0 {
		head.Size = -1
	}
	if q.Has("alt") {
		alt := q.Get("alt")
		head.Alt = &alt
	}
	if err := checkText(head, "query parameter filename (once percent-decoded)", "the Content-Type header", "query parameter alt (once percent-decoded)"); err != nil {
		return nil, nil, nil, err
	}
	return head, body, func() (*string, error) { return nil, nil }, nil
}

// checkText refuses an upload header whose text is not UTF-8, naming the
// field as the client sent it. Header values, query parameters and form
// parts arrive as bytes; the header travels to the collections service as
// protobuf strings, which hold UTF-8 only, so without this check such an
// upload failed on its way (a 500) instead of being refused. What else
// the fields may be is the service's rule (docs/assets.md).
func checkText(head *collectionsv1.AssetUpload, filename, contentType, alt string) error {
	err := value.UTF8(filename, head.GetFilename())
	if err == nil {
		err = value.UTF8(contentType, head.GetContentType())
	}
	if err == nil && head.Alt != nil {
		err = value.UTF8(alt, head.GetAlt())
	}
	if err != nil {
		return apperr.ToStatus(err).Err()
	}
	return nil
}
