package grpcserver

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/atrium-hq/atrium/platform/apperr"
	"github.com/atrium-hq/atrium/platform/principal"
	"github.com/atrium-hq/atrium/platform/publicfile"
	"github.com/atrium-hq/atrium/platform/render"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
	"github.com/atrium-hq/atrium/services/collections/internal/app"
)

// AssetServer implements the assets service.
type AssetServer struct {
	collectionsv1.UnimplementedAssetsServiceServer
	assets *app.Assets
	// publicURL is the public API's base URL, which asset URLs start with:
	// read at each answer, so that a changed --public-url moves every URL.
	publicURL func() string
}

// NewAssetServer returns a server over the assets use cases.
func NewAssetServer(assets *app.Assets, publicURL func() string) *AssetServer {
	return &AssetServer{assets: assets, publicURL: publicURL}
}

// Register registers the assets service on r.
func (s *AssetServer) Register(r grpc.ServiceRegistrar) {
	collectionsv1.RegisterAssetsServiceServer(r, s)
}

func (s *AssetServer) url(a app.Asset) string {
	return s.publicURL() + publicfile.AssetURLPath(a.Name, a.Filename)
}

func (s *AssetServer) assetPB(a app.Asset) *collectionsv1.Asset {
	out := &collectionsv1.Asset{
		Id: a.ID, Filename: a.Filename, ContentType: a.ContentType,
		Size: int32(a.Size), //nolint:gosec // G115: at most --max-asset-bytes, itself at most 2^31-1
		Alt:  a.Alt, Sha256: a.SHA256, Url: s.url(a),
		CreatedAt: timestamppb.New(a.CreatedAt), UpdatedAt: timestamppb.New(a.UpdatedAt),
	}
	if a.Width != nil && a.Height != nil {
		out.Width = wrapperspb.Int32(int32(*a.Width))   //nolint:gosec // G115: checked to fit (filetype.Dimensions)
		out.Height = wrapperspb.Int32(int32(*a.Height)) //nolint:gosec // G115: checked to fit (filetype.Dimensions)
	}
	return out
}

// UploadAcceptedMetadata is the header the service sends once an upload's
// header has passed its checks: the gateway sends the file only then, so
// that a refusal that needs no file comes before the file is sent.
const UploadAcceptedMetadata = "atrium-upload-accepted"

// CreateAsset implements collectionsv1.AssetsServiceServer: the header,
// then the file streamed into the use case as it arrives.
func (s *AssetServer) CreateAsset(stream grpc.ClientStreamingServer[collectionsv1.CreateAssetRequest, collectionsv1.CreateAssetResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return apperr.Invalid("an upload starts with its header (upload), then the file's chunks")
	}
	if err != nil {
		return recvErr(ctx, err)
	}
	up := first.GetUpload()
	if up == nil {
		return apperr.Invalid("an upload starts with its header (upload), then the file's chunks")
	}
	body := &chunks{stream: stream}
	a, err := s.assets.Upload(ctx, principal.SiteID(ctx), app.NewAsset{
		Filename: up.Filename, DeclaredType: up.ContentType, Size: up.Size, Alt: up.Alt, Body: body,
		Trailer:  func() *string { return body.alt },
		Accepted: func() { _ = stream.SendHeader(metadata.Pairs(UploadAcceptedMetadata, "true")) },
	})
	if err != nil {
		return err
	}
	return stream.SendAndClose(&collectionsv1.CreateAssetResponse{Asset: s.assetPB(a)})
}

// recvErr is a failed receive: the caller's cancellation as such, rather
// than a fault.
func recvErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// chunks reads an upload's file from its stream: the chunk messages, up to
// the end of the stream or the fields message that may close it.
type chunks struct {
	stream grpc.ClientStreamingServer[collectionsv1.CreateAssetRequest, collectionsv1.CreateAssetResponse]
	buf    []byte
	done   bool
	alt    *string
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		m, err := c.stream.Recv()
		if errors.Is(err, io.EOF) {
			c.done = true
			return 0, io.EOF
		}
		if err != nil {
			return 0, recvErr(c.stream.Context(), err)
		}
		switch part := m.Part.(type) {
		case *collectionsv1.CreateAssetRequest_Chunk:
			c.buf = part.Chunk
		case *collectionsv1.CreateAssetRequest_Fields:
			c.alt = part.Fields.Alt
			if _, err := c.stream.Recv(); !errors.Is(err, io.EOF) {
				if err != nil {
					return 0, recvErr(c.stream.Context(), err)
				}
				return 0, apperr.Invalid("an upload's fields message is its last; nothing may follow it")
			}
			c.done = true
		default:
			return 0, apperr.Invalid("an upload has one header, first; then the file's chunks")
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// ListAssets implements collectionsv1.AssetsServiceServer.
func (s *AssetServer) ListAssets(ctx context.Context, req *collectionsv1.ListAssetsRequest) (*collectionsv1.ListAssetsResponse, error) {
	as, page, err := s.assets.List(ctx, principal.SiteID(ctx), req.Limit, req.Offset)
	if err != nil {
		return nil, err
	}
	if render.Requested(ctx) {
		return &collectionsv1.ListAssetsResponse{RenderedJson: s.renderAssets(as, page.Limit, page.Offset)}, nil
	}
	out := &collectionsv1.ListAssetsResponse{Assets: make([]*collectionsv1.Asset, len(as)), Limit: page.Limit, Offset: page.Offset}
	for i, a := range as {
		out.Assets[i] = s.assetPB(a)
	}
	return out, nil
}

// GetAsset implements collectionsv1.AssetsServiceServer.
func (s *AssetServer) GetAsset(ctx context.Context, req *collectionsv1.GetAssetRequest) (*collectionsv1.GetAssetResponse, error) {
	a, err := s.assets.Get(ctx, principal.SiteID(ctx), req.AssetId)
	if err != nil {
		return nil, err
	}
	return &collectionsv1.GetAssetResponse{Asset: s.assetPB(a)}, nil
}

// UpdateAsset implements collectionsv1.AssetsServiceServer.
func (s *AssetServer) UpdateAsset(ctx context.Context, req *collectionsv1.UpdateAssetRequest) (*collectionsv1.UpdateAssetResponse, error) {
	a, err := s.assets.Update(ctx, principal.SiteID(ctx), req.AssetId, app.AssetChange{Alt: req.Alt, Filename: req.Filename})
	if err != nil {
		return nil, err
	}
	return &collectionsv1.UpdateAssetResponse{Asset: s.assetPB(a)}, nil
}

// DeleteAsset implements collectionsv1.AssetsServiceServer.
func (s *AssetServer) DeleteAsset(ctx context.Context, req *collectionsv1.DeleteAssetRequest) (*collectionsv1.DeleteAssetResponse, error) {
	if err := s.assets.Delete(ctx, principal.SiteID(ctx), req.AssetId); err != nil {
		return nil, err
	}
	return &collectionsv1.DeleteAssetResponse{Ok: true}, nil
}

func (s *AssetServer) writeAsset(w *render.Writer, a *app.Asset) {
	w.Open()
	w.Key("id")
	w.String(a.ID)
	w.Key("filename")
	w.String(a.Filename)
	w.Key("content_type")
	w.String(a.ContentType)
	w.Key("size")
	w.Int(a.Size)
	w.Key("width")
	if a.Width != nil && a.Height != nil {
		w.Int(int64(*a.Width))
		w.Key("height")
		w.Int(int64(*a.Height))
	} else {
		w.Null()
		w.Key("height")
		w.Null()
	}
	w.Key("alt")
	w.String(a.Alt)
	w.Key("sha256")
	w.String(a.SHA256)
	w.Key("url")
	w.String(s.url(*a))
	w.Key("created_at")
	w.Time(a.CreatedAt)
	w.Key("updated_at")
	w.Time(a.UpdatedAt)
	w.Close()
}

// renderAssets is the list's body, rendered from the domain values in one
// pass (platform/render).
func (s *AssetServer) renderAssets(as []app.Asset, limit, offset int32) []byte {
	w := render.NewWriter(64 + 480*len(as))
	w.Open()
	w.Key("assets")
	w.OpenArray()
	for i := range as {
		s.writeAsset(w, &as[i])
	}
	w.CloseArray()
	w.Key("limit")
	w.Int(int64(limit))
	w.Key("offset")
	w.Int(int64(offset))
	w.Close()
	return w.Bytes()
}
