package deltareducer_test

import (
	"encoding/json"
	"reflect"
	"testing"

	. "github.com/weftdev/weft/internal/checkpoints/deltareducer"
)

// messagesDeltaReducerFixtures are the outputs of LangGraph.js's own
// messagesDeltaReducer (@langchain/langgraph 1.7.3, @langchain/core 1.4.0)
// for the cases of TestMessagesDeltaReduce, each message as [type, id,
// content]. Produced once by running, in worker-js/ (node 20):
//
//	import { messagesDeltaReducer } from "@langchain/langgraph";
//	import { HumanMessage, AIMessage, RemoveMessage } from "@langchain/core/messages";
//	const h = (id, c) => new HumanMessage({ id, content: c });
//	const a = (id, c) => new AIMessage({ id, content: c });
//	const r = (id) => new RemoveMessage({ id });
//	// cases as in TestMessagesDeltaReduce: [state, writes]
//	for (const [k, [state, writes]] of Object.entries(cases))
//	  out[k] = messagesDeltaReducer(state, writes).map((m) => [m.getType(), m.id ?? null, m.content]);
//	console.log(JSON.stringify(out));
const messagesDeltaReducerFixtures = `{"append":[["human","1","a"],["human","2","b"],["ai","3","c"]],"replace_by_id":[["human","1","a"],["ai","2","B"],["human","3","c"]],"remove":[["human","1","a"],["human","3","c"]],"remove_then_readd":[["human","1","a"],["ai","2","again"]],"remove_all":[["human","4","d"],["ai","5","e"]],"remove_unknown":[["human","1","a"],["human","2","b"]],"dup_in_batch":[["human","1","a2"],["human","2","b"]],"no_id":[["human","1","a"],["human",null,"x"],["human",null,"plain string"]],"remove_dup_index":[["human","2","b"]]}`

func TestMessagesDeltaReduce(t *testing.T) {
	t.Parallel()
	h := func(id, c string) any { return map[string]any{"type": "human", "id": id, "content": c} }
	a := func(id, c string) any { return map[string]any{"type": "ai", "id": id, "content": c} }
	r := func(id string) any { return map[string]any{"type": "remove", "id": id, "content": ""} }
	l := func(ms ...any) []any { return ms }
	cases := map[string][2][]any{
		"append":            {l(h("1", "a")), l(l(h("2", "b")), a("3", "c"))},
		"replace_by_id":     {l(h("1", "a"), a("2", "b")), l(l(a("2", "B"), h("3", "c")))},
		"remove":            {l(h("1", "a"), a("2", "b"), h("3", "c")), l(l(r("2")))},
		"remove_then_readd": {l(h("1", "a"), a("2", "b")), l(l(r("2")), l(a("2", "again")))},
		"remove_all":        {l(h("1", "a"), a("2", "b")), l(l(h("3", "c"), r("__remove_all__"), h("4", "d")), l(a("5", "e")))},
		"remove_unknown":    {l(h("1", "a")), l(l(r("nope"), h("2", "b")))},
		"dup_in_batch":      {l(), l(l(h("1", "a"), h("1", "a2")), l(h("2", "b")))},
		"no_id":             {l(h("1", "a")), l(l(map[string]any{"role": "user", "content": "x"}), "plain string")},
		"remove_dup_index":  {l(h("1", "a"), h("2", "b")), l(l(r("1"), h("1", "back"), r("1")))},
	}
	var want map[string][][3]any
	if err := json.Unmarshal([]byte(messagesDeltaReducerFixtures), &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(cases) {
		t.Fatalf("%d fixtures for %d cases", len(want), len(cases))
	}
	for name, c := range cases {
		got := [][3]any{}
		for _, m := range MessagesDeltaReduce(c[0], c[1]) {
			d := m.(map[string]any)
			got = append(got, [3]any{d["type"], d["id"], d["content"]})
		}
		if !reflect.DeepEqual(got, want[name]) {
			t.Errorf("%s: got %v, want (LangGraph.js) %v", name, got, want[name])
		}
	}
}

// TestMessagesDeltaReduceBatching checks the reducer's contract with
// DeltaChannel: reduce(reduce(s, xs), ys) == reduce(s, xs ++ ys).
func TestMessagesDeltaReduceBatching(t *testing.T) {
	t.Parallel()
	m := func(typ, id, c string) any { return map[string]any{"type": typ, "id": id, "content": c} }
	s := []any{m("human", "1", "a"), m("ai", "2", "b")}
	writes := []any{[]any{m("remove", "1", "")}, m("ai", "2", "B"), []any{m("remove", "__remove_all__", ""), m("human", "3", "c")}, m("remove", "zz", ""), m("ai", "4", "d")}
	whole := MessagesDeltaReduce(s, writes)
	for cut := 0; cut <= len(writes); cut++ {
		got := MessagesDeltaReduce(MessagesDeltaReduce(s, writes[:cut]), writes[cut:])
		if !reflect.DeepEqual(got, whole) {
			t.Errorf("split at %d: %v, whole batch %v", cut, got, whole)
		}
	}
}

func TestDeltaReplayOverwrite(t *testing.T) {
	t.Parallel()
	m := func(id string) any { return map[string]any{"type": "human", "id": id, "content": id} }
	got := DeltaReplay([]any{m("1")}, []any{m("2"), map[string]any{"__overwrite__": []any{m("9")}}, m("3")})
	if !reflect.DeepEqual(got, []any{m("9"), m("3")}) {
		t.Errorf("overwrite: %v", got)
	}
	got = DeltaReplay([]any{m("1")}, []any{map[string]any{"type": "__overwrite__", "value": nil}})
	if !reflect.DeepEqual(got, []any{}) {
		t.Errorf("overwrite with null: %v", got)
	}
	if got := DeltaReplay(nil, nil); got != nil {
		t.Errorf("unset without writes: %v", got)
	}
}
