package partition

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// apiClient talks to the servers from the client host's namespace, with
// the tenant's API key.
type apiClient struct {
	http *http.Client
	key  string
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a JSON request and reads the whole answer within timeout.
func (c *apiClient) do(method, url string, body any, timeout time.Duration) (response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := c.send(ctx, method, url, body, "")
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{status: resp.StatusCode, header: resp.Header}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// send starts a request; the caller reads and closes the body.
func (c *apiClient) send(ctx context.Context, method, url string, body any, lastEventID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("x-api-key", c.key)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return c.http.Do(req)
}

// get is a GET whose answer's status and body are returned (0 on a
// transport error).
func (c *apiClient) get(url string, timeout time.Duration) (int, []byte, error) {
	r, err := c.do("GET", url, nil, timeout)
	return r.status, r.body, err
}

// decode reads a JSON answer of the given status into out.
func (r response) decode(want int, out any) error {
	if r.status != want {
		return fmt.Errorf("status %d, want %d: %s", r.status, want, bytes.TrimSpace(r.body[:min(len(r.body), 300)]))
	}
	return json.Unmarshal(r.body, out)
}

// runIDs reads the thread and run ids of a Content-Location
// (/threads/{tid}/runs/{rid}).
func runIDs(h http.Header) (tid, rid string, ok bool) {
	loc := h.Get("Content-Location")
	parts := strings.Split(strings.Trim(loc, "/"), "/")
	if len(parts) == 4 && parts[0] == "threads" && parts[2] == "runs" {
		return parts[1], parts[3], true
	}
	return "", path.Base(loc), false
}

// sseEvent is one event of a run's stream.
type sseEvent struct {
	ID    int64
	Event string
	Data  string
}

// readSSE reads events from an SSE body into *got until the stream ends
// (ended: a clean end), breaks or stays silent for idle (err). stop, when
// not nil, is called after each event and ends the read when it returns
// true (the connection is left for the caller to close).
func readSSE(resp *http.Response, got *[]sseEvent, idle time.Duration, stop func() bool) (ended bool, err error) {
	lines := make(chan string)
	errs := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if errors.Is(err, io.EOF) && line == "" {
					err = io.EOF
				}
				errs <- err
				return
			}
			select {
			case lines <- strings.TrimRight(line, "\r\n"):
			case <-done:
				return
			}
		}
	}()
	var ev sseEvent
	var data []string
	hasID := false
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case err := <-errs:
			if errors.Is(err, io.EOF) {
				return true, nil
			}
			return false, err
		case <-timer.C:
			return false, fmt.Errorf("no data for %v", idle)
		case line := <-lines:
			timer.Reset(idle)
			switch {
			case strings.HasPrefix(line, "event:"):
				ev.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case strings.HasPrefix(line, "id:"):
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "id:")), 10, 64)
				if err != nil {
					return false, fmt.Errorf("bad event id %q", line)
				}
				ev.ID, hasID = n, true
			case line == "":
				if ev.Event == "" {
					continue // a comment (heartbeat)
				}
				if !hasID {
					ev.ID = -1
				}
				ev.Data = strings.Join(data, "\n")
				*got = append(*got, ev)
				ev, data, hasID = sseEvent{}, nil, false
				if stop != nil && stop() {
					return false, nil
				}
			}
		}
	}
}
