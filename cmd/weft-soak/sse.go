package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// streamTrace is what one resumed stream saw: the ids of every event,
// over every connection, in order.
type streamTrace struct {
	threadID, runID string
	ids             []int64
	conns           int
	drops           int // connections the client dropped on purpose
	broken          int // connections that broke (server killed, timeout)
	completed       bool
	errEvent        string // an in-band error event, if any
}

// streamModes are the modes a soak stream asks for: with them, every
// stored event of a run except "end" goes on the wire (see gapCheck).
var streamModes = []string{"values", "updates", "custom"}

// sseConn reads one SSE connection, appending event ids to tr, until the
// stream ends (clean EOF: ok), breaks (error) or dropAfter events were read
// (dropped: the client closes it on purpose; dropAfter < 0 never drops).
func sseConn(resp *http.Response, tr *streamTrace, dropAfter int) (ended, dropped bool, err error) {
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var event, id string
	read := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" {
				return true, false, nil
			}
			return false, false, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case line == "":
			if event == "" {
				continue // a comment (heartbeat) block
			}
			if event == "error" {
				tr.errEvent = "error event"
			}
			if id != "" {
				n, err := strconv.ParseInt(id, 10, 64)
				if err != nil {
					return false, false, fmt.Errorf("bad event id %q", id)
				}
				tr.ids = append(tr.ids, n)
			}
			event, id = "", ""
			read++
			if dropAfter >= 0 && read >= dropAfter {
				return false, true, nil
			}
		}
	}
}

// streamAction creates a run and streams it, dropping the connection after
// a few events and resuming with Last-Event-ID (on any server) until the
// stream ends; server kills break connections too, and are resumed alike.
func (c *client) streamAction(graphID string) {
	tid := c.newThread()
	if tid == "" {
		return
	}
	body := map[string]any{"assistant_id": graphID, "input": c.input(graphID, false),
		"stream_mode": streamModes, "on_disconnect": "continue"}
	tr := &streamTrace{threadID: tid}
	deadline := time.Now().Add(90 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	// The first connection creates the run.
	resp, err := c.sseRequest(ctx, "POST", "/threads/"+tid+"/runs/stream", body, "")
	if err != nil {
		return // unknown whether the run exists: the final checks cover it either way
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return
	}
	tr.runID = path.Base(resp.Header.Get("Content-Location"))
	c.st.mu.Lock()
	c.st.streams = append(c.st.streams, tr)
	c.st.mu.Unlock()
	drops := c.rng.IntN(3) // this stream drops itself 0 to 2 times
	for time.Now().Before(deadline) {
		tr.conns++
		dropAfter := -1
		if tr.drops < drops {
			dropAfter = 1 + c.rng.IntN(3)
		}
		ended, dropped, err := sseConn(resp, tr, dropAfter)
		switch {
		case ended:
			tr.completed = true
			return
		case dropped:
			tr.drops++
		default:
			tr.broken++
			_ = err
		}
		last := "-1"
		if n := len(tr.ids); n > 0 {
			last = strconv.FormatInt(tr.ids[n-1], 10)
		}
		for time.Now().Before(deadline) {
			resp, err = c.sseRequest(ctx, "GET", "/threads/"+tid+"/runs/"+tr.runID+"/stream", nil, last)
			if err == nil && resp.StatusCode == http.StatusOK {
				break
			}
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					tr.errEvent = fmt.Sprintf("join answered %d", resp.StatusCode)
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// sseRequest opens a stream on a random server, counted in the stats like
// any request.
func (c *client) sseRequest(ctx context.Context, method, p string, body any, lastID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(mustJSON(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base()+p, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.st.count(0)
		return nil, err
	}
	c.st.count(resp.StatusCode)
	if resp.StatusCode >= 500 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		c.st.mu.Lock()
		c.st.errors5xx = append(c.st.errors5xx, failure{at: time.Now(), status: resp.StatusCode,
			what: fmt.Sprintf("%s %s: %d %s", method, p, resp.StatusCode, strings.TrimSpace(string(b)))})
		c.st.mu.Unlock()
	}
	return resp, nil
}
