package workerclient

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

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/internal/tracing"
)

// client sends the worker API's JSON requests.
type client struct {
	base   string
	http   *http.Client
	tracer trace.Tracer // nil: no client spans
	apiKey string       // sent as x-api-key ("" none)
}

// httpError is a response other than 2xx.
type httpError struct {
	status int
	detail string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.detail) }

// retryable says whether a failed request may be sent again: it did not
// get an answer, or the server failed (5xx). Only idempotent requests are
// retried.
func retryable(err error) bool {
	var he *httpError
	if errors.As(err, &he) {
		return he.status >= 500
	}
	return true
}

// post sends body to path and decodes the answer into out, each try within
// timeout; a failure retry accepts is tried again, up to 4 times in all.
func (c *client) post(ctx context.Context, path string, body, out any, timeout time.Duration, retry func(error) bool) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	backoff := 100 * time.Millisecond
	for try := 1; ; try++ {
		err = c.try(ctx, path, b, out, timeout)
		if err == nil || retry == nil || !retry(err) || try == 4 || ctx.Err() != nil {
			return err
		}
		sleep(ctx, backoff)
		backoff *= 3
	}
}

func (c *client) try(ctx context.Context, path string, body []byte, out any, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("X-Api-Key", c.apiKey)
	}
	// A request of a run (its context holds the run's span, or its
	// traceparent when tracing is off here) carries the trace onward; a
	// span of its own when tracing is on.
	if c.tracer != nil && trace.SpanContextFromContext(ctx).IsValid() {
		var span trace.Span
		ctx, span = c.tracer.Start(ctx, "POST "+routeOf(path), trace.WithSpanKind(trace.SpanKindClient))
		defer span.End()
		req = req.WithContext(ctx)
	}
	tracing.Inject(ctx, req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Detail any `json:"detail"`
		}
		detail := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Detail != nil {
			detail = fmt.Sprint(e.Detail)
		}
		return fmt.Errorf("POST %s: %w", path, &httpError{status: resp.StatusCode, detail: detail})
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: decode answer: %w", path, err)
	}
	return nil
}

// routeOf is path as a route template: /dispatch/{dispatch_id}/commit for
// /dispatch/<uuid>/commit (span names stay few).
func routeOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/dispatch/")
	if !ok {
		return path
	}
	id, tail, ok := strings.Cut(rest, "/")
	if _, err := uuid.Parse(id); !ok || err != nil {
		return path
	}
	return "/dispatch/{dispatch_id}/" + tail
}
