// Package openai is the actions service's text generator over the
// OpenAI-compatible chat-completions API: the HTTP API that OpenAI, vLLM,
// Ollama and llama.cpp's server all speak. It asks the model for one JSON
// object holding the requested fields and checks that every field came back.
//
// An answer-engine question (provider.TextLLMAnswer, run_llm_visibility) is
// the exception: the model is asked the user's prompt as it is, alone (no
// system prompt, no JSON, no brand hint), and its reply is the answer,
// because what is measured is what the model tells a user who asks.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/services/actions/internal/app/provider"
)

// providerName names this adapter in provider.Errors.
const providerName = "text generator"

// Defaults of Config.
const (
	DefaultTimeout          = 20 * time.Second
	DefaultMaxResponseBytes = 4 << 20
)

// maxErrorMessage bounds how much of a provider's error message reaches the
// caller: enough to act on, not a page of HTML.
const maxErrorMessage = 300

// Config configures a Generator.
type Config struct {
	// BaseURL is the API's root, to which "/chat/completions" is appended:
	// https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama),
	// http://127.0.0.1:8080/v1 (llama.cpp). Required; an absolute http or
	// https URL.
	BaseURL string
	// Model is the model to ask: gpt-4o-mini, llama3.1. Required.
	Model string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// Timeout bounds each call, connection to last byte. Default 20 s, which
	// keeps a generation action inside the 10 to 30 s a client is told to
	// wait.
	Timeout time.Duration
	// MaxResponseBytes bounds how much of an answer is read. Default 4 MiB.
	MaxResponseBytes int64
	// Temperature is sent when set; nil leaves the server's default.
	Temperature *float64
	// HTTPClient sends the requests; nil uses a client of its own. Its own
	// timeout, if any, is not what the 504 message reports: Timeout is.
	HTTPClient *http.Client
}

// Generator writes text with a chat-completions model.
type Generator struct {
	endpoint    string
	host        string
	model       string
	apiKey      string
	timeout     time.Duration
	maxBytes    int64
	temperature *float64
	client      *http.Client
}

var _ provider.TextGenerator = (*Generator)(nil)

// New returns a Generator, or an error naming the setting that is wrong.
func New(cfg Config) (*Generator, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an absolute http or https URL", cfg.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("openai: base URL %q must not have a query or fragment", cfg.BaseURL)
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, errors.New("openai: model is required")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("openai: timeout %s is negative", cfg.Timeout)
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("openai: max response bytes %d is negative", cfg.MaxResponseBytes)
	}
	if t := cfg.Temperature; t != nil && (*t < 0 || *t > 2) {
		return nil, fmt.Errorf("openai: temperature %g is outside 0 to 2", *t)
	}
	g := &Generator{
		endpoint:    strings.TrimRight(u.String(), "/") + "/chat/completions",
		host:        u.Host,
		model:       model,
		apiKey:      strings.TrimSpace(cfg.APIKey),
		timeout:     cfg.Timeout,
		maxBytes:    cfg.MaxResponseBytes,
		temperature: cfg.Temperature,
		client:      cfg.HTTPClient,
	}
	if g.timeout == 0 {
		g.timeout = DefaultTimeout
	}
	if g.maxBytes == 0 {
		g.maxBytes = DefaultMaxResponseBytes
	}
	if g.client == nil {
		g.client = &http.Client{}
	}
	return g, nil
}

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

// chatResponse is the part of a chat completion the generator reads.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// errTimeout is the cause of the per-call deadline, which tells it apart
// from a deadline of the caller's.
var errTimeout = errors.New("text generator timeout")

// Generate implements provider.TextGenerator.
func (g *Generator) Generate(ctx context.Context, req provider.TextRequest) (provider.Text, error) {
	if len(req.Fields) == 0 {
		return provider.Text{}, errors.New("openai: the request asks for no fields")
	}
	answering := answerEngine(req)
	chat := chatRequest{
		Model: g.model,
		Messages: []chatMessage{
			{Role: "system", Content: systemPrompt(req.Fields)},
			{Role: "user", Content: userPrompt(req)},
		},
		Temperature:    g.temperature,
		ResponseFormat: &responseFormat{Type: "json_object"},
	}
	if answering {
		// An answer engine's visibility is measured on the answer a user
		// would get: the user's question as it is, alone, answered in the
		// model's own words.
		chat.Messages = []chatMessage{{Role: "user", Content: strings.TrimSpace(req.Inputs["prompt"])}}
		chat.ResponseFormat = nil
	}
	body, err := json.Marshal(chat)
	if err != nil {
		return provider.Text{}, fmt.Errorf("openai: encode request: %w", err)
	}

	callCtx, cancel := context.WithTimeoutCause(ctx, g.timeout, errTimeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(callCtx, http.MethodPost, g.endpoint, bytes.NewReader(body))
	if err != nil {
		return provider.Text{}, fmt.Errorf("openai: build request: %w", err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	if g.apiKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+g.apiKey)
	}

	resp, err := g.client.Do(httpReq)
	if err != nil {
		return provider.Text{}, g.transportError(ctx, callCtx, err)
	}
	defer resp.Body.Close()
	// One byte more than allowed tells an answer that is exactly at the
	// limit from one that is over it.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, g.maxBytes+1))
	if err != nil {
		return provider.Text{}, g.transportError(ctx, callCtx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Text{}, g.statusError(resp, raw)
	}
	if int64(len(raw)) > g.maxBytes {
		return provider.Text{}, provider.Failure(providerName, http.StatusBadGateway, nil,
			"the text generator's answer is larger than %s", byteSize(g.maxBytes))
	}

	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return provider.Text{}, provider.Failure(providerName, http.StatusBadGateway, err,
			"the text generator's answer is not a chat completion (invalid JSON); is %s an OpenAI-compatible API?", g.host)
	}
	if len(cr.Choices) == 0 {
		return provider.Text{}, provider.Failure(providerName, http.StatusBadGateway, nil, "the text generator's answer had no choices")
	}
	choice := cr.Choices[0]
	if choice.Message.Refusal != "" {
		return provider.Text{}, provider.Failure(providerName, http.StatusBadGateway, nil,
			"the model refused: %s", g.clean(choice.Message.Refusal))
	}
	content := ""
	if choice.Message.Content != nil {
		content = *choice.Message.Content
	}
	var fields map[string]string
	if answering {
		if strings.TrimSpace(content) == "" {
			err = errors.New("the model's answer was empty")
		}
		fields = map[string]string{req.Fields[0].Name: strings.TrimSpace(content)}
	} else {
		fields, err = parseFields(content, req.Fields)
	}
	if err != nil {
		msg := err.Error()
		if choice.FinishReason == "length" {
			msg += " (the answer was cut off at the model's token limit)"
		}
		return provider.Text{}, provider.Failure(providerName, http.StatusBadGateway, err, "%s", msg)
	}
	model := strings.TrimSpace(cr.Model)
	if model == "" {
		model = g.model
	}
	return provider.Text{Fields: fields, Model: model}, nil
}

// transportError turns a failure to send or read into what the caller is
// told: its own cancellation as is, the per-call deadline as 504, a server
// that cannot be reached as 503.
func (g *Generator) transportError(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(callCtx), errTimeout) {
		return provider.Failure(providerName, http.StatusGatewayTimeout, err,
			"the text generator did not answer within %s", g.timeout)
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		return provider.Failure(providerName, http.StatusServiceUnavailable, err,
			"cannot reach the text generator at %s", g.host)
	}
	var timeoutErr interface{ Timeout() bool }
	if errors.As(err, &timeoutErr) && timeoutErr.Timeout() {
		return provider.Failure(providerName, http.StatusGatewayTimeout, err,
			"the text generator at %s did not answer in time", g.host)
	}
	return provider.Failure(providerName, http.StatusBadGateway, err,
		"the connection to the text generator at %s failed before it answered", g.host)
}

// statusError says what a non-2xx answer means, keeping the provider's
// status.
func (g *Generator) statusError(resp *http.Response, raw []byte) error {
	code := resp.StatusCode
	var what string
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		if g.apiKey == "" {
			what = "the text generator requires an API key and none is configured"
		} else {
			what = "the text generator refused the API key"
		}
	case code == http.StatusNotFound:
		what = fmt.Sprintf("the text generator has no model %q or the base URL is wrong", g.model)
	case code == http.StatusTooManyRequests:
		what = "the text generator is rate limiting requests; retry later"
	case code >= 500:
		what = "the text generator failed"
	default:
		what = "the text generator rejected the request"
	}
	msg := fmt.Sprintf("%s (HTTP %d)", what, code)
	if detail := g.clean(errorDetail(resp.Header.Get("Content-Type"), raw)); detail != "" {
		msg += ": " + detail
	}
	return provider.Failure(providerName, code, fmt.Errorf("POST %s: %s", g.endpoint, resp.Status), "%s", msg)
}

// errorDetail finds the provider's own words in an error body: the
// {"error": {"message": ...}} of OpenAI, vLLM, Ollama and llama.cpp, the
// {"error": "..."} some servers send instead, or a short plain-text body.
func errorDetail(contentType string, raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			return s
		}
		return body.Message
	}
	if strings.HasPrefix(contentType, "text/plain") && utf8.Valid(raw) {
		return string(raw)
	}
	return ""
}

// secretLike matches API-key-shaped words (OpenAI's sk-..., even masked) so
// that an error message that quotes a key does not pass it on.
var secretLike = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-*.]+`)

// clean makes a provider's message fit to show: one line, no key, at most
// maxErrorMessage characters.
func (g *Generator) clean(s string) string {
	if g.apiKey != "" {
		s = strings.ReplaceAll(s, g.apiKey, "[redacted]")
	}
	s = secretLike.ReplaceAllString(s, "[redacted]")
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxErrorMessage {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:maxErrorMessage])) + "…"
	}
	return s
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// answerEngine reports a question put to the model as an answer engine
// (run_llm_visibility): one field, the answer to the prompt.
func answerEngine(req provider.TextRequest) bool {
	return req.Kind == provider.TextLLMAnswer && len(req.Fields) == 1 && strings.TrimSpace(req.Inputs["prompt"]) != ""
}

// systemPrompt tells the model who it writes for and the one shape of answer
// that is read.
func systemPrompt(fields []provider.TextField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = fmt.Sprintf("%q", f.Name)
	}
	return "You are a senior copywriter at an SEO and marketing agency. You write clear, accurate, " +
		"publishable copy for the agency's clients, in the language of the inputs, without placeholders " +
		"or notes to the editor.\n" +
		"Answer with ONE JSON object and nothing else. Its keys are exactly " + strings.Join(names, ", ") +
		", and each value is a string."
}

// userPrompt is the brief: the instructions, the facts and the fields wanted.
// Hints are deliberately absent: they are for the built-in generator only.
func userPrompt(req provider.TextRequest) string {
	var b strings.Builder
	if s := strings.TrimSpace(req.Instructions); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	names := make([]string, 0, len(req.Inputs))
	for name, v := range req.Inputs {
		if strings.TrimSpace(v) != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		b.WriteString("Inputs:\n")
		for _, name := range names {
			// Continuation lines are indented so that a multi-line value
			// (body points, a transcript) reads as one input.
			v := strings.ReplaceAll(strings.TrimSpace(req.Inputs[name]), "\n", "\n  ")
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
		b.WriteString("\n")
	}
	b.WriteString("Write these fields:\n")
	for _, f := range req.Fields {
		if d := strings.TrimSpace(f.Description); d != "" {
			fmt.Fprintf(&b, "- %s: %s\n", f.Name, d)
		} else {
			fmt.Fprintf(&b, "- %s\n", f.Name)
		}
	}
	return b.String()
}

// parseFields reads the requested fields out of the model's message.
func parseFields(content string, fields []provider.TextField) (map[string]string, error) {
	if strings.TrimSpace(content) == "" {
		return nil, errors.New("the model's answer was empty")
	}
	obj, ok := findObject(content)
	if !ok {
		return nil, errors.New("the model's answer was not a JSON object")
	}
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		v, present := obj[f.Name]
		if !present {
			v, present = lookupFold(obj, f.Name)
		}
		if !present {
			return nil, fmt.Errorf("the model's answer did not contain %s", f.Name)
		}
		s, err := fieldText(v)
		if err != nil {
			return nil, fmt.Errorf("the model's answer gave %s as %w, not text", f.Name, err)
		}
		if s == "" {
			return nil, fmt.Errorf("the model's answer left %s empty", f.Name)
		}
		out[f.Name] = s
	}
	return out, nil
}

// maxObjectStarts bounds the search for an object in chatty content, which
// would otherwise be quadratic in the number of braces.
const maxObjectStarts = 32

var fence = regexp.MustCompile("(?s)```[A-Za-z]*\\s*\n?(.*?)```")

// findObject finds the one JSON object in content: the whole of it, the
// inside of a ``` fence, or the first object among leading and trailing
// text.
func findObject(content string) (map[string]json.RawMessage, bool) {
	candidates := []string{content}
	if m := fence.FindStringSubmatch(content); m != nil {
		candidates = append([]string{m[1]}, candidates...)
	}
	for _, c := range candidates {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(strings.TrimSpace(c)), &obj) == nil && obj != nil {
			return obj, true
		}
		rest := c
		for range maxObjectStarts {
			i := strings.IndexByte(rest, '{')
			if i < 0 {
				break
			}
			dec := json.NewDecoder(strings.NewReader(rest[i:]))
			var obj map[string]json.RawMessage
			if dec.Decode(&obj) == nil && obj != nil {
				return obj, true
			}
			rest = rest[i+1:]
		}
	}
	return nil, false
}

func lookupFold(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// fieldText reads a field's value: a string, a number as its text, or a list
// of them one per line (models like to answer "one per line" with a list).
func fieldText(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", errors.New("invalid JSON")
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case json.Number:
		return v.String(), nil
	case []any:
		lines := make([]string, 0, len(v))
		for _, item := range v {
			switch item := item.(type) {
			case string:
				if s := strings.TrimSpace(item); s != "" {
					lines = append(lines, s)
				}
			case json.Number:
				lines = append(lines, item.String())
			default:
				return "", errors.New("a list of non-text items")
			}
		}
		return strings.Join(lines, "\n"), nil
	case bool:
		return "", errors.New("a boolean")
	default:
		return "", errors.New("an object")
	}
}
