package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/store"
)

func TestParseIndexConfig(t *testing.T) {
	t.Parallel()
	c, err := store.ParseIndexConfig([]byte(`{"dims": 1536, "embed": "openai:text-embedding-3-small"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Dims != 1536 || c.Embed != "openai:text-embedding-3-small" || c.Model() != "text-embedding-3-small" || !reflect.DeepEqual(c.Fields, []string{"$"}) {
		t.Fatalf("config = %+v, want fields defaulting to [$]", c)
	}
	c, err = store.ParseIndexConfig([]byte(`{"dims": 8, "embed": "openai:m", "fields": ["title", "items[*].text"], "distance_type": "cosine", "ann_index_config": {"kind": "hnsw"}}`))
	if err != nil || !reflect.DeepEqual(c.Fields, []string{"title", "items[*].text"}) {
		t.Fatalf("config = %+v, %v", c, err)
	}
	for raw, want := range map[string]string{
		``:                                     "want a JSON object",
		`[]`:                                   "want a JSON object",
		`{"embed": "openai:m"}`:                "dims is required",
		`{"dims": 0, "embed": "openai:m"}`:     "dims 0 must be an integer from 1",
		`{"dims": 1.5, "embed": "openai:m"}`:   "dims 1.5",
		`{"dims": "8", "embed": "openai:m"}`:   "dims \"8\"",
		`{"dims": 16001, "embed": "openai:m"}`: "dims 16001",
		`{"dims": 8}`:                          "embed is required",
		`{"dims": 8, "embed": "text-embedding-3-small"}`:          `must be "openai:MODEL"`,
		`{"dims": 8, "embed": "openai:"}`:                         `must be "openai:MODEL"`,
		`{"dims": 8, "embed": "cohere:embed-english-v3.0"}`:       "only the openai provider",
		`{"dims": 8, "embed": "./embed.py:"}`:                     `must be "openai:MODEL"`,
		`{"dims": 8, "embed": "openai:m", "fields": []}`:          "fields is empty",
		`{"dims": 8, "embed": "openai:m", "fields": ["a["]}`:      "unclosed",
		`{"dims": 8, "embed": "openai:m", "fields": [""]}`:        "must not be empty",
		`{"dims": 8, "embed": "openai:m", "field": ["a"]}`:        `unknown field "field"`,
		`{"dims": 8, "embed": "openai:m", "distance_type": "l2"}`: "only cosine",
		`{"dims": 8, "embed": "openai:m"} {}`:                     "trailing data",
	} {
		_, err := store.ParseIndexConfig([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIndexConfig(%s) = %v, want an error containing %q", raw, err, want)
		}
	}
}

func TestIndexConfigFromLangGraphJSON(t *testing.T) {
	t.Parallel()
	c, err := store.IndexConfigFromLangGraphJSON([]byte(`{"graphs": {"agent": "./agent.ts:graph"},
		"store": {"index": {"embed": "openai:text-embedding-3-small", "dims": 1536, "fields": ["$"]}, "ttl": {"default_ttl": 60}}}`))
	if err != nil || c == nil || c.Dims != 1536 || c.Model() != "text-embedding-3-small" {
		t.Fatalf("config = %+v, %v", c, err)
	}
	for _, raw := range []string{`{"graphs": {}}`, `{"store": {}}`, `{"store": {"index": null}}`} {
		if c, err := store.IndexConfigFromLangGraphJSON([]byte(raw)); c != nil || err != nil {
			t.Errorf("%s: %+v, %v; want no index", raw, c, err)
		}
	}
	if _, err := store.IndexConfigFromLangGraphJSON([]byte(`{"store": {"index": {"dims": 3}}}`)); err == nil {
		t.Error("an index without embed was accepted")
	}
}

func TestIndexConfigOpenAIEnv(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string) (*store.IndexConfig, error) {
		c, err := store.ParseIndexConfig([]byte(`{"dims": 8, "embed": "openai:m"}`))
		if err != nil {
			t.Fatal(err)
		}
		return c, c.WithOpenAIEnv(func(k string) string { return env[k] })
	}
	c, err := parse(map[string]string{"OPENAI_API_KEY": "sk-1"})
	if err != nil || c.BaseURL != store.DefaultOpenAIBaseURL || c.APIKey != "sk-1" {
		t.Fatalf("%+v, %v", c, err)
	}
	c, err = parse(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1/"})
	if err != nil || c.BaseURL != "http://127.0.0.1:11434/v1" || c.APIKey != "" {
		t.Fatalf("a local endpoint needs no key: %+v, %v", c, err)
	}
	if _, err := parse(nil); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("api.openai.com without a key: %v", err)
	}
	if _, err := parse(map[string]string{"OPENAI_BASE_URL": "localhost:11434"}); err == nil {
		t.Fatal("a base URL without scheme was accepted")
	}
}

func TestIndexConfigEmbedFunction(t *testing.T) {
	t.Parallel()
	for embed, want := range map[string]bool{
		"./embed.py:aembed_texts":       true,
		"src/embed.py:fn":               true,
		"my_pkg.embed:embeddings":       true,
		"./embed.ts:embed":              true,
		"openai:text-embedding-3-small": false,
		"openai:text-embedding-3.5":     false,
		"cohere:embed-english-v3.0":     false,
		"./embed.py":                    false,
	} {
		c := &store.IndexConfig{Embed: embed}
		if got := c.IsFunction(); got != want {
			t.Errorf("IsFunction(%q) = %v, want %v", embed, got, want)
		}
	}
	c, err := store.ParseIndexConfig([]byte(`{"dims": 4, "embed": "./embed.py:aembed_texts", "fields": ["text"]}`))
	if err != nil || !c.IsFunction() || c.VectorModel() != "./embed.py:aembed_texts/4" {
		t.Fatalf("config = %+v, %v", c, err)
	}
	// The server alone cannot call a project's function: only weft dev can.
	err = c.WithOpenAIEnv(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "weft dev") {
		t.Errorf("WithOpenAIEnv = %v, want an error naming weft dev", err)
	}
}
