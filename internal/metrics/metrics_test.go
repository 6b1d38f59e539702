package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/tracing"
)

// The costs on the hot paths: counting an event, a request of a route seen
// before, and a span start with tracing off. Run with
// go test -run '^$' -bench . -benchmem ./internal/metrics
func BenchmarkRunEnded(b *testing.B) {
	m := New("bench")
	b.ReportAllocs()
	for b.Loop() {
		m.RunEnded(OutcomeSuccess, 0.5)
	}
}

func BenchmarkCommitted(b *testing.B) {
	m := New("bench")
	b.ReportAllocs()
	for b.Loop() {
		m.Committed(SourceInProcess, time.Millisecond, 1, 2, 3)
	}
}

func BenchmarkObserveHTTP(b *testing.B) {
	m := New("bench")
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveHTTP("POST", "/threads/{thread_id}/runs/wait", 200, time.Millisecond)
	}
}

func BenchmarkNilMetrics(b *testing.B) {
	var m *Metrics
	b.ReportAllocs()
	for b.Loop() {
		m.RunEnded(OutcomeSuccess, 0.5)
		m.ObserveHTTP("POST", "/threads", 200, time.Millisecond)
	}
}

func BenchmarkTracingOff(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracing.Start(ctx, nil, "weft.superstep")
		if span.IsRecording() {
			b.Fatal("recording")
		}
		span.End()
	}
}

// Counting a request with a new status creates its series once; the
// counts land on the right series.
func TestObserveHTTPSeries(t *testing.T) {
	m := New("test")
	m.ObserveHTTP("POST", "/threads", 200, time.Millisecond)
	m.ObserveHTTP("POST", "/threads", 200, time.Millisecond)
	m.ObserveHTTP("BREW", "", 404, time.Millisecond)
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "weft_http_requests_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			key := ""
			for _, l := range s.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + ","
			}
			got[key] = s.GetCounter().GetValue()
		}
	}
	if got["method=POST,route=/threads,status=200,"] != 2 || got["method=other,route=unmatched,status=404,"] != 1 || len(got) != 2 {
		t.Fatalf("series %v", got)
	}
}
