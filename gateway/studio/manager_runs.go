package studio

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	actionsv1 "github.com/atrium-hq/atrium/proto/atrium/actions/v1"
	crmv1 "github.com/atrium-hq/atrium/proto/atrium/crm/v1"
	webhooksv1 "github.com/atrium-hq/atrium/proto/atrium/webhooks/v1"
)

const (
	actionsListRuns = actionsv1.ActionsService_ListRuns_FullMethodName
	actionsGetRun   = actionsv1.ActionsService_GetRun_FullMethodName
	actionsBalance  = actionsv1.ActionsService_GetCreditBalance_FullMethodName
	webhooksListen  = webhooksv1.WebhooksService_ListenEvents_FullMethodName
)

// runStates are the states a run may be in, for the runs list's filter.
var runStates = []string{"queued", "running", "success", "error", "canceled"}

// runsPageSize is how many runs the runs list shows per page.
const runsPageSize = 25

// clientNames maps the agency's client ids to their names, when the
// person may list the clients (a client member may not: their pages show
// ids, which are their own client's).
func (s *Studio) clientNames(v *visit) (map[string]string, []*crmv1.Client) {
	names := map[string]string{}
	if !v.may(crmv1.AgencyClientsService_ListClients_FullMethodName) {
		return names, nil
	}
	cs, err := s.clientsOf(v)
	if err != nil {
		return names, nil
	}
	for _, c := range cs {
		names[c.GetId()] = c.GetName()
	}
	return names, cs
}

func (s *Studio) runsPage(v *visit) error {
	q := v.r.URL.Query()
	req := &actionsv1.ListRunsRequest{State: q.Get("state"), Action: q.Get("action"), ClientId: q.Get("client"),
		Cursor: q.Get("cursor"), Limit: new(int32(runsPageSize))}
	if c := v.m.GetClientId(); c != nil {
		// A client member's runs are their client's.
		req.ClientId = c.GetValue()
	}
	resp, err := call(v, actionsListRuns, s.actions.ListRuns, req)
	if err != nil {
		return err
	}
	names, clients := s.clientNames(v)
	d := struct {
		Runs                  []*actionsv1.Run
		ClientName            map[string]string
		Clients               []*crmv1.Client
		States                []string
		State, Action, Client string
		Next, First           string
	}{Runs: resp.GetRuns(), ClientName: names, Clients: clients, States: runStates,
		State: req.State, Action: req.Action, Client: q.Get("client")}
	if n := resp.GetNextCursor(); n != "" {
		nq := url.Values{}
		for k, val := range map[string]string{"state": req.State, "action": req.Action, "client": d.Client, "cursor": n} {
			if val != "" {
				nq.Set(k, val)
			}
		}
		d.Next = v.path("runs") + "?" + nq.Encode()
	}
	if req.Cursor != "" {
		fq := url.Values{}
		for k, val := range map[string]string{"state": req.State, "action": req.Action, "client": d.Client} {
			if val != "" {
				fq.Set(k, val)
			}
		}
		d.First = v.path("runs") + "?" + fq.Encode()
	}
	s.render(v, http.StatusOK, "manager/runs", View{Title: "Runs", Crumbs: []Link{{Label: View{v: v}.AgencyName(), Href: v.path("")}}}, d)
	return nil
}

// runState is the state block of a run's page, which the page's event
// stream sends again whenever the run changes.
type runState struct {
	Run        *actionsv1.Run
	ClientName string
	// Result is the run's data, a line per field; Error its error.
	Result []resultField
	Error  string
	// Finished: the run ended; Balance is the agency's balance after it
	// (when the person may read it).
	Finished bool
	Balance  *actionsv1.Balance
	// Live: the page follows the run over server-sent events.
	Live   bool
	Events string
}

// resultField is a field of a run's result: a value on one line, or a
// structured value shown as indented JSON.
type resultField struct {
	Name, Value string
	Block       bool
}

// finished reports whether a run's state is final.
func finished(state string) bool {
	return state == "success" || state == "error" || state == "canceled"
}

// resultFields lays a run's data out for reading: its fields sorted by
// name, an error apart.
func resultFields(data map[string]any) (fields []resultField, errMsg string) {
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		val := data[k]
		if k == "error" {
			if s, ok := val.(string); ok {
				errMsg = s
				continue
			}
		}
		switch val.(type) {
		case map[string]any, []any:
			b, err := json.MarshalIndent(val, "", "  ")
			if err != nil {
				continue
			}
			fields = append(fields, resultField{Name: k, Value: string(b), Block: true})
		default:
			fields = append(fields, resultField{Name: k, Value: cell(val), Block: strings.Contains(cell(val), "\n")})
		}
	}
	return fields, errMsg
}

func (s *Studio) runState(v *visit, id string, names map[string]string) (runState, error) {
	resp, err := call(v, actionsGetRun, s.actions.GetRun, &actionsv1.GetRunRequest{RunId: id})
	if err != nil {
		return runState{}, err
	}
	r := resp.GetRun()
	st := runState{Run: r, ClientName: names[r.GetClientId()], Finished: finished(r.GetState())}
	if r.GetData() != nil {
		st.Result, st.Error = resultFields(r.GetData().AsMap())
	}
	if st.Finished && v.may(actionsBalance) {
		if b, err := call(v, actionsBalance, s.actions.GetCreditBalance, &actionsv1.GetCreditBalanceRequest{}); err == nil {
			st.Balance = b.GetBalance()
		}
	}
	st.Live = !st.Finished && v.may(webhooksListen)
	st.Events = v.path("runs", id, "events")
	return st, nil
}

func (s *Studio) runPage(v *visit) error {
	names, _ := s.clientNames(v)
	st, err := s.runState(v, v.r.PathValue("run"), names)
	if err != nil {
		return err
	}
	s.render(v, http.StatusOK, "manager/run", View{Title: "Run of " + st.Run.GetAction(), Crumbs: []Link{
		{Label: View{v: v}.AgencyName(), Href: v.path("")}, {Label: "Runs", Href: v.path("runs")}}}, st)
	return nil
}

// runCancel cancels a queued or running run: its credits are released
// and nothing of its work is written (docs/actions.md).
func (s *Studio) runCancel(v *visit) error {
	id := v.r.PathValue("run")
	if _, err := call(v, actionsv1.ActionsService_CancelRun_FullMethodName, s.actions.CancelRun, &actionsv1.CancelRunRequest{RunId: id}); err != nil {
		return err
	}
	v.setFlash("Run canceled: its credits were released.")
	return v.redirect(v.path("runs", id), "")
}

// Event streams of runs: how long one may stay open (the page opens it
// again if the run is still going), and how long a write may take before
// the client is taken to be gone.
const (
	maxRunStream   = 30 * time.Minute
	runStreamWrite = 30 * time.Second
)

// runEvents is the run page's event stream (text/event-stream): the run's
// state block as an HTML fragment (event "run") at once and whenever the
// run changes, then "done" when it has finished, and the stream ends. It
// listens to the events Atrium already publishes (WebhooksService's
// ListenEvents, as the person: the judge decides who may) rather than
// polling: a run's completion is an action_run.* event. A run's start has
// no event of its own, so the run is read again on each of the service's
// heartbeats (every 15 seconds), which also keep proxies from closing the
// stream. The gateway counts it as a long request (longreq.go).
func (s *Studio) runEvents(v *visit) error {
	id := v.r.PathValue("run")
	ctx, err := v.ctx(webhooksListen)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, maxRunStream)
	defer cancel()
	stream, err := s.webhooks.ListenEvents(ctx, &webhooksv1.ListenEventsRequest{Events: []string{"action_run.*"}})
	if err != nil {
		return err
	}
	// The first message (a heartbeat) says the subscription is live: the
	// run is read only after it, so that its end cannot fall between.
	if _, err := stream.Recv(); err != nil {
		return err
	}
	names, _ := s.clientNames(v)
	st, err := s.runState(v, id, names)
	if err != nil {
		return err
	}
	h := v.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	v.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(v.w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(runStreamWrite))
		if _, err := v.w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	send := func(st runState) bool {
		frag, err := s.fragment(v, "manager/run", "run-state", st)
		if err != nil {
			s.cfg.Logger.ErrorContext(ctx, "studio: drawing a run's state", "run", id, "error", err)
			return false
		}
		ok := write(sseEvent("run", frag))
		if ok && st.Finished {
			ok = write(sseEvent("done", "finished"))
		}
		return ok && !st.Finished
	}
	if !send(st) {
		return nil
	}
	msgs := make(chan *webhooksv1.ListenEventsResponse)
	go func() {
		defer close(msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-msgs:
			if !ok {
				// The service ended the stream (a restart): the page's
				// EventSource opens it again.
				return nil
			}
			if ev := m.GetEvent(); ev != nil {
				if ev.GetData().AsMap()["run_id"] != id {
					continue
				}
			} else if !write([]byte(": heartbeat\n\n")) {
				return nil
			}
			next, err := s.runState(v, id, names)
			if err != nil {
				return nil
			}
			if next.Run.GetState() == st.Run.GetState() && !next.Finished {
				continue
			}
			st = next
			if !send(st) {
				return nil
			}
		}
	}
}

// sseEvent is one server-sent event: its name and its data, a data: line
// per line of it.
func sseEvent(name, data string) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for line := range strings.SplitSeq(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}

// fragment renders the template block name of page with data d, as the
// page itself would (.V and .D), for a part of the page sent alone.
func (s *Studio) fragment(v *visit, page, name string, d any) (string, error) {
	t := s.pages.byName[page]
	if t == nil {
		return "", errNoTemplate(page)
	}
	var buf bytes.Buffer
	err := t.ExecuteTemplate(&buf, name, struct {
		V View
		D any
	}{View{v: v, Version: s.cfg.Version}, d})
	return buf.String(), err
}

type errNoTemplate string

func (e errNoTemplate) Error() string { return "studio: no page template " + string(e) }
