package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// stats tallies every response the load got.
type stats struct {
	mu        sync.Mutex
	byStatus  map[int]int
	errors5xx []failure // 5xx responses with their time, for the outage window check
	actions   map[string]int
	notes     map[string]int // outcomes worth a line in the report (409 on reject, ...)
	anomalies []string       // answers that contradict the API (not counted as violations by themselves)
	streams   []*streamTrace
}

type failure struct {
	at     time.Time
	status int
	what   string
}

func newStats() *stats {
	return &stats{byStatus: map[int]int{}, actions: map[string]int{}, notes: map[string]int{}}
}

func (s *stats) count(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byStatus[status]++
}

func (s *stats) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes[what]++
}

func (s *stats) anomaly(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.anomalies) < 200 {
		s.anomalies = append(s.anomalies, fmt.Sprintf(format, args...))
	}
}

// response is what a request got; status 0 is a transport error (the
// server was killed, or the client's deadline passed).
type response struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (r response) decode(v any) error { return json.Unmarshal(r.body, v) }

// client is one load client: its own random stream, spreading its
// requests over the servers.
type client struct {
	id    int
	fleet *fleet
	http  *http.Client
	rng   *rand.Rand
	st    *stats
}

// base picks a server for the next request: a random one that is up (any
// when none is).
func (c *client) base() string {
	servers := c.fleet.servers()
	var up []*proc
	for _, p := range servers {
		if p.isUp() {
			up = append(up, p)
		}
	}
	if len(up) == 0 {
		up = servers
	}
	return up[c.rng.IntN(len(up))].url()
}

// do sends one request to a random server, with a deadline of limit.
func (c *client) do(method, path string, body any, limit time.Duration) response {
	return c.doAt(c.base(), method, path, body, limit)
}

func (c *client) doAt(base, method, path string, body any, limit time.Duration) response {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	var r response
	resp, err := c.http.Do(req)
	if err == nil {
		r.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		r.status, r.header = resp.StatusCode, resp.Header
		if err != nil {
			r.status = 0
		}
	}
	r.err = err
	c.st.count(r.status)
	if r.status >= 500 {
		c.st.mu.Lock()
		c.st.errors5xx = append(c.st.errors5xx, failure{at: time.Now(), status: r.status,
			what: fmt.Sprintf("%s %s: %d %s", method, path, r.status, strings.TrimSpace(string(truncate(r.body, 300))))})
		c.st.mu.Unlock()
	}
	return r
}

// retry sends a request that is safe to repeat until it gets an answer
// other than a transport error or 503, at most tries times.
func (c *client) retry(method, path string, body any, limit time.Duration, tries int) response {
	var r response
	for i := range tries {
		r = c.do(method, path, body, limit)
		if r.status != 0 && r.status != http.StatusServiceUnavailable {
			return r
		}
		time.Sleep(time.Duration(100*(i+1)) * time.Millisecond)
	}
	return r
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// newThread creates a thread (retried: a thread created twice is harmless)
// and returns its id, "" when none could be created.
func (c *client) newThread() string {
	r := c.retry("POST", "/threads", map[string]any{"metadata": map[string]any{"soak": true}}, 10*time.Second, 20)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if r.status != http.StatusOK || r.decode(&th) != nil {
		return ""
	}
	return th.ThreadID
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
