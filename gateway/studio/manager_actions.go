package studio

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/atrium-hq/atrium/gateway/studio/internal/schemaform"
	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
)

const (
	actionsRunAction = actionsv1.ActionsService_RunAction_FullMethodName
	actionsList      = actionsv1.ActionsService_ListActions_FullMethodName
)

// schemaFormTemplate renders an action's form fields (schemaform's own
// template), which the action page places inside its <form>.
var schemaFormTemplate = template.Must(schemaform.AddTo(template.New("actions")))

func (s *Studio) catalog(v *visit) ([]*actionsv1.Action, error) {
	resp, err := call(v, actionsList, s.actions.ListActions, &actionsv1.ListActionsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetActions(), nil
}

func (s *Studio) actionsPage(v *visit) error {
	as, err := s.catalog(v)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "manager/actions", View{Title: "Actions", Crumbs: []Link{{Label: View{v: v}.AgencyName(), Href: v.path("")}}}, struct {
		Actions []*actionsv1.Action
		Client  string
		MayRun  bool
	}{as, v.r.URL.Query().Get("client"), v.may(actionsRunAction)})
	return nil
}

// actionForm is the run form of one action.
type actionForm struct {
	Action  *actionsv1.Action
	Fields  template.HTML
	Clients []*crmv1.Client
	Client  string
	// Key is the Idempotency-Key the form sends: a double submit, or a
	// form sent again after a lost answer, runs the action once.
	Key     string
	Error   string
	MayRun  bool
	Balance *actionsv1.Balance
}

func (s *Studio) findAction(v *visit, name string) (*actionsv1.Action, []byte, error) {
	as, err := s.catalog(v)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range as {
		if a.GetName() == name {
			schema, err := json.Marshal(a.GetInputSchema().AsMap())
			if err != nil {
				return nil, nil, status.Errorf(codes.Internal, "the input schema of %s cannot be read: %v", name, err)
			}
			return a, schema, nil
		}
	}
	return nil, nil, status.Errorf(codes.NotFound, "no action %q; the actions page lists them", name)
}

func (s *Studio) actionPage(v *visit) error {
	a, schema, err := s.findAction(v, v.r.PathValue("action"))
	if err != nil {
		return err
	}
	return s.renderActionForm(v, http.StatusOK, a, schema, nil, nil, v.r.URL.Query().Get("client"), newIdempotencyKey(), "")
}

func (s *Studio) renderActionForm(v *visit, code int, a *actionsv1.Action, schema []byte, values map[string]any, errs map[string]string, client, key, msg string) error {
	form, err := schemaform.Build(schema, values, errs)
	if err != nil {
		return status.Errorf(codes.Internal, "the form of %s cannot be built: %v", a.GetName(), err)
	}
	var buf bytes.Buffer
	if err := schemaFormTemplate.ExecuteTemplate(&buf, "schemaform", form.Without("client_id")); err != nil {
		return status.Errorf(codes.Internal, "the form of %s cannot be drawn: %v", a.GetName(), err)
	}
	d := actionForm{Action: a, Fields: template.HTML(buf.String()), Client: client, Key: key, Error: msg, MayRun: v.may(actionsRunAction)} //nolint:gosec // G203: schemaform's template escapes every value
	if d.Error == "" && errs[""] != "" {
		d.Error = errs[""]
	}
	if d.Clients, err = s.clientsOf(v); err != nil {
		return err
	}
	if v.may(actionsv1.ActionsService_GetCreditBalance_FullMethodName) {
		if b, err := call(v, actionsv1.ActionsService_GetCreditBalance_FullMethodName, s.actions.GetCreditBalance, &actionsv1.GetCreditBalanceRequest{}); err == nil {
			d.Balance = b.GetBalance()
		}
	}
	s.render(v, code, "manager/action", View{Title: "Run " + a.GetName(), Crumbs: []Link{
		{Label: View{v: v}.AgencyName(), Href: v.path("")}, {Label: "Actions", Href: v.path("actions")}}}, d)
	return nil
}

// runActionPost runs the action asynchronously (Prefer: respond-async:
// the page does not wait for the provider) and goes to the run's page,
// which follows it live.
func (s *Studio) runActionPost(v *visit) error {
	if !v.may(actionsRunAction) {
		return status.Error(codes.PermissionDenied, "your role may read the actions but not run them")
	}
	a, schema, err := s.findAction(v, v.r.PathValue("action"))
	if err != nil {
		return err
	}
	form := v.r.PostForm
	client := strings.TrimSpace(form.Get("client_id"))
	key := strings.TrimSpace(form.Get("idempotency_key"))
	if !validKey(key) {
		key = newIdempotencyKey()
	}
	input, errs := schemaform.Parse(schema, form)
	if client == "" {
		errs["client_id"] = "Client: choose the client to run it for"
	}
	if len(errs) > 0 {
		msg := "The form has errors: correct the fields marked below."
		if e := errs["client_id"]; e != "" {
			msg = e + "."
		}
		return s.renderActionForm(v, http.StatusBadRequest, a, schema, schemaform.Posted(form), errs, client, key, msg)
	}
	params, err := structpb.NewStruct(input)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "the form's values cannot be sent: %v", err)
	}
	ctx, err := v.ctx(actionsRunAction)
	if err != nil {
		return err
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "prefer", "respond-async", "idempotency-key", key)
	resp, err := s.actions.RunAction(ctx, &actionsv1.RunActionRequest{Params: params})
	if err != nil {
		if msg, ok := errForm(err); ok {
			return s.renderActionForm(v, http.StatusBadRequest, a, schema, schemaform.Posted(form), nil, client, key, msg)
		}
		if status.Code(err) == codes.ResourceExhausted {
			// Not enough credits (402), or too many runs queued: said by
			// the form.
			code := http.StatusTooManyRequests
			if strings.Contains(strings.ToLower(status.Convert(err).Message()), "credit") {
				code = http.StatusPaymentRequired
			}
			return s.renderActionForm(v, code, a, schema, schemaform.Posted(form), nil, client, key, sentence(status.Convert(err).Message()))
		}
		return err
	}
	run, _ := resp.GetData().AsMap()["run_id"].(string)
	if run == "" {
		// A replay of a run that has finished answers its outcome, not
		// the run: find the run by the key it was sent with.
		if run, err = s.runByKey(v, a.GetName(), client, key); err != nil {
			return err
		}
	}
	v.setFlash(a.GetName() + " started for the client: this page follows it.")
	return v.redirect(v.path("runs", run), "")
}

// runByKey finds the agency's latest run of action for client sent with
// the Idempotency-Key key.
func (s *Studio) runByKey(v *visit, action, client, key string) (string, error) {
	resp, err := call(v, actionsv1.ActionsService_ListRuns_FullMethodName, s.actions.ListRuns, &actionsv1.ListRunsRequest{Action: action, ClientId: client, Limit: new(int32(100))})
	if err != nil {
		return "", err
	}
	for _, r := range resp.GetRuns() {
		if r.GetIdempotencyKey().GetValue() == key {
			return r.GetId(), nil
		}
	}
	return "", status.Error(codes.Unavailable, "the action ran, but its run could not be found yet; open the runs page")
}

// newIdempotencyKey is a random key of 32 hex digits.
func newIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// validKey reports whether a posted key is one the actions service takes
// (1 to 255 printable ASCII characters without spaces).
func validKey(k string) bool {
	if k == "" || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}
