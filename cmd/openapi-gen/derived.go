package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// A variant is a component schema derived from another by dropping
// properties, for the operations whose body takes only part of it: a
// stateless run takes every field of a run on a thread but the checkpoint
// to start from (POST /runs with checkpoint_id is a 400), as the official
// server's RunCreateStateless does. The handlers decode the whole type and
// refuse the dropped fields themselves. A variant may instead require none
// of the properties, for the answers of the operations whose select
// leaves fields out.
type variant struct {
	name, from string
	drop       []string
	// optional makes every property optional.
	optional bool
	why      string // appended to the description
	// bodies are the operations ("METHOD /path") whose request body (or
	// its items, for an array body) refers to from and is to refer to name;
	// responses those whose 200 answer (or its items) does.
	bodies, responses []string
}

// selected is why a selected variant's properties are all optional.
const selected = "Every field, or only those select names (the others are left out)."

var variants = []variant{
	{name: "runs.StatelessCreateRequest", from: "runs.CreateRequest", drop: []string{"checkpoint_id", "checkpoint"},
		why:    "A stateless run has no history to start from: checkpoint_id and checkpoint are refused (400).",
		bodies: []string{"POST /runs", "POST /runs/wait", "POST /runs/stream", "POST /runs/batch"}},
	{name: "threads.SelectedThread", from: "threads.Thread", optional: true, why: selected,
		responses: []string{"POST /threads/search"}},
	{name: "assistants.SelectedAssistant", from: "assistants.Assistant", optional: true, why: selected,
		responses: []string{"POST /assistants/search"}},
	{name: "crons.SelectedCron", from: "crons.Cron", optional: true, why: selected,
		responses: []string{"POST /runs/crons/search"}},
	{name: "runs.SelectedRun", from: "runs.Run", optional: true, why: selected,
		responses: []string{"GET /threads/{thread_id}/runs"}},
}

// derive adds the variants to doc and points their operations at them.
func derive(doc *openapi3.T) error {
	for _, v := range variants {
		base := doc.Components.Schemas[v.from]
		if base == nil || base.Value == nil {
			return fmt.Errorf("variant %s: no schema %s", v.name, v.from)
		}
		raw, err := json.Marshal(base.Value)
		if err != nil {
			return err
		}
		var s openapi3.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		for _, p := range v.drop {
			if _, ok := s.Properties[p]; !ok {
				return fmt.Errorf("variant %s: %s has no property %s", v.name, v.from, p)
			}
			delete(s.Properties, p)
			s.Required = remove(s.Required, p)
		}
		if v.optional {
			s.Required = nil
		}
		s.Description = strings.TrimSpace(s.Description + "\n\n" + v.why)
		doc.Components.Schemas[v.name] = openapi3.NewSchemaRef("", &s)
		target := openapi3.NewSchemaRef("#/components/schemas/"+v.name, &s)
		for _, op := range v.bodies {
			method, path, _ := strings.Cut(op, " ")
			item := doc.Paths.Find(path)
			if item == nil || item.GetOperation(method) == nil || item.GetOperation(method).RequestBody == nil {
				return fmt.Errorf("variant %s: no request body on %s", v.name, op)
			}
			mt := item.GetOperation(method).RequestBody.Value.Content.Get("application/json")
			switch {
			case mt == nil || mt.Schema == nil:
				return fmt.Errorf("variant %s: no JSON body on %s", v.name, op)
			case mt.Schema.Ref == "#/components/schemas/"+v.from:
				mt.Schema = target
			case mt.Schema.Value != nil && mt.Schema.Value.Items != nil && mt.Schema.Value.Items.Ref == "#/components/schemas/"+v.from:
				mt.Schema.Value.Items = target
			default:
				return fmt.Errorf("variant %s: the body of %s is not %s", v.name, op, v.from)
			}
		}
		for _, op := range v.responses {
			method, path, _ := strings.Cut(op, " ")
			item := doc.Paths.Find(path)
			if item == nil || item.GetOperation(method) == nil {
				return fmt.Errorf("variant %s: no operation %s", v.name, op)
			}
			resp := item.GetOperation(method).Responses.Value("200")
			var mt *openapi3.MediaType
			if resp != nil && resp.Value != nil {
				mt = resp.Value.Content.Get("application/json")
			}
			switch {
			case mt == nil || mt.Schema == nil:
				return fmt.Errorf("variant %s: no JSON 200 on %s", v.name, op)
			case mt.Schema.Ref == "#/components/schemas/"+v.from:
				mt.Schema = target
			case mt.Schema.Value != nil && mt.Schema.Value.Items != nil && mt.Schema.Value.Items.Ref == "#/components/schemas/"+v.from:
				mt.Schema.Value.Items = target
			default:
				return fmt.Errorf("variant %s: the 200 of %s is not %s", v.name, op, v.from)
			}
		}
	}
	return nil
}

func remove(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
