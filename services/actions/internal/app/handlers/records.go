package handlers

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/atrium-hq/atrium/services/actions/internal/app/action"
)

// How the handlers build the rows they write: ids that are the same each
// time a run's writes are built, timestamps, and the record a response
// shows.

// recordSpace is the UUID namespace of record ids derived from names.
var recordSpace = uuid.MustParse("6f1c2b7e-3c1d-5e7a-9b0c-a1d2e3f4a5b6")

// newID is the id of the n-th new record of a resource in this run: the
// same every time the run's writes are built, so writing them twice writes
// the same rows.
func newID(x *action.Exec, resource string, n int) string {
	return uuid.NewSHA1(recordSpace, []byte(x.RunID+"|"+resource+"|"+strconv.Itoa(n))).String()
}

// keyID is the id of the client's record of a resource that a refresh
// updates in place: the same for the same key, run after run.
func keyID(x *action.Exec, resource, key string) string {
	return uuid.NewSHA1(recordSpace, []byte(x.Client.ID+"|"+resource+"|"+key)).String()
}

// normalURL is a URL as refresh keys use it: lower-case scheme and host,
// no fragment, no trailing slash on a path.
func normalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host, u.Fragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), ""
	if len(u.Path) > 1 {
		u.Path = strings.TrimSuffix(u.Path, "/")
	}
	return u.String()
}

// ts is a timestamp as rows carry it.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// published is how content is stored: a draft, or published at now when
// the client deploys without review.
func published(x *action.Exec) (status string, published bool) {
	if x.Client.AutoDeploy {
		return "published", true
	}
	return "draft", false
}

// withModel is a record as the response shows it: the row, and what wrote
// it.
func withModel(row map[string]any, model string) map[string]any {
	out := make(map[string]any, len(row)+1)
	for k, v := range row {
		out[k] = v
	}
	out["model"] = model
	return out
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// upsert is a write of rows into the dataset resource, replacing any with
// the same id.
func upsert(resource string, rows ...map[string]any) action.RecordWrite {
	return action.RecordWrite{Resource: resource, Mode: action.Upsert, Rows: rows}
}
