package pregel

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/jsonv"
)

// CopyNode is the as_node that forks a checkpoint without changing it
// (metadata source "fork"), as LangGraph's update_state(..., "__copy__").
const CopyNode = "__copy__"

// UpdateCheckpoint computes the checkpoint update_state writes on top of base
// (nil for a thread without checkpoints): updates applied through g's
// reducers as if asNode had written them, asNode's trigger consumed, and
// the nodes that follow asNode scheduled, every channel it writes at the
// new version. It returns the checkpoint, its metadata and the channels it
// changed (with their new version).
func UpdateCheckpoint(g *graph.Graph, base *checkpoints.Tuple, updates []map[string]any, asNode, version string) (
	checkpoints.Checkpoint, checkpoints.Metadata, map[string]string, error) {
	cp := checkpoints.Checkpoint{V: 4, ChannelValues: map[string]any{}, ChannelVersions: map[string]string{},
		VersionsSeen: map[string]map[string]string{}}
	step := -1
	if base != nil {
		maps.Copy(cp.ChannelValues, base.Checkpoint.ChannelValues)
		maps.Copy(cp.ChannelVersions, base.Checkpoint.ChannelVersions)
		for node, seen := range base.Checkpoint.VersionsSeen {
			cp.VersionsSeen[node] = maps.Clone(seen)
		}
		step, _ = base.Metadata.Step()
	}
	step++
	md := checkpoints.Metadata{"source": "update", "step": step, "parents": map[string]any{}, "graph_id": g.ID}
	cp.ID = checkpoints.NewCheckpointID(step)
	cp.TS = time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	if asNode == CopyNode {
		md["source"] = "fork"
		return cp, md, map[string]string{}, nil
	}

	changed := map[string]string{}

	values := StateValues(cp.ChannelValues, g)
	for k, v := range values {
		dec, err := checkpoints.Materialize(v)
		if err != nil {
			return cp, nil, nil, err
		}
		values[k] = dec
	}
	for _, u := range updates {
		next, err := g.Apply(values, u)
		if err != nil {
			return cp, nil, nil, apperr.Errorf(apperr.Invalid, "Invalid update: %v", err)
		}
		values = next
		for k := range u {
			cp.ChannelValues[k] = values[k]
			changed[k] = version
		}
	}
	// as_node consumes its own trigger, as if it had just run.
	trig := TriggerChannel(asNode)
	if _, available := cp.ChannelValues[trig]; available {
		seen := cp.VersionsSeen[asNode]
		if seen == nil {
			seen = map[string]string{}
			cp.VersionsSeen[asNode] = seen
		}
		seen[trig] = cp.ChannelVersions[trig]
		delete(cp.ChannelValues, trig)
		changed[trig] = version
	}
	next, err := g.Next(asNode, values)
	if err != nil {
		return cp, nil, nil, apperr.Errorf(apperr.Invalid, "Cannot route after %s: %v", asNode, err)
	}
	for _, n := range next {
		cp.ChannelValues[TriggerChannel(n)] = nil
		changed[TriggerChannel(n)] = version
	}
	for ch := range changed {
		cp.ChannelVersions[ch] = version
	}
	return cp, md, changed, nil
}

// DefaultAsNode picks the node an update without as_node is attributed to,
// as LangGraph does: the node that saw the newest channel version in base;
// START when nothing ran yet. Two nodes tied for newest make the update
// ambiguous (400).
func DefaultAsNode(g *graph.Graph, base *checkpoints.Tuple) (string, error) {
	if base == nil {
		return graph.START, nil
	}
	var best string
	var bestVersion string
	tie := false
	for node, seen := range base.Checkpoint.VersionsSeen {
		if _, ok := g.Node(node); !ok && node != graph.START {
			continue
		}
		for _, v := range seen {
			switch c := checkpoints.CompareVersions(v, bestVersion); {
			case c > 0:
				best, bestVersion, tie = node, v, false
			case c == 0 && best != "" && node != best:
				tie = true
			}
		}
	}
	if best == "" {
		return graph.START, nil
	}
	if tie {
		return "", apperr.Errorf(apperr.BadRequest, "Ambiguous update: several nodes ran last; specify as_node")
	}
	return best, nil
}

// ParseUpdates reads update_state's values: an object, a list of objects
// (applied in order), or null (no values: only as_node's routing).
func ParseUpdates(raw json.RawMessage) ([]map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one map[string]any
	if err := jsonv.Decode(raw, &one); err == nil {
		return []map[string]any{one}, nil
	}
	var many []map[string]any
	if err := jsonv.Decode(raw, &many); err == nil && !slices.ContainsFunc(many, func(m map[string]any) bool { return m == nil }) {
		return many, nil
	}
	return nil, apperr.Errorf(apperr.Invalid, "Invalid values: must be an object, a list of objects or null")
}

// CheckAsNode validates a client-given as_node against g.
func CheckAsNode(g *graph.Graph, asNode string) error {
	if asNode == graph.START || asNode == CopyNode {
		return nil
	}
	if _, ok := g.Node(asNode); !ok {
		names := []string{graph.START}
		for _, n := range g.Nodes {
			names = append(names, n.Name)
		}
		return apperr.Errorf(apperr.BadRequest, "Node %q not found in graph %q (nodes: %v)", asNode, g.ID, names)
	}
	return nil
}
