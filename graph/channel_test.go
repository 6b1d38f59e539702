package graph

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/jsonv"
)

func TestApplyReducers(t *testing.T) {
	t.Parallel()
	g := &Graph{ID: "t", Channels: []Channel{
		{Name: "last"},
		{Name: "list", Kind: Append, Default: []any{}},
		{Name: "pre", Kind: Append, Default: []any{"d"}},
		{Name: "obj", Kind: MergeObject},
	}}
	tests := []struct {
		name    string
		values  State
		update  State
		want    State
		wantErr string
	}{
		{"replace", State{"last": "a"}, State{"last": "b"}, State{"last": "b"}, ""},
		{"replace with null", State{"last": "a"}, State{"last": nil}, State{"last": nil}, ""},
		{"replace unset", State{}, State{"last": []any{1.0}}, State{"last": []any{1.0}}, ""},
		{"append", State{"list": []any{"a"}}, State{"list": []any{"b", "c"}}, State{"list": []any{"a", "b", "c"}}, ""},
		{"append unset", State{}, State{"list": []any{"a"}}, State{"list": []any{"a"}}, ""},
		{"append onto default", State{}, State{"pre": []any{"a"}}, State{"pre": []any{"d", "a"}}, ""},
		{"append onto null", State{"list": nil}, State{"list": []any{"a"}}, State{"list": []any{"a"}}, ""},
		{"append go slice", State{}, State{"list": []string{"a"}}, State{"list": []any{"a"}}, ""},
		{"append string", State{}, State{"list": "a"}, nil, "append update must be a list, got a string"},
		{"append null", State{}, State{"list": nil}, nil, "got null"},
		{"append object", State{}, State{"list": map[string]any{}}, nil, "got an object"},
		{"merge", State{"obj": map[string]any{"a": 1.0, "b": 2.0}}, State{"obj": map[string]any{"b": 3.0, "c": 4.0}},
			State{"obj": map[string]any{"a": 1.0, "b": 3.0, "c": 4.0}}, ""},
		{"merge null deletes", State{"obj": map[string]any{"a": 1.0, "b": 2.0}}, State{"obj": map[string]any{"a": nil}},
			State{"obj": map[string]any{"b": 2.0}}, ""},
		{"merge unset", State{}, State{"obj": map[string]any{"a": 1.0}}, State{"obj": map[string]any{"a": 1.0}}, ""},
		{"merge non-object", State{}, State{"obj": []any{}}, nil, "merge update must be an object"},
		{"untouched keys kept", State{"last": "a", "foreign": 1.0}, State{"list": []any{"x"}},
			State{"last": "a", "foreign": 1.0, "list": []any{"x"}}, ""},
		{"unknown key", State{}, State{"last": "a", "zzz": 1.0, "aaa": 2.0}, nil,
			`graph "t" has no channel "aaa", "zzz" (channels: last, list, pre, obj)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, beforeUpd := jsonv.Clone(tc.values), jsonv.Clone(tc.update)
			got, err := g.Apply(tc.values, tc.update)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalidUpdate) {
					t.Fatalf("err = %v, want ErrInvalidUpdate containing %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("partial result %v", got)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %#v, want %#v", got, tc.want)
				}
			}
			if !reflect.DeepEqual(tc.values, before) || !reflect.DeepEqual(tc.update, beforeUpd) {
				t.Error("Apply mutated its inputs")
			}
		})
	}
	// The Default must not be aliased into results.
	got, err := g.Apply(State{}, State{"pre": []any{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	got["pre"].([]any)[0] = "mutated"
	if c, _ := g.Channel("pre"); c.Default.([]any)[0] != "d" {
		t.Error("Apply aliased the channel Default")
	}
}

func TestApplyDoesNotAliasAppendBacking(t *testing.T) {
	t.Parallel()
	g := &Graph{ID: "t", Channels: []Channel{{Name: "l", Kind: Append}}}
	base := make([]any, 1, 10)
	base[0] = "a"
	v1, _ := g.Apply(State{"l": base}, State{"l": []any{"b"}})
	v2, _ := g.Apply(State{"l": base}, State{"l": []any{"c"}})
	if v1["l"].([]any)[1] != "b" || v2["l"].([]any)[1] != "c" {
		t.Fatalf("branches share a backing array: %v %v", v1, v2)
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	g := &Graph{ID: "t", Channels: []Channel{
		{Name: "a", Default: "x"},
		{Name: "b", Kind: Append, Default: []any{}},
		{Name: "c"},
	}}
	raw := State{"b": []any{"y"}, "other": true}
	got := g.Values(raw)
	want := State{"a": "x", "b": []any{"y"}, "other": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Values = %#v, want %#v", got, want)
	}
	if _, ok := raw["a"]; ok {
		t.Error("Values mutated raw")
	}
	if got := g.Values(nil); !reflect.DeepEqual(got, State{"a": "x", "b": []any{}}) {
		t.Errorf("Values(nil) = %#v", got)
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[Kind]string{LastValue: "last_value", Append: "append", Messages: "messages", MergeObject: "merge_object", 9: "Kind(9)"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q", int(k), k.String())
		}
	}
}

func TestInterruptProtocol(t *testing.T) {
	t.Parallel()
	in := NewNodeInput(State{"k": []any{"v"}}, []any{"first"})
	helper := func(in NodeInput) (any, error) { return in.Interrupt("q2") } // copies share the counter
	r, err := in.Interrupt("q1")
	if err != nil || r != "first" {
		t.Fatalf("first call = %v, %v", r, err)
	}
	_, err = helper(in)
	var intr *Interrupt
	if !errors.Is(err, ErrInterrupted) || !errors.As(err, &intr) || intr.Value != "q2" || intr.Index != 1 {
		t.Fatalf("second call err = %#v", err)
	}
	var zero NodeInput
	if _, err := zero.Interrupt(1); !errors.Is(err, ErrInterrupted) {
		t.Errorf("zero NodeInput: %v", err)
	}
	// The node's copy of the values is private.
	values := State{"k": []any{"v"}}
	in2 := NewNodeInput(values, nil)
	in2.Values["k"].([]any)[0] = "changed"
	if values["k"].([]any)[0] != "v" {
		t.Error("NewNodeInput did not copy values")
	}
}
