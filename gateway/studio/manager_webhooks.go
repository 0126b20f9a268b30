package studio

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

const (
	webhooksList   = webhooksv1.WebhooksService_ListWebhooks_FullMethodName
	webhooksCreate = webhooksv1.WebhooksService_CreateWebhook_FullMethodName
	webhooksGet    = webhooksv1.WebhooksService_GetWebhook_FullMethodName
	webhooksUpdate = webhooksv1.WebhooksService_UpdateWebhook_FullMethodName
	webhooksDelete = webhooksv1.WebhooksService_DeleteWebhook_FullMethodName
	webhooksRotate = webhooksv1.WebhooksService_RotateWebhookSecret_FullMethodName
	webhooksTest   = webhooksv1.WebhooksService_TestWebhook_FullMethodName
	webhooksLog    = webhooksv1.WebhooksService_ListDeliveries_FullMethodName
	webhooksRetry  = webhooksv1.WebhooksService_RetryDelivery_FullMethodName
	webhooksRecov  = webhooksv1.WebhooksService_RecoverDeliveries_FullMethodName
	webhooksTypes  = webhooksv1.WebhooksService_ListEventTypes_FullMethodName
)

func (s *Studio) webhookRoutes() {
	s.handle("GET /studio/a/{agency}/webhooks", s.webhooksPage)
	s.handle("POST /studio/a/{agency}/webhooks", s.webhookCreate)
	s.handle("GET /studio/a/{agency}/webhooks/{id}", s.webhookPage)
	s.handle("POST /studio/a/{agency}/webhooks/{id}", s.webhookUpdate)
	s.handle("POST /studio/a/{agency}/webhooks/{id}/enable", s.webhookEnable(true))
	s.handle("POST /studio/a/{agency}/webhooks/{id}/disable", s.webhookEnable(false))
	s.handle("POST /studio/a/{agency}/webhooks/{id}/rotate-secret", s.webhookRotate)
	s.handle("POST /studio/a/{agency}/webhooks/{id}/delete", s.webhookDelete)
	s.handle("POST /studio/a/{agency}/webhooks/{id}/test", s.webhookTest)
	s.handle("POST /studio/a/{agency}/webhooks/{id}/deliveries/{delivery}/retry", s.webhookRetry)
	s.handle("POST /studio/a/{agency}/webhooks/{id}/recover", s.webhookRecover)
}

// eventChoice is an event type as a checkbox of the webhook forms.
type eventChoice struct {
	Type, Description, ID string
	Checked               bool
}

// eventChoices are the tenant's event types, the family wildcards first
// (item.*, action_run.*), ticked when chosen.
func (s *Studio) eventChoices(v *visit, chosen []string) ([]eventChoice, error) {
	resp, err := call(v, webhooksTypes, s.webhooks.ListEventTypes, &webhooksv1.ListEventTypesRequest{})
	if err != nil {
		return nil, err
	}
	return eventChoicesOf(resp.GetEventTypes(), chosen), nil
}

// eventChoicesOf lays the event types out as checkboxes: a wildcard per
// family (the part before the first dot) then each type, in order.
func eventChoicesOf(types []*webhooksv1.EventType, chosen []string) []eventChoice {
	var families, names []string
	desc := map[string]string{}
	for _, t := range types {
		names = append(names, t.GetType())
		desc[t.GetType()] = t.GetDescription()
		if fam, _, ok := strings.Cut(t.GetType(), "."); ok && !slices.Contains(families, fam+".*") {
			families = append(families, fam+".*")
		}
	}
	slices.Sort(families)
	slices.Sort(names)
	var out []eventChoice
	for i, n := range append(families, names...) {
		d := desc[n]
		if d == "" && strings.HasSuffix(n, ".*") {
			d = "Every " + strings.TrimSuffix(n, ".*") + " event, including types added later."
		}
		out = append(out, eventChoice{Type: n, Description: d, ID: "event-" + strconv.Itoa(i), Checked: slices.Contains(chosen, n)})
	}
	return out
}

// webhooksData is the webhooks page: the list and the form to add one.
type webhooksData struct {
	Webhooks           []*webhooksv1.Webhook
	Events             []eventChoice
	URL, Description   string
	Error              string
	MayCreate, MayRead bool
}

func (s *Studio) webhooksPage(v *visit) error {
	return s.renderWebhooks(v, http.StatusOK, webhooksData{})
}

func (s *Studio) renderWebhooks(v *visit, code int, d webhooksData) error {
	resp, err := call(v, webhooksList, s.webhooks.ListWebhooks, &webhooksv1.ListWebhooksRequest{})
	if err != nil {
		return err
	}
	d.Webhooks = resp.GetWebhooks()
	if d.MayCreate = v.may(webhooksCreate); d.MayCreate {
		var chosen []string
		for _, e := range d.Events {
			if e.Checked {
				chosen = append(chosen, e.Type)
			}
		}
		if d.Events, err = s.eventChoices(v, chosen); err != nil {
			return err
		}
	}
	s.render(v, code, "manager/webhooks", View{Title: "Webhooks", Crumbs: []Link{{Label: View{v: v}.AgencyName(), Href: v.path("")}}}, d)
	return nil
}

func (s *Studio) webhookCreate(v *visit) error {
	if !v.may(webhooksCreate) {
		return status.Error(codes.PermissionDenied, "your role may read the webhooks but not add one")
	}
	f := v.r.PostForm
	req := &webhooksv1.CreateWebhookRequest{Url: strings.TrimSpace(f.Get("url")), Events: f["events"], Description: strings.TrimSpace(f.Get("description"))}
	resp, err := call(v, webhooksCreate, s.webhooks.CreateWebhook, req)
	if err != nil {
		if msg, ok := errForm(err); ok {
			d := webhooksData{URL: req.Url, Description: req.Description, Error: msg}
			for _, e := range req.Events {
				d.Events = append(d.Events, eventChoice{Type: e, Checked: true})
			}
			return s.renderWebhooks(v, http.StatusBadRequest, d)
		}
		return err
	}
	// The secret is shown this once: the page is the POST's answer, not
	// a redirect to a page that would show it again.
	return s.renderWebhook(v, http.StatusCreated, resp.GetWebhook(), "Webhook added. Copy its signing secret now: it is not shown again.", resp.GetWebhook().GetSecret())
}

// webhookData is one webhook's page.
type webhookData struct {
	Webhook    *webhooksv1.Webhook
	Events     []eventChoice
	Deliveries []*webhooksv1.Delivery
	Next       string
	// Secret is a new signing secret, shown once (after create or rotate).
	Secret      string
	Error       string
	RecoverFrom string
	MayWrite    bool
}

func (s *Studio) webhookPage(v *visit) error {
	resp, err := call(v, webhooksGet, s.webhooks.GetWebhook, &webhooksv1.GetWebhookRequest{Id: v.r.PathValue("id")})
	if err != nil {
		return err
	}
	return s.renderWebhook(v, http.StatusOK, resp.GetWebhook(), "", "")
}

func (s *Studio) renderWebhook(v *visit, code int, w *webhooksv1.Webhook, flash, secret string) error {
	return s.renderWebhookPage(v, code, w, flash, secret, "")
}

// renderWebhookForm shows the webhook's page with its settings form as
// posted and the error that refused it.
func (s *Studio) renderWebhookForm(v *visit, code int, w *webhooksv1.Webhook, msg string) error {
	return s.renderWebhookPage(v, code, w, "", "", msg)
}

func (s *Studio) renderWebhookPage(v *visit, code int, w *webhooksv1.Webhook, flash, secret, msg string) error {
	d := webhookData{Webhook: w, Secret: secret, Error: msg, MayWrite: v.may(webhooksUpdate),
		RecoverFrom: s.cfg.Now().Add(-72 * time.Hour).UTC().Format("2006-01-02")}
	if d.MayWrite {
		var err error
		if d.Events, err = s.eventChoices(v, w.GetEvents()); err != nil {
			return err
		}
	}
	q := v.r.URL.Query()
	log, err := call(v, webhooksLog, s.webhooks.ListDeliveries, &webhooksv1.ListDeliveriesRequest{Id: w.GetId(), Limit: new(int32(20)), Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	d.Deliveries = log.GetDeliveries()
	if n := log.GetNextCursor(); n != "" {
		d.Next = v.path("webhooks", w.GetId()) + "?cursor=" + url.QueryEscape(n) + "#deliveries-h"
	}
	s.render(v, code, "manager/webhook", View{Title: "Webhook " + w.GetUrl(), Flash: flash, Crumbs: []Link{
		{Label: View{v: v}.AgencyName(), Href: v.path("")}, {Label: "Webhooks", Href: v.path("webhooks")}}}, d)
	return nil
}

func (s *Studio) webhookUpdate(v *visit) error {
	f := v.r.PostForm
	id := v.r.PathValue("id")
	events := make([]any, 0, len(f["events"]))
	for _, e := range f["events"] {
		events = append(events, e)
	}
	lv, err := structpb.NewList(events)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "the event types cannot be read: %v", err)
	}
	addr, desc := strings.TrimSpace(f.Get("url")), strings.TrimSpace(f.Get("description"))
	_, err = call(v, webhooksUpdate, s.webhooks.UpdateWebhook, &webhooksv1.UpdateWebhookRequest{Id: id, Url: &addr, Description: &desc, Events: lv})
	if msg, ok := errForm(err); ok {
		// The settings are shown again as posted, with what was wrong.
		got, gerr := call(v, webhooksGet, s.webhooks.GetWebhook, &webhooksv1.GetWebhookRequest{Id: id})
		if gerr != nil {
			return gerr
		}
		posted := proto.Clone(got.GetWebhook()).(*webhooksv1.Webhook)
		posted.Url, posted.Description, posted.Events = addr, desc, f["events"]
		return s.renderWebhookForm(v, http.StatusBadRequest, posted, msg)
	}
	if err != nil {
		return err
	}
	v.setFlash("Webhook saved.")
	return v.redirect(v.path("webhooks", id), "")
}

func (s *Studio) webhookEnable(on bool) func(*visit) error {
	return func(v *visit) error {
		id := v.r.PathValue("id")
		if _, err := call(v, webhooksUpdate, s.webhooks.UpdateWebhook, &webhooksv1.UpdateWebhookRequest{Id: id, Enabled: &on}); err != nil {
			return err
		}
		if on {
			v.setFlash("Webhook enabled: new events are delivered again. Recover the deliveries it missed below if they matter.")
		} else {
			v.setFlash("Webhook disabled: no event is delivered to it until it is enabled.")
		}
		return v.redirect(v.path("webhooks", id), "")
	}
}

func (s *Studio) webhookRotate(v *visit) error {
	resp, err := call(v, webhooksRotate, s.webhooks.RotateWebhookSecret, &webhooksv1.RotateWebhookSecretRequest{Id: v.r.PathValue("id")})
	if err != nil {
		return err
	}
	return s.renderWebhook(v, http.StatusOK, resp.GetWebhook(), "New signing secret made. Copy it now: it is not shown again. The old one keeps signing beside it for a day.", resp.GetWebhook().GetSecret())
}

func (s *Studio) webhookDelete(v *visit) error {
	if _, err := call(v, webhooksDelete, s.webhooks.DeleteWebhook, &webhooksv1.DeleteWebhookRequest{Id: v.r.PathValue("id")}); err != nil {
		return err
	}
	v.setFlash("Webhook deleted.")
	return v.redirect(v.path("webhooks"), "")
}

func (s *Studio) webhookTest(v *visit) error {
	id := v.r.PathValue("id")
	resp, err := call(v, webhooksTest, s.webhooks.TestWebhook, &webhooksv1.TestWebhookRequest{Id: id})
	if err != nil {
		return err
	}
	v.setFlash("Test event sent (" + resp.GetDelivery().GetEventType() + "): its delivery is at the top of the log, " + resp.GetDelivery().GetStatus() + ".")
	return v.redirect(v.path("webhooks", id), "")
}

func (s *Studio) webhookRetry(v *visit) error {
	id := v.r.PathValue("id")
	resp, err := call(v, webhooksRetry, s.webhooks.RetryDelivery, &webhooksv1.RetryDeliveryRequest{Id: id, DeliveryId: v.r.PathValue("delivery")})
	if err != nil {
		return err
	}
	v.setFlash("Delivery sent again: " + resp.GetDelivery().GetStatus() + ".")
	return v.redirect(v.path("webhooks", id), "")
}

// webhookRecover makes the failed deliveries since a day pending again
// (a webhook that was down, or disabled after failing, gets what it
// missed).
func (s *Studio) webhookRecover(v *visit) error {
	id := v.r.PathValue("id")
	day, err := time.Parse("2006-01-02", strings.TrimSpace(v.r.PostForm.Get("since")))
	if err != nil {
		return status.Error(codes.InvalidArgument, "since must be a date, such as 2026-11-01")
	}
	resp, err := call(v, webhooksRecov, s.webhooks.RecoverDeliveries, &webhooksv1.RecoverDeliveriesRequest{Id: id, Since: day.Format(time.RFC3339)})
	if err != nil {
		return err
	}
	v.setFlash(strconv.Itoa(int(resp.GetRecovered())) + " failed deliveries will be sent again.")
	return v.redirect(v.path("webhooks", id), "")
}
