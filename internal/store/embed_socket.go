package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftdev/weft/internal/httpx"
)

// socketEmbedder asks a project's worker to embed with the project's own
// embed function: POST /embed {"texts"} on the worker's unix socket,
// answered {"vectors"} or {"status", "detail"} (the protocol of the auth.path
// socket, internal/cli/dev/projectauth).
type socketEmbedder struct {
	dims   int
	client *http.Client
}

// NewSocketEmbedder is an Embedder served by a worker on the unix socket at
// path (weft dev's store.index.embed "./embed.py:fn"); every vector must
// have dims numbers.
func NewSocketEmbedder(path string, dims int) Embedder {
	return &socketEmbedder{dims: dims, client: &http.Client{Transport: httpx.UnixTransport(path, 16), Timeout: embedTimeout}}
}

func (e *socketEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"texts": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://worker/embed", bytes.NewReader(body))
	if err != nil {
		return nil, &EmbedError{Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &EmbedError{Message: "the project's embed function is not served yet (its worker is starting): " + err.Error()}
	}
	defer resp.Body.Close()
	var out struct {
		Status  int         `json:"status"`
		Detail  string      `json:"detail"`
		Vectors [][]float32 `json:"vectors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, &EmbedError{Message: "the embed function's answer is unusable: " + err.Error()}
	}
	if out.Status >= 400 {
		return nil, &EmbedError{Status: out.Status, Message: out.Detail}
	}
	if len(out.Vectors) != len(texts) {
		return nil, &EmbedError{Message: fmt.Sprintf("the embed function returned %d vectors for %d texts", len(out.Vectors), len(texts))}
	}
	for _, v := range out.Vectors {
		if len(v) != e.dims {
			return nil, &EmbedError{Message: fmt.Sprintf("the embed function returned %d dimensions, the index is configured for dims %d", len(v), e.dims)}
		}
	}
	return out.Vectors, nil
}
