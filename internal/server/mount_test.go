package server_test

import (
	"encoding/json"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// Under a mount prefix the API is served there (the server's URL has it),
// and the served OpenAPI document names the prefix as its server, as
// LangGraph's server writes it, so a generated client's base path is right.
func TestMountPrefixDocument(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.MountPrefix = "/api/v1" })
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]any         `json:"paths"`
	}
	res := s.Must(200, "GET", "/openapi.json", nil)
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/api/v1" || doc.Paths["/threads"] == nil {
		t.Fatalf("servers %+v (paths %d), want [/api/v1] and the API's paths", doc.Servers, len(doc.Paths))
	}
}
