package stream

import (
	"encoding/json"
	"testing"
)

// A stream transformer's final value, recorded as "custom:<name>", is the
// protocol's custom event {name, payload}: a "custom" subscription and a
// "custom:<name>" one receive it, another name's does not; a graph's own
// custom writes stay {payload}.
func TestNamedCustomEvents(t *testing.T) {
	v := &runView{started: map[string]bool{}, asked: map[string]bool{}}
	out := v.translate(logEvent{ThreadSeq: 3, Event: "custom:toolCallCount", Data: json.RawMessage(`4`)})
	if len(out) != 1 {
		t.Fatalf("events %+v", out)
	}
	got, _ := json.Marshal(out[0].Params.Data)
	if out[0].Method != "custom" || string(got) != `{"name":"toolCallCount","payload":4}` || len(out[0].Params.Namespace) != 0 {
		t.Fatalf("event %+v data %s", out[0], got)
	}
	for _, c := range []struct {
		channels []string
		want     bool
	}{{[]string{"custom"}, true}, {[]string{"custom:toolCallCount"}, true}, {[]string{"custom:other"}, false}, {[]string{"values"}, false}} {
		f, err := (&ProtocolStreamRequest{Channels: c.channels}).filter()
		if err != nil {
			t.Fatal(err)
		}
		if f.match(&out[0]) != c.want {
			t.Errorf("channels %v match = %v", c.channels, !c.want)
		}
	}
	own := v.translate(logEvent{ThreadSeq: 4, Event: "custom", Data: json.RawMessage(`{"x":1}`)})
	if got, _ := json.Marshal(own[0].Params.Data); string(got) != `{"payload":{"x":1}}` {
		t.Fatalf("custom write %s", got)
	}
	// "custom:" without a name is nothing.
	if out := v.translate(logEvent{ThreadSeq: 5, Event: "custom:", Data: json.RawMessage(`1`)}); len(out) != 0 {
		t.Fatalf("unnamed: %+v", out)
	}
}
