package openai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/openai"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider/providertest"
)

// TestTextContract runs the text generator's contract against a local
// OpenAI-compatible server that answers as a model told what this adapter
// tells it would: one JSON object with a string for each field the brief's
// "Write these fields:" list names, or prose to a question asked alone.
func TestTextContract(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error": {"message": "not a chat completion request"}}`, http.StatusBadRequest)
			return
		}
		// An answer engine is asked the user's question alone, and answers
		// in prose.
		if len(req.Messages) == 1 && !strings.Contains(req.Messages[0].Content, "Write these fields:") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, completion("local-model-2026-01", "Many people recommend Babel for brunch in Zürich."))
			return
		}
		answer := map[string]string{}
		for _, m := range req.Messages {
			_, fields, ok := strings.Cut(m.Content, "Write these fields:\n")
			if m.Role != "user" || !ok {
				continue
			}
			for _, line := range strings.Split(fields, "\n") {
				name, desc, _ := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
				if name != "" {
					answer[name] = "A model's " + name + " (" + desc + ")."
				}
			}
		}
		content, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completion("local-model-2026-01", string(content)))
	}))
	t.Cleanup(srv.Close)
	providertest.RunText(t, func(t *testing.T) provider.TextGenerator {
		return newGenerator(t, openai.Config{BaseURL: srv.URL + "/v1"})
	})
}
