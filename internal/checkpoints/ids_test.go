package checkpoints_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/weftdev/weft/internal/checkpoints"
)

var idPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// idTime decodes the 60-bit timestamp of a version 6 id.
func idTime(t *testing.T, id string) time.Time {
	t.Helper()
	hi, err1 := strconv.ParseUint(id[0:8], 16, 64)
	mid, err2 := strconv.ParseUint(id[9:13], 16, 64)
	lo, err3 := strconv.ParseUint(id[15:18], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("bad id %s", id)
	}
	ticks := hi<<28 | mid<<12 | lo
	return time.Unix(0, int64(ticks-GregorianOffset)*100)
}

func TestNewCheckpointIDLayout(t *testing.T) {
	t.Parallel()
	for step, group := range map[int]string{-1: "ffff", 0: "8000", 1: "8001", 2: "8002", 300: "812c", 0x3fff: "bfff"} {
		id := NewCheckpointID(step)
		if !idPattern.MatchString(id) {
			t.Fatalf("NewCheckpointID(%d) = %s: not a v6 uuid", step, id)
		}
		if id[19:23] != group {
			t.Errorf("step %d: clock sequence %s, want %s", step, id[19:23], group)
		}
		if d := time.Since(idTime(t, id)); d < 0 || d > time.Minute {
			t.Errorf("id %s encodes %v, not now", id, idTime(t, id))
		}
	}
	// The ids of ROWS.md decode to their recorded times.
	if got := idTime(t, "1f1e6647-53d0-6f50-ffff-fc553257d448").UTC().Format(time.RFC3339Nano); got != "2026-11-22T11:04:16.325Z" {
		t.Errorf("reference id decodes to %s", got)
	}
}

func TestNewCheckpointIDStrictlyIncreasing(t *testing.T) {
	t.Parallel()
	const goroutines, each = 8, 5000
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			local := make([]string, each)
			for i := range local {
				local[i] = NewCheckpointID(i % 7)
				if i > 0 && local[i] <= local[i-1] {
					t.Errorf("not increasing: %s after %s", local[i], local[i-1])
					return
				}
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Strings(all)
	for i := 1; i < len(all); i++ {
		// Distinct timestamps, not merely distinct random tails.
		if all[i][:18] == all[i-1][:18] {
			t.Fatalf("two ids share a timestamp: %s %s", all[i-1], all[i])
		}
	}
}

var versionPattern = regexp.MustCompile(`^\d{32}\.0\.\d{16}$`)

func TestNextVersion(t *testing.T) {
	t.Parallel()
	for current, counter := range map[string]uint64{
		"": 1, "3": 4, "00000000000000000000000000000003.0.123": 4,
		"00000000000000000000000000000041.0.9": 42, "junk": 1, "7.5": 8,
	} {
		v := NextVersion(current)
		if !versionPattern.MatchString(v) {
			t.Errorf("NextVersion(%q) = %q: bad format", current, v)
		}
		if VersionCounter(v) != counter {
			t.Errorf("NextVersion(%q) = %q: counter %d, want %d", current, v, VersionCounter(v), counter)
		}
		if CompareVersions(v, current) <= 0 {
			t.Errorf("NextVersion(%q) = %q does not sort after it", current, v)
		}
	}
	seen := map[string]bool{}
	for range 200_000 {
		v := NextVersion("00000000000000000000000000000005.0.1")
		if seen[v] {
			t.Fatalf("NextVersion repeated %s", v)
		}
		seen[v] = true
	}
	// Python-style versions of one format also sort as text.
	a, b := NextVersion("9"), NextVersion(NextVersion("9"))
	if !(a < b) {
		t.Errorf("%s !< %s as text", a, b)
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "1", -1}, {"2", "10", -1}, {"10", "9", 1}, {"3", "3", 0},
		{"3", "00000000000000000000000000000004.0.5", -1},
		{"00000000000000000000000000000004.0.5", "4", 1},
		{"00000000000000000000000000000004.0.5", "00000000000000000000000000000004.0.6", -1},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestNormalizeLC(t *testing.T) {
	t.Parallel()
	in := `{
	  "messages": [
	    {"lc":1,"type":"constructor","id":["langchain_core","messages","SystemMessage"],"kwargs":{"content":"be brief","additional_kwargs":{},"response_metadata":{}}},
	    {"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","tool_calls":[{"name":"f","args":{"q":1},"id":"c1","type":"tool_call"}],"id":"a1"}},
	    {"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"42","tool_call_id":"c1","name":"f","additional_kwargs":{},"response_metadata":{}}}
	  ],
	  "doc": {"lc":1,"type":"constructor","id":["langchain_core","documents","Document"],"kwargs":{"page_content":"p","metadata":{"inner":{"lc":2,"type":"undefined"}}}},
	  "set": {"lc":2,"type":"constructor","id":["Set"],"method":null,"args":[[1,2]],"kwargs":{}},
	  "err": {"lc":2,"type":"constructor","id":["Error"],"method":null,"args":["x"],"kwargs":{}},
	  "secret": {"lc":1,"type":"secret","id":["OPENAI_API_KEY"]},
	  "plain": {"lc":"not an envelope","type":"constructor"}
	}`
	v, err := DecodeValue("json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"messages": []any{
			// LangChain.js's dict form: the serialized fields and "type", nothing defaulted.
			map[string]any{"type": "system", "content": "be brief", "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}},
			map[string]any{"type": "ai", "content": "", "id": "a1",
				"tool_calls": []any{map[string]any{"name": "f", "args": map[string]any{"q": 1}, "id": "c1", "type": "tool_call"}}},
			map[string]any{"type": "tool", "content": "42", "tool_call_id": "c1", "name": "f", "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}},
		},
		"doc":    map[string]any{"page_content": "p", "metadata": map[string]any{}}, // an undefined member is left out, as JSON.stringify does
		"set":    []any{1, 2},
		"err":    "x",
		"secret": map[string]any{"lc": 1, "type": "secret", "id": []any{"OPENAI_API_KEY"}},
		"plain":  map[string]any{"lc": "not an envelope", "type": "constructor"},
	}
	jsonEqual(t, "normalized", v, want)
	// Python LangChain's envelope (the Python worker's) reads as LangGraph's
	// Python server shows a message: its fields defaulted.
	py, err := DecodeValue("json", []byte(`{"lc":1,"type":"constructor","id":["langchain","schema","messages","HumanMessage"],"kwargs":{"content":"hi","type":"human","id":"h1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "Python message", py, map[string]any{"content": "hi", "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "human", "name": nil, "id": "h1"})
	// Numbers stay exact.
	if n := v.(map[string]any)["set"].([]any)[0]; n != json.Number("1") {
		t.Errorf("number = %#v", n)
	}
}
