package dataforseotest

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The endpoints the dataforseo adapter calls.
const (
	PathLocations   = "/v3/dataforseo_labs/locations_and_languages"
	PathKeywordIdea = "/v3/dataforseo_labs/google/keyword_ideas/live"
	PathMaps        = "/v3/serp/google/maps/live/advanced"
	PathBacklinks   = "/v3/backlinks/backlinks/live"
	PathSummary     = "/v3/backlinks/summary/live"
	PathBulkRanks   = "/v3/backlinks/bulk_ranks/live"
)

// Prices, in US dollars, in the range of DataForSEO's published ones: a
// task's base price and, where DataForSEO charges by the row, the price of
// each row returned.
const (
	PriceKeywordIdeas    = 0.01
	PriceKeywordIdeasRow = 0.0001
	PriceMaps            = 0.002
	PriceBacklinks       = 0.02
	PriceBacklinksRow    = 0.00003
	PriceSummary         = 0.02
	PriceBulkRanks       = 0.02
	PriceBulkRanksRow    = 0.00003
)

// DataForSEO status codes the server answers with.
const (
	StatusOK            = 20000
	StatusUnauthorized  = 40100
	StatusNoResults     = 40102
	StatusRateLimit     = 40202
	StatusCostLimit     = 40203
	StatusFunds         = 40210
	StatusNotFound      = 40400
	StatusInvalidField  = 40501
	StatusInternalError = 50000
)

// Config configures a Server.
type Config struct {
	// Login and Password are the credentials it accepts (HTTP Basic).
	Login, Password string
	// RatePerMinute, when positive, is the account's rate limit: a request
	// beyond it within any minute is answered 40202, as DataForSEO does.
	RatePerMinute int
	// Now is the server's clock, for the rate limit; nil: time.Now.
	Now func() time.Time
	// Businesses are the places a Maps search finds, nearest first. Empty:
	// every search finds a neighbourhood of its own (Neighbourhood).
	Businesses []Business
	// BacklinksPerTarget is how many backlinks a target has listed; the
	// summary counts more. Zero: 30.
	BacklinksPerTarget int
}

// Business is a place on the map.
type Business struct {
	Title    string
	Domain   string // empty: no website
	Lat, Lng float64
}

// Fault is one answer that goes wrong.
type Fault struct {
	// Status is a DataForSEO status code answered inside HTTP 200: at the
	// top level of the envelope, or the task's when Task is set (40202,
	// 40210, 50000, 40102, ...). Message overrides the documented message.
	Status  int
	Task    bool
	Message string
	// HTTPStatus answers with this HTTP status instead (401, 402, 404,
	// 500), with DataForSEO's envelope.
	HTTPStatus int
	// Body answers HTTP 200 with this body as it is: a malformed answer.
	Body string
	// Hang holds the answer until the client gives up or Release is
	// called: a slow answer.
	Hang bool
	// Cost is reported with the fault: a failure DataForSEO still charges.
	// A Body fault costs what its body says, if it can be read.
	Cost float64
}

// Call is one request the server answered.
type Call struct {
	Path string
	// Task is the request's first task, as sent (nil for a GET).
	Task map[string]any
	// Status is the DataForSEO status code answered (the task's when the
	// envelope's was 20000), or the HTTP status of an HTTP error, 0 for a
	// malformed body or an answer that never came.
	Status int
	// Cost is what the answer reported costing.
	Cost float64
	At   time.Time
}

// Server is the stand-in; use it as an http.Handler (httptest.NewServer).
type Server struct {
	cfg     Config
	mu      sync.Mutex
	faults  map[string][]Fault
	calls   []Call
	recent  []time.Time // request times within the last minute, for the rate limit
	release chan struct{}
}

// New returns a server with cfg.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BacklinksPerTarget <= 0 {
		cfg.BacklinksPerTarget = 30
	}
	return &Server{cfg: cfg, faults: map[string][]Fault{}, release: make(chan struct{})}
}

// Inject queues faults for the endpoint at path: each of its next requests
// takes the first one left.
func (s *Server) Inject(path string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], faults...)
}

// Faults returns how many faults are still queued for path.
func (s *Server) Faults(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults[path])
}

// Release answers every request held by a Hang fault, now and later.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// Calls returns the requests answered so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo counts the requests answered at path.
func (s *Server) CallsTo(path string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Path == path {
			n++
		}
	}
	return n
}

// Spent is the sum of the costs the server reported.
func (s *Server) Spent() float64 {
	var sum float64
	for _, c := range s.Calls() {
		sum += c.Cost
	}
	return round6(sum)
}

// SetBusinesses replaces the places Maps searches find.
func (s *Server) SetBusinesses(b []Business) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Businesses = slices.Clone(b)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// takeFault pops the next fault for path.
func (s *Server) takeFault(path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[path]
	if len(q) == 0 {
		return Fault{}, false
	}
	s.faults[path] = q[1:]
	return q[0], true
}

// limited reports whether a request now is beyond the account's rate limit,
// and counts it if not.
func (s *Server) limited(now time.Time) bool {
	if s.cfg.RatePerMinute <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.recent[:0]
	for _, t := range s.recent {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	s.recent = keep
	if len(s.recent) >= s.cfg.RatePerMinute {
		return true
	}
	s.recent = append(s.recent, now)
	return false
}

// messages are DataForSEO's documented messages for its status codes.
var messages = map[int]string{
	StatusOK:            "Ok.",
	StatusUnauthorized:  "You are not authorized to access this resource.",
	StatusNoResults:     "No Search Results.",
	StatusRateLimit:     "Rate-limit per minute exceeded. Please, try again later.",
	StatusCostLimit:     "The cost limit has been exceeded. You can modify your cost limit in the user panel https://app.dataforseo.com/api-dashboard .",
	StatusFunds:         "Insufficient funds. Please, top up your account balance.",
	StatusNotFound:      "Not Found.",
	StatusInvalidField:  "Invalid Field.",
	StatusInternalError: "Internal Server Error.",
}

func message(code int, override string) string {
	if override != "" {
		return override
	}
	if m, ok := messages[code]; ok {
		return m
	}
	return fmt.Sprintf("Error %d.", code)
}

// answer is what an endpoint computes for one task: its result, what it
// costs, or the status it refuses the task with.
type answer struct {
	result any
	cost   float64
	status int
	msg    string
}

// ServeHTTP answers a request as DataForSEO would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	user, pass, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.Login)) != 1 ||
		subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.Password)) != 1 {
		s.writeEnvelope(w, http.StatusUnauthorized, r.URL.Path, nil, StatusUnauthorized, "", 0, answer{})
		s.record(Call{Path: r.URL.Path, Status: http.StatusUnauthorized, At: now})
		return
	}
	handle, method := s.endpoint(r.URL.Path)
	if handle == nil || r.Method != method {
		s.writeEnvelope(w, http.StatusNotFound, r.URL.Path, nil, StatusNotFound, "", 0, answer{})
		s.record(Call{Path: r.URL.Path, Status: http.StatusNotFound, At: now})
		return
	}
	var task map[string]any
	if r.Method == http.MethodPost {
		var tasks []map[string]any
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err := json.Unmarshal(body, &tasks); err != nil || len(tasks) != 1 {
			s.writeEnvelope(w, http.StatusOK, r.URL.Path, nil, 40503, "POST Data Is Invalid.", 0, answer{})
			s.record(Call{Path: r.URL.Path, Status: 40503, At: now})
			return
		}
		task = tasks[0]
	}
	call := Call{Path: r.URL.Path, Task: task, At: now}
	if f, ok := s.takeFault(r.URL.Path); ok {
		s.fault(w, r, call, f)
		return
	}
	if s.limited(now) {
		call.Status = StatusRateLimit
		s.record(call)
		s.writeEnvelope(w, http.StatusOK, r.URL.Path, task, StatusRateLimit, "", 0, answer{})
		return
	}
	a := handle(task)
	if a.status == 0 {
		a.status = StatusOK
	}
	a.cost = round6(a.cost)
	call.Status, call.Cost = a.status, a.cost
	s.record(call)
	// A refused task is answered in a successful envelope, as DataForSEO
	// does: tasks_error counts it.
	s.writeEnvelope(w, http.StatusOK, r.URL.Path, task, StatusOK, "", a.cost, a)
}

func (s *Server) endpoint(path string) (func(map[string]any) answer, string) {
	switch path {
	case PathLocations:
		return func(map[string]any) answer { return answer{result: locationsResult()} }, http.MethodGet
	case PathKeywordIdea:
		return keywordIdeas, http.MethodPost
	case PathMaps:
		return s.maps, http.MethodPost
	case PathBacklinks:
		return s.backlinks, http.MethodPost
	case PathSummary:
		return s.summary, http.MethodPost
	case PathBulkRanks:
		return bulkRanks, http.MethodPost
	}
	return nil, ""
}

func (s *Server) fault(w http.ResponseWriter, r *http.Request, call Call, f Fault) {
	switch {
	case f.Hang:
		s.record(call)
		select {
		case <-r.Context().Done():
			return
		case <-s.release:
		}
		call.Status = StatusOK
		a := s.mustAnswer(r.URL.Path, call.Task)
		s.writeEnvelope(w, http.StatusOK, r.URL.Path, call.Task, StatusOK, "", a.cost, a)
	case f.Body != "":
		// What the body says it cost, if it says so readably.
		var env struct {
			Cost float64 `json:"cost"`
		}
		if json.Unmarshal([]byte(f.Body), &env) == nil {
			call.Cost = env.Cost
		}
		s.record(call)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, f.Body)
	case f.HTTPStatus != 0:
		call.Status, call.Cost = f.HTTPStatus, f.Cost
		s.record(call)
		code := f.Status
		if code == 0 {
			code = f.HTTPStatus * 100
		}
		s.writeEnvelope(w, f.HTTPStatus, r.URL.Path, call.Task, code, f.Message, f.Cost, answer{})
	case f.Task:
		call.Status, call.Cost = f.Status, f.Cost
		s.record(call)
		s.writeEnvelope(w, http.StatusOK, r.URL.Path, call.Task, StatusOK, "", f.Cost, answer{status: f.Status, msg: f.Message, cost: f.Cost})
	default:
		call.Status, call.Cost = f.Status, f.Cost
		s.record(call)
		s.writeEnvelope(w, http.StatusOK, r.URL.Path, call.Task, f.Status, f.Message, f.Cost, answer{})
	}
}

func (s *Server) mustAnswer(path string, task map[string]any) answer {
	handle, _ := s.endpoint(path)
	a := handle(task)
	if a.status == 0 {
		a.status = StatusOK
	}
	a.cost = round6(a.cost)
	return a
}

// writeEnvelope writes DataForSEO's envelope: the request's status, and
// its one task with a's status and result when the request was accepted.
func (s *Server) writeEnvelope(w http.ResponseWriter, httpStatus int, path string, task map[string]any, status int, msg string, cost float64, a answer) {
	env := map[string]any{
		"version": "0.1.20260101", "status_code": status, "status_message": message(status, msg),
		"time": "0.1234 sec.", "cost": round6(cost), "tasks_count": 0, "tasks_error": 0, "tasks": nil,
	}
	if status == StatusOK {
		data := map[string]any{}
		for k, v := range task {
			data[k] = v
		}
		parts := strings.Split(strings.Trim(path, "/"), "/")
		data["api"] = parts[1]
		data["function"] = parts[len(parts)-2]
		if len(parts) > 3 {
			data["se"] = parts[2]
		}
		t := map[string]any{
			"id": taskID(path, task), "status_code": a.status, "status_message": message(a.status, a.msg),
			"time": "0.1000 sec.", "cost": round6(a.cost), "result_count": 0, "path": parts, "data": data, "result": nil,
		}
		if a.status == StatusOK {
			t["result_count"], t["result"] = 1, []any{a.result}
			if list, ok := a.result.([]any); ok {
				t["result_count"], t["result"] = len(list), list
			}
		} else {
			env["tasks_error"] = 1
		}
		env["tasks_count"], env["tasks"] = 1, []any{t}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_ = json.NewEncoder(w).Encode(env)
}

// taskID is a task identifier in DataForSEO's UUID-like format, derived
// from the request.
func taskID(path string, task map[string]any) string {
	b, _ := json.Marshal(task)
	h := hash(path, string(b))
	x := fmt.Sprintf("%016x", h)
	return x[:8] + "-" + x[8:12] + "-" + x[12:] + "-0000-" + x[4:]
}

func hash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// unit returns a number in [0, 1) derived from the parts.
func unit(parts ...string) float64 { return float64(hash(parts...)>>11) / (1 << 53) }

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func str(task map[string]any, k string) string { s, _ := task[k].(string); return s }

func num(task map[string]any, k string) (float64, bool) { f, ok := task[k].(float64); return f, ok }
