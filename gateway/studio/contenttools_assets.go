package studio

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/atrium-hq/atrium/platform/apperr"
	collectionsv1 "github.com/atrium-hq/atrium/proto/atrium/collections/v1"
)

// assetsPerPage is how many thumbnails the library shows at once.
const assetsPerPage = 24

type assetCard struct {
	*collectionsv1.Asset
	Image bool
	Kind  string
	Size  string
}

type uploadForm struct {
	Alt, Error, ReturnTo string
}

type assetsData struct {
	Assets []assetCard
	Page   int
	// Prev and Next are the pages' addresses; "" at either end.
	Prev, Next string
	Upload     uploadForm
	MayUpload  bool
	MaySchema  bool
	Base       string
	// Schema is the site's schema builder, linked for those who may open it.
	Schema string
}

// assetsPage is the site's asset library: a page of thumbnails, newest
// first, and the upload form.
func (s *Studio) assetsPage(v *visit) error {
	return s.renderAssets(v, http.StatusOK, uploadForm{ReturnTo: safeReturn(v.r.URL.Query().Get("return_to"))})
}

func (s *Studio) renderAssets(v *visit, code int, form uploadForm) error {
	page, _ := strconv.Atoi(v.r.URL.Query().Get("page"))
	page = max(page, 1)
	page = min(page, 100000)
	// One more than a page: whether there is a next page.
	req := &collectionsv1.ListAssetsRequest{Limit: new(int32(assetsPerPage + 1)), Offset: new(int32((page - 1) * assetsPerPage))}
	resp, err := call(v, collectionsv1.AssetsService_ListAssets_FullMethodName, s.assets.ListAssets, req)
	if err != nil {
		return err
	}
	d := assetsData{Page: page, Upload: form, Base: v.path("sites", v.site, "assets"), Schema: v.path("sites", v.site, "schema"),
		MayUpload: v.may(collectionsv1.AssetsService_CreateAsset_FullMethodName),
		MaySchema: v.may(collectionsv1.SchemaService_ListSchemaCollections_FullMethodName)}
	list := resp.GetAssets()
	if len(list) > assetsPerPage {
		list = list[:assetsPerPage]
		d.Next = d.Base + "?page=" + strconv.Itoa(page+1)
	}
	if page > 1 {
		d.Prev = d.Base + "?page=" + strconv.Itoa(page-1)
	}
	for _, a := range list {
		d.Assets = append(d.Assets, card(a))
	}
	s.render(v, code, "contenttools/assets", View{Title: "Assets", Crumbs: s.siteCrumbs(v)}, d)
	return nil
}

func card(a *collectionsv1.Asset) assetCard {
	kind := a.GetContentType()
	if i := strings.IndexByte(kind, '/'); i >= 0 {
		kind = strings.ToUpper(strings.TrimSuffix(kind[i+1:], "+xml"))
	}
	return assetCard{Asset: a, Image: strings.HasPrefix(a.GetContentType(), "image/"), Kind: kind, Size: byteSize(int64(a.GetSize()))}
}

// byteSize is a file size as people read it.
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// safeReturn is a page of the Studio to go back to after an upload (the
// editor's, whose asset field was dropped a file on), or "" for anything
// else: never a page elsewhere.
func safeReturn(p string) string {
	if p == "" {
		return ""
	}
	if lp := localPath(p); lp != Prefix || p == Prefix {
		return lp
	}
	return ""
}

// withAsset is the return page's address with ?asset=id added.
func withAsset(to, id string) string {
	u, err := url.Parse(to)
	if err != nil {
		return to
	}
	q := u.Query()
	q.Set("asset", id)
	u.RawQuery = q.Encode()
	return u.String()
}

// uploadAsset takes the upload form's file: the gateway streams it to the
// collections service as the JSON API's upload does (Gate.Upload).
func (s *Studio) uploadAsset(v *visit) error {
	form := uploadForm{Alt: v.r.PostFormValue("alt"), ReturnTo: safeReturn(v.r.PostFormValue("return_to"))}
	if !v.may(collectionsv1.AssetsService_CreateAsset_FullMethodName) {
		// The service would refuse it too; this way the file is not sent.
		return status.Error(codes.PermissionDenied, "your role may not upload assets to this site")
	}
	f, fh, err := v.r.FormFile("file")
	if err != nil {
		form.Error = "Choose a file to upload (the form had none)."
		if !errors.Is(err, http.ErrMissingFile) {
			form.Error = "The file could not be read from the form: " + err.Error() + ". Send it again."
		}
		return s.renderAssets(v, http.StatusBadRequest, form)
	}
	defer func() { _ = f.Close() }()
	head := &collectionsv1.AssetUpload{Filename: fh.Filename, ContentType: fh.Header.Get("Content-Type"), Size: fh.Size}
	if form.Alt != "" {
		head.Alt = &form.Alt
	}
	p, err := s.cfg.Gate.Principal(v.r.Context(), v.sess, v.agency(), v.site, collectionsv1.AssetsService_CreateAsset_FullMethodName)
	if err != nil {
		return err
	}
	a, err := s.cfg.Gate.Upload(v.r.Context(), v.r, p, head, f)
	if err != nil {
		msg, ok := errForm(err)
		code := formCode(msg)
		if apperr.ReasonOf(status.Convert(err)) == apperr.ReasonTooLarge {
			// Too large: answered 413 as the API does, by the form.
			code = http.StatusRequestEntityTooLarge
		}
		if !ok {
			return err
		}
		form.Error = msg
		return s.renderAssets(v, code, form)
	}
	v.setFlash("Uploaded " + a.GetFilename() + ".")
	if form.ReturnTo != "" {
		return v.redirect(withAsset(form.ReturnTo, a.GetId()), "")
	}
	return v.redirect(v.path("sites", v.site, "assets"), "")
}

type assetData struct {
	assetCard
	Alt, Error string
	MayEdit    bool
	MayDelete  bool
	Library    string
}

// assetPage shows one asset, its alt text form and its delete button.
func (s *Studio) assetPage(v *visit) error {
	resp, err := call(v, collectionsv1.AssetsService_GetAsset_FullMethodName, s.assets.GetAsset, &collectionsv1.GetAssetRequest{AssetId: v.r.PathValue("asset")})
	if err != nil {
		return err
	}
	return s.renderAsset(v, http.StatusOK, resp.GetAsset(), resp.GetAsset().GetAlt(), "")
}

func (s *Studio) renderAsset(v *visit, code int, a *collectionsv1.Asset, alt, msg string) error {
	d := assetData{assetCard: card(a), Alt: alt, Error: msg, Library: v.path("sites", v.site, "assets"),
		MayEdit:   v.may(collectionsv1.AssetsService_UpdateAsset_FullMethodName),
		MayDelete: v.may(collectionsv1.AssetsService_DeleteAsset_FullMethodName)}
	crumbs := append(s.siteCrumbs(v), Link{Label: "Assets", Href: d.Library})
	s.render(v, code, "contenttools/asset", View{Title: a.GetFilename(), Crumbs: crumbs}, d)
	return nil
}

// updateAsset changes an asset's alt text.
func (s *Studio) updateAsset(v *visit) error {
	id, alt := v.r.PathValue("asset"), v.r.PostFormValue("alt")
	resp, err := call(v, collectionsv1.AssetsService_UpdateAsset_FullMethodName, s.assets.UpdateAsset, &collectionsv1.UpdateAssetRequest{AssetId: id, Alt: &alt})
	if err != nil {
		msg, ok := errForm(err)
		if !ok {
			return err
		}
		got, gerr := call(v, collectionsv1.AssetsService_GetAsset_FullMethodName, s.assets.GetAsset, &collectionsv1.GetAssetRequest{AssetId: id})
		if gerr != nil {
			return gerr
		}
		return s.renderAsset(v, http.StatusBadRequest, got.GetAsset(), alt, msg)
	}
	v.setFlash("Saved the alt text of " + resp.GetAsset().GetFilename() + ".")
	return v.redirect(v.path("sites", v.site, "assets", id), "")
}

// deleteAsset deletes an asset and its file.
func (s *Studio) deleteAsset(v *visit) error {
	id := v.r.PathValue("asset")
	if _, err := call(v, collectionsv1.AssetsService_DeleteAsset_FullMethodName, s.assets.DeleteAsset, &collectionsv1.DeleteAssetRequest{AssetId: id}); err != nil {
		return err
	}
	v.setFlash("Deleted the asset. Pages that showed it show a missing image until they are changed.")
	return v.redirect(v.path("sites", v.site, "assets"), "")
}
