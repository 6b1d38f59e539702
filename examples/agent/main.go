// Command agent is a tool-calling agent served by an embedded Weft server:
// a chat model node calling any OpenAI-compatible /chat/completions
// endpoint with tools, a tools node running two Go tools (calculator and
// clock), and a conditional edge looping between them until the model
// answers without tool calls.
//
//	OPENAI_BASE_URL   endpoint base URL (default https://api.openai.com/v1)
//	OPENAI_MODEL      model name (default gpt-4o-mini); an assistant's or
//	                  run's config.configurable.model overrides it
//	OPENAI_API_KEY    bearer token (optional for local servers)
//
// Every flag and variable of the weft binary applies too (WEFT_ADDR,
// DATABASE_URL, WEFT_DATA_DIR, ...). See README.md.
package main

import (
	"os"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/weft"
)

func main() {
	model := &ChatModel{
		BaseURL: envOr("OPENAI_BASE_URL", "https://api.openai.com/v1"),
		Model:   envOr("OPENAI_MODEL", "gpt-4o-mini"),
		APIKey:  os.Getenv("OPENAI_API_KEY"),
	}
	graphs := graph.NewRegistry()
	if err := graphs.Register(NewAgent(model, DefaultTools())); err != nil {
		panic(err)
	}
	weft.Main(graphs)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
