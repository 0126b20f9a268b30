package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/gateway/openapi"
)

// The actions group: discovery, runs and their state.

// ActionsAPI is what the action tools call.
type ActionsAPI interface {
	// ListActions answers the actions (GET /api/v1/actions): a JSON
	// array of their descriptions.
	ListActions(ctx context.Context) (json.RawMessage, error)
	// Credits is the agency's balance (GET /api/v1/credits).
	Credits(ctx context.Context) (Credits, error)
	// RunAction runs an action (POST /api/v1/data) and answers its
	// outcome, a run that ended in error included.
	RunAction(ctx context.Context, r RunRequest) (*RunOutcome, error)
	// GetRun answers a run (GET /api/v1/runs/{run_id}): the run object.
	GetRun(ctx context.Context, id string) (json.RawMessage, error)
}

// RunRequest is a run of an action for a client with its fields.
type RunRequest struct {
	Action, ClientID string
	Fields           map[string]any
	// IdempotencyKey makes a retry answer the first run; "": one of the
	// port's own, a new run each call.
	IdempotencyKey string
}

// RunOutcome is the API's answer to a run.
type RunOutcome struct {
	Action, ClientID string
	// Status is success or error; StatusCode the provider's or the
	// generator's.
	Status     string
	StatusCode int
	Data       map[string]any
	// Remaining is the agency's balance after the run.
	Remaining Credits
	// Replayed: the answer of an earlier run with the same key.
	Replayed bool
	// IdempotencyKey is the key the run was sent with.
	IdempotencyKey string
}

// runResult is what run_action answers: the API's outcome of the run,
// the balance after it, and the idempotency key to reuse on a retry.
type runResult struct {
	Action     string         `json:"action"`
	ClientID   string         `json:"client_id"`
	Status     string         `json:"status"`
	StatusCode int            `json:"status_code"`
	Data       map[string]any `json:"data"`
	// RemainingCredits is the agency's balance after the run.
	RemainingCredits Credits `json:"remaining_credits"`
	// Replayed: the answer of an earlier call with the same key, not a
	// new run (nothing was charged again).
	Replayed       bool   `json:"replayed"`
	IdempotencyKey string `json:"idempotency_key"`
}

func (r runResult) failed() bool { return r.Status != "success" }

// runArgs are run_action's own arguments; every other one is a field of
// the action.
var runArgs = []string{"action", "client_id", "input", "idempotency_key"}

func actionTools(actions []openapi.ActionInfo) []tool {
	names := make([]string, 0, len(actions))
	var costs strings.Builder
	for _, a := range actions {
		names = append(names, a.Name)
		fmt.Fprintf(&costs, "\n- %s (%s): %s", a.Name, a.Cost, a.Description)
	}
	return []tool{
		{
			def: &mcp.Tool{Name: "list_actions", Title: "List actions", Annotations: reading,
				Description: "Lists the actions run_action runs (GET /api/v1/actions): each one's description, fields, credit cost, " +
					"the dataset its record goes to, how long it typically takes and its input_schema (the JSON Schema of its fields); " +
					"and the agency's credit balance (GET /api/v1/credits).",
				InputSchema: object(nil, map[string]any{})},
			method: listActions,
			add: handler(func(ctx context.Context, api API, _ noArgs) (any, error) {
				list, err := api.ListActions(ctx)
				if err != nil {
					return nil, err
				}
				bal, err := api.Credits(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]any{"actions": list, "balance": bal}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "run_action", Title: "Run an action", Annotations: acting,
				Description: "Runs an action for a client (POST /api/v1/data) and answers its outcome: status success or error, " +
					"the record it wrote as data, and the agency's remaining credits. A run that ends in error is not charged. " +
					"Give the action's own fields in input (or at the top level), as list_actions's input_schema describes them. " +
					"Pass an idempotency_key of your choice and reuse it if you retry: a run with the same key and arguments " +
					"answers the first run's outcome (replayed: true) and is never run or charged twice. " +
					"The actions and their cost in credits:" + costs.String(),
				InputSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"action":    oneOf("The action to run.", names),
						"client_id": uuid("The client to run it for: a client linked to the agency (list_clients gives the ids)."),
						"input":     anyObject("The action's own fields (list_actions gives each action's input_schema); they may also be given at the top level."),
						"idempotency_key": map[string]any{"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$",
							"description": "A key of your choice (a UUID, say) that makes a retry safe: the same key with the same arguments runs the action once."},
					},
					"required": []string{"action", "client_id"},
					// The action's fields may come at the top level, as the
					// HTTP API's body has them; the API checks them.
					"additionalProperties": true,
				}},
			method: runAction,
			add: handler(func(ctx context.Context, api API, in map[string]any) (any, error) {
				action, _ := in["action"].(string)
				clientID, _ := in["client_id"].(string)
				key, _ := in["idempotency_key"].(string)
				fields := map[string]any{}
				if input, ok := in["input"].(map[string]any); ok {
					maps.Copy(fields, input)
				} else if in["input"] != nil {
					return nil, fmt.Errorf("input must be an object of the action's fields; got %T", in["input"])
				}
				for k, v := range in {
					if slices.Contains(runArgs, k) {
						continue
					}
					if _, dup := fields[k]; dup {
						return nil, fmt.Errorf("field %s is given both in input and at the top level; give it once", k)
					}
					fields[k] = v
				}
				res, err := api.RunAction(ctx, RunRequest{Action: action, ClientID: clientID, Fields: fields, IdempotencyKey: key})
				if err != nil {
					return nil, err
				}
				return runResult{Action: res.Action, ClientID: res.ClientID, Status: res.Status, StatusCode: res.StatusCode, Data: res.Data,
					RemainingCredits: res.Remaining, Replayed: res.Replayed, IdempotencyKey: res.IdempotencyKey}, nil
			}),
		},
		{
			def: &mcp.Tool{Name: "get_run", Title: "Get an action run", Annotations: reading,
				Description: "Reads one of the agency's action runs (GET /api/v1/runs/{run_id}): its state (queued, running, success, error, canceled), its outcome and credits.",
				InputSchema: object([]string{"run_id"}, map[string]any{"run_id": uuid("The run's id.")})},
			method: getRun,
			add: handler(func(ctx context.Context, api API, in struct {
				RunID string `json:"run_id"`
			}) (any, error) {
				run, err := api.GetRun(ctx, in.RunID)
				if err != nil {
					return nil, err
				}
				return map[string]any{"run": run}, nil
			}),
		},
	}
}
