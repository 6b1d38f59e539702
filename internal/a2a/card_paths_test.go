package a2a_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server/servertest"
)

// The agent card is served where LangGraph's server serves it besides
// /.well-known/agent-card.json?assistant_id=: at the assistant's endpoint
// (GET /a2a/{assistant_id}) and at the well-known paths under it
// (agent-card.json, and v0.2's agent.json), the same card, with the same
// refusals; DELETE on the endpoint is a 405 (Allow: GET, POST), as there.
func TestAgentCardPaths(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	status, _, want := c.raw("GET", "/.well-known/agent-card.json?assistant_id=echo_chat", "")
	if status != 200 {
		t.Fatalf("card: %d %s", status, want)
	}
	for _, path := range []string{"/a2a/echo_chat", "/a2a/echo_chat/.well-known/agent-card.json", "/a2a/echo_chat/.well-known/agent.json"} {
		status, ct, b := c.raw("GET", path, "")
		if status != 200 || ct != "application/json" || !bytes.Equal(b, want) {
			t.Errorf("GET %s: %d %s %s, want the card %s", path, status, ct, b, want)
		}
		for ref, code := range map[string]int{"foo_bar": 400, uuid.NewString(): 404, "nope": 422} {
			p := "/a2a/" + ref + path[len("/a2a/echo_chat"):]
			if status, _, b := c.raw("GET", p, ""); status != code || !bytes.Contains(b, []byte(`"detail"`)) {
				t.Errorf("GET %s: %d %s, want %d", p, status, b, code)
			}
		}
	}
	req, _ := http.NewRequest("DELETE", s.URL+"/a2a/echo_chat", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("DELETE /a2a/echo_chat: %d Allow %q, want 405 with GET, HEAD, POST", res.StatusCode, res.Header.Get("Allow"))
	}
}
