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

// Subgraph namespaces get their own lifecycle: started before their first
// event (each prefix), completed once the parent's update of their node
// was sent, the run's terminal status for those still open at its end.
func TestSubgraphLifecycle(t *testing.T) {
	run := func(events [][2]string) []string {
		v := &runView{started: map[string]bool{}, asked: map[string]bool{}}
		var out []string
		for i, e := range events {
			for _, pe := range v.translate(logEvent{ThreadSeq: int64(i + 1), Event: e[0], Data: json.RawMessage(e[1]), GraphID: "nested"}) {
				s := pe.Method
				if d, ok := pe.Params.Data.(map[string]any); ok && pe.Method == "lifecycle" {
					s += ":" + d["event"].(string) + "(" + d["graph_name"].(string) + ")"
				}
				if pe.Params.Node != "" {
					s += ":" + pe.Params.Node
				}
				b, _ := json.Marshal(pe.Params.Namespace)
				out = append(out, s+string(b))
			}
		}
		return out
	}
	got := run([][2]string{
		{"metadata", `{}`},
		{"values|gp_two:a", `{"x":1}`},
		{"updates|gp_two:a|p_two:b", `{"c_two":{"x":2}}`},
		{"updates|gp_two:a", `{"p_two":{"x":2}}`},
		{"updates", `{"gp_two":{"x":2}}`},
		{"values", `{"x":2}`},
		{"end", `{"status":"success"}`},
	})
	want := []string{
		`lifecycle:running(nested)[]`,
		`lifecycle:started(gp_two)["gp_two:a"]`, `values["gp_two:a"]`,
		`lifecycle:started(p_two)["gp_two:a","p_two:b"]`, `updates:c_two["gp_two:a","p_two:b"]`,
		`updates:p_two["gp_two:a"]`,
		`lifecycle:completed(p_two)["gp_two:a","p_two:b"]`, `updates:gp_two[]`,
		`lifecycle:completed(gp_two)["gp_two:a"]`, `values[]`,
		`lifecycle:completed(nested)[]`,
	}
	if g, w := asLines(got), asLines(want); g != w {
		t.Fatalf("events\n%s\nwant\n%s", g, w)
	}
	// A run that fails inside a subgraph: the open namespaces fail with it.
	got = run([][2]string{
		{"metadata", `{}`},
		{"values|sub:a", `{"x":1}`},
		{"error", `{"error":"E","message":"boom"}`},
		{"end", `{"status":"error"}`},
	})
	if g := asLines(got); g != asLines([]string{`lifecycle:running(nested)[]`, `lifecycle:started(sub)["sub:a"]`, `values["sub:a"]`,
		`lifecycle:failed(sub)["sub:a"]`, `lifecycle:failed(nested)[]`}) {
		t.Fatalf("failed run events\n%s", g)
	}
}

func asLines(s []string) string {
	out := ""
	for _, l := range s {
		out += l + "\n"
	}
	return out
}
