package wire

import (
	"encoding/json"
	"testing"
)

func TestEventUnmarshalKeepsPlainDataRaw(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		raw      bool
	}{
		{`{"event":"values","data":{"foo": "b","n":1.50}}`, `{"foo":"b","n":1.50}`, true},
		{`{"event":"values","data":{"m":{"lc":1,"type":"constructor","id":["x"]}}}`, `{"m":{"id":["x"],"lc":1,"type":"constructor"}}`, false},
		{`{"event":"values","data":{"\u006cc":1}}`, `{"lc":1}`, false},
		{`{"event":"end","data":null}`, `null`, false},
		{`{"event":"end"}`, `null`, false},
	} {
		var e Event
		if err := json.Unmarshal([]byte(tc.in), &e); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if _, isRaw := e.Data.(json.RawMessage); isRaw != tc.raw {
			t.Errorf("%s: data %T, raw %v", tc.in, e.Data, tc.raw)
		}
		if e.Event == "" {
			t.Errorf("%s: no event name", tc.in)
		}
		if got, _ := json.Marshal(e.Data); string(got) != tc.want {
			t.Errorf("%s: data %s, want %s", tc.in, got, tc.want)
		}
	}
	var e Event
	if err := json.Unmarshal([]byte(`{"event":3}`), &e); err == nil {
		t.Error("a number as event name was accepted")
	}
}
