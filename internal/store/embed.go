package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Embedder turns texts into vectors of the index's dims, one per text, in
// order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedError is a failure of the embeddings endpoint: its HTTP status (0 when
// it was not reached or its answer was unusable) and what went wrong.
type EmbedError struct {
	Status  int
	Message string
}

func (e *EmbedError) Error() string {
	if e.Status == 0 {
		return "embeddings endpoint: " + e.Message
	}
	return fmt.Sprintf("embeddings endpoint answered HTTP %d: %s", e.Status, e.Message)
}

// InputRefused reports that the endpoint refused the input itself (400, 413,
// 422: too long, empty, malformed) rather than failing: retrying the same
// input will not help, and a batch should be split to find the culprit.
func (e *EmbedError) InputRefused() bool {
	return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge ||
		e.Status == http.StatusUnprocessableEntity
}

// Requests to the embeddings endpoint carry at most this many inputs and
// about this many characters (OpenAI takes 2,048 inputs and 300,000 tokens
// per request; a token is about four characters of English).
const (
	maxEmbedInputs = 128
	maxEmbedChars  = 400_000
)

// embedTimeout bounds one request to the endpoint; it is shorter than the
// indexer's lease, so a claim outlives the call it was made for.
const embedTimeout = 30 * time.Second

// openAIEmbedder calls POST {BaseURL}/embeddings with {"model", "input"}.
type openAIEmbedder struct {
	url    string
	key    string
	model  string
	dims   int
	client *http.Client
}

// NewOpenAIEmbedder returns the Embedder of c: an OpenAI-compatible
// embeddings endpoint, requests batched (at most 128 inputs each).
func NewOpenAIEmbedder(c *IndexConfig) Embedder {
	return &openAIEmbedder{url: strings.TrimRight(c.BaseURL, "/") + "/embeddings", key: c.APIKey,
		model: c.Model(), dims: c.Dims, client: &http.Client{Timeout: embedTimeout}}
}

func (e *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); {
		end, chars := start, 0
		for end < len(texts) && end-start < maxEmbedInputs && (end == start || chars+len(texts[end]) <= maxEmbedChars) {
			chars += len(texts[end])
			end++
		}
		vecs, err := e.request(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
		start = end
	}
	return out, nil
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (e *openAIEmbedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": e.model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, &EmbedError{Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &EmbedError{Message: err.Error()}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, &EmbedError{Status: resp.StatusCode, Message: "reading the answer: " + err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &EmbedError{Status: resp.StatusCode, Message: upstreamMessage(data)}
	}
	var r embedResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &EmbedError{Message: "answer is not an embeddings list: " + err.Error()}
	}
	if len(r.Data) != len(texts) {
		return nil, &EmbedError{Message: fmt.Sprintf("%d embeddings for %d inputs", len(r.Data), len(texts))}
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, &EmbedError{Message: fmt.Sprintf("embedding index %d out of range or repeated", d.Index)}
		}
		if len(d.Embedding) != e.dims {
			return nil, &EmbedError{Message: fmt.Sprintf("model %s returned %d dimensions, the index is configured for dims %d",
				e.model, len(d.Embedding), e.dims)}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// upstreamMessage is the error message of an endpoint's error body
// ({"error": {"message"}} in OpenAI's shape, else the start of the body).
func upstreamMessage(body []byte) string {
	var shaped struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &shaped) == nil && shaped.Error.Message != "" {
		msg = shaped.Error.Message
	}
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	if msg == "" {
		msg = "(empty body)"
	}
	return msg
}

// isEmbedError reports whether err is a failure of the endpoint (as opposed
// to the database or a cancelled context).
func isEmbedError(err error) (*EmbedError, bool) {
	var ee *EmbedError
	ok := errors.As(err, &ee)
	return ee, ok
}
