// Package storetest is a deterministic OpenAI-compatible embeddings server
// for the store's semantic search tests: POST /embeddings turns every input
// into a bag-of-words vector (BagOfWords), and a test can make it fail.
package storetest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// EmbedServer is a running fake embeddings endpoint on loopback.
type EmbedServer struct {
	// URL is the base URL to give as OPENAI_BASE_URL (POST URL+"/embeddings").
	URL  string
	Dims int

	mu       sync.Mutex
	failWith int        // HTTP status to answer with; 0: answer normally
	refuse   string     // an input containing this is refused with 400
	calls    int        // requests answered (failed or not)
	requests [][]string // the inputs of every request, in order
	keys     []string   // the Authorization headers received
	models   []string   // the model of every request
}

// NewEmbedServer starts an endpoint returning dims-dimensional vectors; it
// stops when t ends.
func NewEmbedServer(t testing.TB, dims int) *EmbedServer {
	t.Helper()
	e := &EmbedServer{Dims: dims}
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// FailWith makes every request fail with status (500, 429, …) until it is
// called with 0.
func (e *EmbedServer) FailWith(status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failWith = status
}

// Refuse makes a request fail with 400 (as OpenAI does for an input that is
// too long) when one of its inputs contains s; "" stops it.
func (e *EmbedServer) Refuse(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refuse = s
}

// Calls is how many requests the endpoint has answered.
func (e *EmbedServer) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Inputs returns every input received so far, in order.
func (e *EmbedServer) Inputs() []string {
	var out []string
	for _, r := range e.Requests() {
		out = append(out, r...)
	}
	return out
}

// Requests returns the inputs of every request so far, in order.
func (e *EmbedServer) Requests() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]string(nil), e.requests...)
}

// Authorizations returns the Authorization header of every request.
func (e *EmbedServer) Authorizations() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.keys...)
}

// Models returns the model of every request.
func (e *EmbedServer) Models() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.models...)
}

func (e *EmbedServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	e.mu.Lock()
	e.calls++
	e.requests = append(e.requests, req.Input)
	e.keys = append(e.keys, r.Header.Get("Authorization"))
	e.models = append(e.models, req.Model)
	failWith, refuse := e.failWith, e.refuse
	e.mu.Unlock()
	if failWith != 0 {
		writeError(w, failWith, "the fake embeddings endpoint is failing")
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
	}{Object: "list", Model: req.Model, Data: []datum{}}
	for i, in := range req.Input {
		if refuse != "" && strings.Contains(in, refuse) {
			writeError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens")
			return
		}
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: BagOfWords(in, e.Dims)})
	}
	// Answer in reverse order: clients must place vectors by index.
	for i, j := 0, len(out.Data)-1; i < j; i, j = i+1, j-1 {
		out.Data[i], out.Data[j] = out.Data[j], out.Data[i]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "fake"}})
}

// BagOfWords is the fake's embedding: the lower-cased words of text (runs
// of letters and digits) counted into dims buckets by their FNV-1a hash.
// Texts sharing words have a positive cosine; texts sharing none, 0.
func BagOfWords(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range Words(text) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)]++
	}
	return v
}

// Words splits text as BagOfWords does.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
