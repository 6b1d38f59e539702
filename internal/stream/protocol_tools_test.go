package stream

import (
	"encoding/json"
	"testing"
)

// LangGraph's tools-mode payloads become the protocol's tools events.
func TestToolEvent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"event":"on_tool_start","toolCallId":"c1","name":"weather","input":{"query":"SF"}}`,
			`{"event":"tool-started","input":{"query":"SF"},"tool_call_id":"c1","tool_name":"weather"}`},
		{`{"event":"on_tool_event","toolCallId":"c1","name":"weather","data":{"p":1}}`,
			`{"delta":"{\"p\":1}","event":"tool-output-delta","tool_call_id":"c1"}`},
		{`{"event":"on_tool_end","toolCallId":"c1","name":"weather","output":"foggy"}`,
			`{"event":"tool-finished","output":"foggy","tool_call_id":"c1"}`},
		{`{"event":"on_tool_error","toolCallId":"c1","error":{"message":"boom"}}`,
			`{"event":"tool-error","message":"boom","tool_call_id":"c1"}`},
	} {
		var in any
		if err := json.Unmarshal([]byte(c.in), &in); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(toolEvent(in))
		if string(got) != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
