package runs

import (
	"maps"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/weftdev/weft/api"
)

// The select parameter of GET /threads/{thread_id}/runs declares exactly
// the fields a run has (runFields, what List accepts).
func TestListSelectEnumIsRunFields(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Find("/threads/{thread_id}/runs").Get
	p := op.Parameters.GetByInAndName("query", "select")
	if p == nil || p.Schema.Value.Items == nil {
		t.Fatal("no select parameter with items")
	}
	var declared []string
	for _, v := range p.Schema.Value.Items.Value.Enum {
		declared = append(declared, v.(string))
	}
	slices.Sort(declared)
	if want := slices.Sorted(maps.Keys(runFields)); !slices.Equal(declared, want) {
		t.Fatalf("select enum %v, run fields %v (update the @Param of List)", declared, want)
	}
}
