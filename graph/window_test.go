package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type fakeReader struct {
	first any
	pos   int
}

func (f *fakeReader) SummaryBefore(_ context.Context, _ string, first any, pos int) (*Summary, error) {
	f.first, f.pos = first, pos
	if pos == 99 {
		return nil, errors.New("boom")
	}
	return &Summary{FromSeq: 1, ToSeq: int64(pos - 1), Value: "s"}, nil
}

func TestNodeInputWindow(t *testing.T) {
	ctx := context.Background()
	in := NewNodeInput(State{"messages": []any{"a", "b", "c", "d"}, "text": "x"}, nil)
	w, err := in.Window(ctx, "messages", 3)
	if err != nil || fmt.Sprint(w.Messages) != "[b c d]" || w.Total != 4 || w.Summary != nil {
		t.Fatalf("window %+v %v", w, err)
	}
	if w, err := in.Window(ctx, "messages", 10); err != nil || len(w.Messages) != 4 {
		t.Fatalf("k over the length: %+v %v", w, err)
	}
	if w, err := in.Window(ctx, "unset", 2); err != nil || w.Total != 0 || len(w.Messages) != 0 {
		t.Fatalf("unset channel: %+v %v", w, err)
	}
	if _, err := in.Window(ctx, "text", 2); err == nil {
		t.Fatal("a string channel gave a window")
	}
	if _, err := in.Window(ctx, "messages", 0); err == nil {
		t.Fatal("k = 0 accepted")
	}
	r := &fakeReader{}
	in = WithThreadReader(in, r)
	w, err = in.Window(ctx, "messages", 2)
	if err != nil || r.first != "c" || r.pos != 3 || w.Summary == nil || w.Summary.ToSeq != 2 {
		t.Fatalf("with a reader: %+v %v (asked for %v at %d)", w, err, r.first, r.pos)
	}
	r.first = nil
	if w, err := in.Window(ctx, "messages", 4); err != nil || w.Summary != nil || r.first != nil {
		t.Fatalf("a window of the whole list looked up a summary: %+v %v", w, err)
	}
}
