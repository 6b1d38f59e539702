package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// IndexConfig is the semantic index of the store, configured like
// langgraph.json's store.index: {"dims": 1536, "embed":
// "openai:text-embedding-3-small", "fields": ["$"]}. The server takes it as
// that JSON in WEFT_STORE_INDEX (or -store-index); BaseURL and APIKey come
// from OPENAI_BASE_URL and OPENAI_API_KEY.
type IndexConfig struct {
	// Dims is the length of every vector the model returns (1..MaxDims). A
	// vector of another length is an error, never stored.
	Dims int
	// Embed is "openai:MODEL": MODEL on an OpenAI-compatible embeddings
	// endpoint (POST {BaseURL}/embeddings). It is also recorded with every
	// vector, so that a search never compares vectors of different models.
	Embed string
	// Fields are the JSON paths of the value that are embedded, one vector
	// per text they select (see textsAtPath); default ["$"], the whole
	// value. A put's own index list replaces them for that item.
	Fields []string
	// BaseURL is the endpoint's base (default DefaultOpenAIBaseURL).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …" when not empty; required
	// for the default base URL.
	APIKey string
	// Embedder, when set, embeds instead of the OpenAI endpoint: a project's
	// own embed function (Embed "./embed.py:fn", served by its worker;
	// IsFunction).
	Embedder Embedder
}

// IsFunction tells whether Embed names a project's function or Embeddings
// object ("./embed.py:aembed_texts", "my_pkg.embed:fn") rather than
// "openai:MODEL": a file path (a "/" or an extension) or a dotted module.
func (c *IndexConfig) IsFunction() bool {
	i := strings.LastIndex(c.Embed, ":")
	if i <= 0 {
		return false
	}
	mod := c.Embed[:i]
	return mod != "openai" && strings.TrimSpace(c.Embed[i+1:]) != "" &&
		(strings.ContainsAny(mod, "/\\.") || strings.HasSuffix(mod, ".py"))
}

// NewEmbedder is the Embedder of c: its own (a project's function) or the
// OpenAI-compatible endpoint.
func NewEmbedder(c *IndexConfig) Embedder {
	if c.Embedder != nil {
		return c.Embedder
	}
	return NewOpenAIEmbedder(c)
}

// DefaultOpenAIBaseURL is the embeddings endpoint's base URL when
// OPENAI_BASE_URL is not set.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// MaxDims bounds dims (pgvector's vector type holds up to 16,000; its HNSW
// index up to 2,000).
const MaxDims = 16000

// VectorModel is what store_vectors.model records for the vectors this
// index makes: its embed setting and dims ("openai:text-embedding-3-small/1536").
// A search only compares the query with vectors of the same VectorModel, and
// a put re-embeds a field whose vector another one made.
func (c *IndexConfig) VectorModel() string { return fmt.Sprintf("%s/%d", c.Embed, c.Dims) }

// Model is the MODEL of "openai:MODEL".
func (c *IndexConfig) Model() string {
	_, m, _ := strings.Cut(c.Embed, ":")
	return m
}

// ParseIndexConfig reads a langgraph.json store.index object and checks it:
// dims a positive integer, embed "openai:MODEL", fields valid paths (absent
// or null: ["$"]). distance_type may be given only as "cosine" (the one
// Weft computes) and ann_index_config is accepted and ignored (no ANN index
// without pgvector, see doc.go); any other key is an error, so that a typo
// does not silently change what is indexed. BaseURL and APIKey are left
// empty for the caller (WithOpenAIEnv).
func ParseIndexConfig(raw []byte) (*IndexConfig, error) {
	var in struct {
		Dims         json.RawMessage `json:"dims"`
		Embed        *string         `json:"embed"`
		Fields       []string        `json:"fields"`
		DistanceType *string         `json:"distance_type"`
		ANN          json.RawMessage `json:"ann_index_config"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("store index: %w (want a JSON object like %s)", err, exampleIndex)
	}
	if dec.More() {
		return nil, fmt.Errorf("store index: trailing data after the JSON object")
	}
	c := &IndexConfig{}
	if in.Dims == nil {
		return nil, fmt.Errorf("store index: dims is required (the embedding length, e.g. 1536)")
	}
	if err := json.Unmarshal(in.Dims, &c.Dims); err != nil || c.Dims < 1 || c.Dims > MaxDims {
		return nil, fmt.Errorf("store index: dims %s must be an integer from 1 to %d", in.Dims, MaxDims)
	}
	if in.Embed == nil {
		return nil, fmt.Errorf(`store index: embed is required ("openai:MODEL", e.g. "openai:text-embedding-3-small")`)
	}
	c.Embed = strings.TrimSpace(*in.Embed)
	provider, model, ok := strings.Cut(c.Embed, ":")
	switch {
	case c.IsFunction():
		// a project's function, served by weft dev (its worker)
	case !ok || strings.TrimSpace(model) == "":
		return nil, fmt.Errorf(`store index: embed %q must be "openai:MODEL" (e.g. "openai:text-embedding-3-small")`, c.Embed)
	case provider != "openai":
		return nil, fmt.Errorf(`store index: embed %q: only the openai provider is supported ("openai:MODEL"); `+
			`any OpenAI-compatible server (vLLM, Ollama, LiteLLM, …) works through OPENAI_BASE_URL`, c.Embed)
	}
	if in.DistanceType != nil && *in.DistanceType != "cosine" {
		return nil, fmt.Errorf("store index: distance_type %q is not supported (only cosine)", *in.DistanceType)
	}
	c.Fields = in.Fields
	if c.Fields == nil {
		c.Fields = []string{"$"}
	}
	if len(c.Fields) == 0 {
		return nil, fmt.Errorf(`store index: fields is empty; omit it to embed the whole value (["$"])`)
	}
	if err := checkPaths(c.Fields); err != nil {
		return nil, fmt.Errorf("store index: fields: %w", err)
	}
	return c, nil
}

const exampleIndex = `{"dims": 1536, "embed": "openai:text-embedding-3-small", "fields": ["$"]}`

// IndexConfigFromLangGraphJSON returns the store.index of a whole
// langgraph.json file (nil when it has none), checked by ParseIndexConfig.
// `weft dev --config langgraph.json` serves the store with it (unless
// WEFT_STORE_INDEX is set).
func IndexConfigFromLangGraphJSON(langgraphJSON []byte) (*IndexConfig, error) {
	var file struct {
		Store *struct {
			Index json.RawMessage `json:"index"`
		} `json:"store"`
	}
	if err := json.Unmarshal(langgraphJSON, &file); err != nil {
		return nil, fmt.Errorf("langgraph.json: %w", err)
	}
	if file.Store == nil || len(file.Store.Index) == 0 || string(file.Store.Index) == "null" {
		return nil, nil
	}
	return ParseIndexConfig(file.Store.Index)
}

// WithOpenAIEnv fills BaseURL and APIKey from OPENAI_BASE_URL and
// OPENAI_API_KEY (read through getenv) and checks them: the base URL must be
// http(s), and the default (api.openai.com) needs a key.
func (c *IndexConfig) WithOpenAIEnv(getenv func(string) string) error {
	if c.IsFunction() {
		return fmt.Errorf("store index: embed %q is a project's function: `weft dev --config langgraph.json` serves it (through the project's worker); the server alone embeds with \"openai:MODEL\"", c.Embed)
	}
	c.BaseURL = strings.TrimRight(strings.TrimSpace(getenv("OPENAI_BASE_URL")), "/")
	if c.BaseURL == "" {
		c.BaseURL = DefaultOpenAIBaseURL
	}
	c.APIKey = strings.TrimSpace(getenv("OPENAI_API_KEY"))
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("store index: OPENAI_BASE_URL %q must be an http(s) URL such as %s", c.BaseURL, DefaultOpenAIBaseURL)
	}
	if c.APIKey == "" && c.BaseURL == DefaultOpenAIBaseURL {
		return errors.New("store index: OPENAI_API_KEY is not set (the embeddings endpoint is " + DefaultOpenAIBaseURL +
			"; set OPENAI_BASE_URL for a server that needs no key)")
	}
	return nil
}
