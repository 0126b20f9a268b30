package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/services/actions/internal/adapters/openai"
	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

const testKey = "sk-test-0123456789abcdef"

// blogRequest is what generate_blog asks for, with a hint that must never
// reach the model.
func blogRequest() provider.TextRequest {
	return provider.TextRequest{
		Kind:         provider.TextBlogArticle,
		Instructions: "Write a blog article for the client's website.",
		Inputs: map[string]string{
			"keyword":       "emergency plumber",
			"tone":          "friendly",
			"client_name":   "Acme Plumbing",
			"client_domain": "acmeplumbing.example",
		},
		Hints: map[string]string{"brand_name": "SecretBrandXYZ"},
		Fields: []provider.TextField{
			{Name: "title", Description: "the article's title, under 60 characters"},
			{Name: "meta_description", Description: "120 to 160 characters"},
			{Name: "content", Description: "HTML with <h2> sections"},
		},
	}
}

// completion is a chat-completions answer whose message content is content.
func completion(model, content string) string {
	b, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
	})
	return string(b)
}

const goodContent = `{"title": "Emergency Plumber Tips", "meta_description": "What to do when a pipe bursts.", "content": "<h2>Call early</h2><p>Do not wait.</p>"}`

// captured is the last request a test server received.
type captured struct {
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   []byte
}

func (c *captured) get() (string, string, http.Header, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.method, c.path, c.header, c.body
}

// server starts a chat-completions server that records the request and
// answers with status, content type and body.
func server(t *testing.T, status int, contentType, body string) (*httptest.Server, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.method, c.path, c.header, c.body = r.Method, r.URL.Path, r.Header.Clone(), b
		c.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

func newGenerator(t *testing.T, cfg openai.Config) *openai.Generator {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
	}
	g, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func providerError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want *provider.Error", err, err)
	}
	return pe
}

func TestGenerateSendsTheBriefAndReadsTheFields(t *testing.T) {
	srv, c := server(t, 200, "application/json", completion("gpt-test-2025-01-01", goodContent))
	temp := 0.4
	g := newGenerator(t, openai.Config{BaseURL: srv.URL + "/v1/", APIKey: testKey, Temperature: &temp})

	text, err := g.Generate(context.Background(), blogRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := map[string]string{
		"title":            "Emergency Plumber Tips",
		"meta_description": "What to do when a pipe bursts.",
		"content":          "<h2>Call early</h2><p>Do not wait.</p>",
	}
	if len(text.Fields) != len(want) {
		t.Errorf("fields = %v, want %v", text.Fields, want)
	}
	for k, v := range want {
		if text.Fields[k] != v {
			t.Errorf("field %s = %q, want %q", k, text.Fields[k], v)
		}
	}
	if text.Model != "gpt-test-2025-01-01" {
		t.Errorf("model = %q, want the model the server named", text.Model)
	}

	method, path, header, body := c.get()
	if method != http.MethodPost || path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", method, path)
	}
	if got := header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", got)
	}
	if strings.Contains(string(body), "SecretBrandXYZ") {
		t.Errorf("the request carries a hint: %s", body)
	}
	var sent struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature    *float64 `json:"temperature"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	if sent.Model != "gpt-test" {
		t.Errorf("model = %q, want gpt-test", sent.Model)
	}
	if sent.ResponseFormat.Type != "json_object" {
		t.Errorf("response_format = %q, want json_object", sent.ResponseFormat.Type)
	}
	if sent.Temperature == nil || *sent.Temperature != 0.4 {
		t.Errorf("temperature = %v, want 0.4", sent.Temperature)
	}
	if len(sent.Messages) != 2 || sent.Messages[0].Role != "system" || sent.Messages[1].Role != "user" {
		t.Fatalf("messages = %+v, want a system and a user message", sent.Messages)
	}
	system, user := sent.Messages[0].Content, sent.Messages[1].Content
	for _, s := range []string{"JSON", `"title"`, `"meta_description"`, `"content"`} {
		if !strings.Contains(system, s) {
			t.Errorf("system message lacks %s: %q", s, system)
		}
	}
	for _, s := range []string{
		"Write a blog article for the client's website.",
		"keyword: emergency plumber", "tone: friendly", "client_name: Acme Plumbing", "client_domain: acmeplumbing.example",
		"title: the article's title, under 60 characters", "content: HTML with <h2> sections",
	} {
		if !strings.Contains(user, s) {
			t.Errorf("user message lacks %q: %q", s, user)
		}
	}
}

func TestGenerateWithoutKeySendsNoAuthorizationAndFallsBackToTheConfiguredModel(t *testing.T) {
	srv, c := server(t, 200, "application/json", completion("", goodContent))
	g := newGenerator(t, openai.Config{BaseURL: srv.URL, Model: "llama3.1"})
	text, err := g.Generate(context.Background(), blogRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if text.Model != "llama3.1" {
		t.Errorf("model = %q, want the configured llama3.1", text.Model)
	}
	if _, _, header, _ := c.get(); header.Get("Authorization") != "" {
		t.Errorf("Authorization = %q, want none without a key", header.Get("Authorization"))
	}
	if _, path, _, _ := c.get(); path != "/chat/completions" {
		t.Errorf("path = %q, want /chat/completions", path)
	}
}

func TestGenerateToleratesFencesTextAroundTheObjectAndNumbers(t *testing.T) {
	for name, content := range map[string]string{
		"fence":       "```json\n" + goodContent + "\n```",
		"bare fence":  "```\n" + goodContent + "\n```",
		"chatty":      "Sure! Here is the article: " + goodContent + " Let me know if you need changes {ok}.",
		"fence+words": "Here you go:\n```json\n" + goodContent + "\n```\nEnjoy.",
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := server(t, 200, "application/json", completion("m", content))
			g := newGenerator(t, openai.Config{BaseURL: srv.URL})
			text, err := g.Generate(context.Background(), blogRequest())
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if text.Fields["title"] != "Emergency Plumber Tips" || text.Fields["content"] == "" {
				t.Errorf("fields = %v", text.Fields)
			}
		})
	}
	t.Run("number and list", func(t *testing.T) {
		srv, _ := server(t, 200, "application/json", completion("m", `{"count": 42, "recommendations": ["Fix the title", "Add alt text"]}`))
		g := newGenerator(t, openai.Config{BaseURL: srv.URL})
		text, err := g.Generate(context.Background(), provider.TextRequest{Fields: []provider.TextField{{Name: "count"}, {Name: "recommendations"}}})
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if text.Fields["count"] != "42" || text.Fields["recommendations"] != "Fix the title\nAdd alt text" {
			t.Errorf("fields = %q", text.Fields)
		}
	})
}

func TestGenerateRejectsAnswersWithoutEveryField(t *testing.T) {
	for name, tc := range map[string]struct{ content, want string }{
		"missing field":   {`{"title": "T", "meta_description": "M"}`, "the model's answer did not contain content"},
		"empty field":     {`{"title": "T", "meta_description": "  ", "content": "C"}`, "the model's answer left meta_description empty"},
		"object field":    {`{"title": "T", "meta_description": "M", "content": {"h2": "x"}}`, "content as an object"},
		"not JSON":        {`I cannot help with that.`, "not a JSON object"},
		"empty content":   {``, "the model's answer was empty"},
		"array of object": {`[{"title": "T"}]`, "did not contain meta_description"},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := server(t, 200, "application/json", completion("m", tc.content))
			g := newGenerator(t, openai.Config{BaseURL: srv.URL})
			_, err := g.Generate(context.Background(), blogRequest())
			pe := providerError(t, err)
			if pe.StatusCode != 502 || !strings.Contains(pe.Message, tc.want) {
				t.Errorf("error = %d %q, want 502 containing %q", pe.StatusCode, pe.Message, tc.want)
			}
		})
	}
	t.Run("no choices", func(t *testing.T) {
		srv, _ := server(t, 200, "application/json", `{"model": "m", "choices": []}`)
		g := newGenerator(t, openai.Config{BaseURL: srv.URL})
		_, err := g.Generate(context.Background(), blogRequest())
		if pe := providerError(t, err); pe.StatusCode != 502 || !strings.Contains(pe.Message, "no choices") {
			t.Errorf("error = %d %q, want 502 no choices", pe.StatusCode, pe.Message)
		}
	})
}

func TestGeneratePassesProviderStatusesThrough(t *testing.T) {
	for name, tc := range map[string]struct {
		status      int
		contentType string
		body        string
		want        []string
	}{
		"401": {401, "application/json",
			`{"error": {"message": "Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error"}}`,
			[]string{"refused the API key", "HTTP 401", "Incorrect API key provided"}},
		"404": {404, "application/json", `{"error": {"message": "model \"gpt-test\" not found, try pulling it first"}}`,
			[]string{`no model "gpt-test"`, "base URL is wrong", "not found, try pulling it first"}},
		"429": {429, "application/json", `{"error": {"message": "Rate limit reached for requests"}}`,
			[]string{"rate limiting", "retry later", "Rate limit reached for requests"}},
		"500": {500, "application/json", `{"error": {"message": "The server had an error while processing your request."}}`,
			[]string{"the text generator failed", "HTTP 500", "The server had an error"}},
		"502 html": {502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>",
			[]string{"the text generator failed", "HTTP 502"}},
		"string error": {400, "application/json", `{"error": "response_format is not supported"}`,
			[]string{"rejected the request", "response_format is not supported"}},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := server(t, tc.status, tc.contentType, tc.body)
			g := newGenerator(t, openai.Config{BaseURL: srv.URL, APIKey: testKey})
			_, err := g.Generate(context.Background(), blogRequest())
			pe := providerError(t, err)
			if pe.StatusCode != tc.status {
				t.Errorf("status = %d, want the provider's %d", pe.StatusCode, tc.status)
			}
			for _, s := range tc.want {
				if !strings.Contains(pe.Message, s) {
					t.Errorf("message %q lacks %q", pe.Message, s)
				}
			}
			if strings.Contains(pe.Message, testKey) || strings.Contains(pe.Error(), testKey) || strings.Contains(pe.Message, "sk-") {
				t.Errorf("message leaks the key: %q", pe.Message)
			}
			if strings.Contains(pe.Message, "<html>") {
				t.Errorf("message carries the HTML page: %q", pe.Message)
			}
		})
	}
}

func TestGenerateTruncatesLongProviderMessages(t *testing.T) {
	long := strings.Repeat("overloaded ", 200)
	srv, _ := server(t, 503, "application/json", `{"error": {"message": "`+long+`"}}`)
	g := newGenerator(t, openai.Config{BaseURL: srv.URL})
	_, err := g.Generate(context.Background(), blogRequest())
	pe := providerError(t, err)
	if pe.StatusCode != 503 {
		t.Errorf("status = %d, want 503", pe.StatusCode)
	}
	if n := len([]rune(pe.Message)); n > 400 || !strings.Contains(pe.Message, "overloaded") {
		t.Errorf("message is %d characters, want the provider's words cut to about 300: %q", n, pe.Message)
	}
}

func TestGenerateTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	g := newGenerator(t, openai.Config{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})

	start := time.Now()
	_, err := g.Generate(context.Background(), blogRequest())
	elapsed := time.Since(start)
	pe := providerError(t, err)
	if pe.StatusCode != 504 || pe.Message != "the text generator did not answer within 100ms" {
		t.Errorf("error = %d %q, want 504 did not answer within 100ms", pe.StatusCode, pe.Message)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Generate returned after %s, want soon after the 100ms timeout", elapsed)
	}
}

func TestGenerateReturnsTheCallersCancellation(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	g := newGenerator(t, openai.Config{BaseURL: srv.URL, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := g.Generate(ctx, blogRequest())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		t.Errorf("error is a ProviderError %q, want the context's error", pe.Message)
	}
}

func TestGenerateRefusesAnOversizeAnswer(t *testing.T) {
	big := completion("m", `{"title": "`+strings.Repeat("x", 5000)+`"}`)
	srv, _ := server(t, 200, "application/json", big)
	g := newGenerator(t, openai.Config{BaseURL: srv.URL, MaxResponseBytes: 1024})
	_, err := g.Generate(context.Background(), provider.TextRequest{Fields: []provider.TextField{{Name: "title"}}})
	pe := providerError(t, err)
	if pe.StatusCode != 502 || !strings.Contains(pe.Message, "larger than 1 KiB") {
		t.Errorf("error = %d %q, want 502 larger than 1 KiB", pe.StatusCode, pe.Message)
	}
}

func TestGenerateReportsAServerThatIsNotListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	g := newGenerator(t, openai.Config{BaseURL: "http://" + addr + "/v1", Timeout: 5 * time.Second})
	_, err = g.Generate(context.Background(), blogRequest())
	pe := providerError(t, err)
	if pe.StatusCode != 503 || pe.Message != "cannot reach the text generator at "+addr {
		t.Errorf("error = %d %q, want 503 cannot reach the text generator at %s", pe.StatusCode, pe.Message, addr)
	}
}

func TestNewValidatesTheConfiguration(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  openai.Config
		want string
	}{
		"relative URL":  {openai.Config{BaseURL: "api.openai.com/v1", Model: "m"}, "base URL"},
		"ftp URL":       {openai.Config{BaseURL: "ftp://example.com/v1", Model: "m"}, "base URL"},
		"empty URL":     {openai.Config{Model: "m"}, "base URL"},
		"no model":      {openai.Config{BaseURL: "http://127.0.0.1:11434/v1"}, "model"},
		"neg timeout":   {openai.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", Timeout: -time.Second}, "timeout"},
		"hot":           {openai.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", Temperature: new(3.0)}, "temperature"},
		"neg max bytes": {openai.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", MaxResponseBytes: -1}, "max response bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := openai.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want one naming %s", err, tc.want)
			}
		})
	}
	if _, err := openai.New(openai.Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}); err != nil {
		t.Errorf("New with a good config: %v", err)
	}
}

// An answer engine is asked the user's question as a user would ask it:
// the prompt alone, with no system prompt, no JSON format and never the
// brand looked for; its reply, whatever its form, is the answer, labelled
// with the model that gave it.
func TestTheAnswerEngineIsAskedOnlyThePrompt(t *testing.T) {
	reply := "For brunch in Zürich, try Babel or Café Zoë.\n\n1. Babel\n2. Café Zoë"
	srv, c := server(t, 200, "application/json", completion("gpt-4o-mini-2024-07-18", reply))
	g := newGenerator(t, openai.Config{BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini"})
	text, err := g.Generate(t.Context(), provider.TextRequest{
		Kind: provider.TextLLMAnswer, Instructions: "Answer the user's question as a helpful answer engine would.",
		Inputs: map[string]string{"prompt": "  Where is the best brunch in Zürich?  "},
		Hints:  map[string]string{"brand_name": "SecretBrandXYZ", "competitors": "Babel"},
		Fields: []provider.TextField{{Name: "answer", Description: "the answer to the question"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.Fields["answer"] != reply || text.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("answer %q by %q, want the reply as it is, by the model that answered", text.Fields["answer"], text.Model)
	}
	_, _, _, body := c.get()
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"role": "user", "content": "Where is the best brunch in Zürich?"}}
	if !reflect.DeepEqual(sent["messages"], want) || sent["response_format"] != nil || strings.Contains(string(body), "SecretBrandXYZ") {
		t.Errorf("sent %s, want only the user's question", body)
	}

	srv, _ = server(t, 200, "application/json", completion("m", "   "))
	g = newGenerator(t, openai.Config{BaseURL: srv.URL + "/v1"})
	_, err = g.Generate(t.Context(), provider.TextRequest{Kind: provider.TextLLMAnswer, Inputs: map[string]string{"prompt": "q?"},
		Fields: []provider.TextField{{Name: "answer"}}})
	if pe := providerError(t, err); pe.StatusCode != 502 {
		t.Errorf("an empty answer: %v, want 502", pe)
	}
}
