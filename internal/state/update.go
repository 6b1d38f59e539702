package state

import (
	"bytes"
	"encoding/json"
	"maps"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/graph"
)

// TaskID is the id of the task that runs node name (at path) from
// checkpoint cfg, whose metadata step is step. Pull tasks get LangGraph's
// own id: UUIDv5, in the namespace of the checkpoint id, of the JSON text
// [task namespace, step+1 as a string, name, "__pregel_pull", [trigger]]
// (the id LangGraph's executor gives the task and files its writes under).
// Push tasks (Sends) get [task namespace, step+1, name, path...] in the same
// namespace.
func TaskID(cfg checkpoints.Config, step int, name string, path []any) string {
	ns, err := uuid.Parse(cfg.CheckpointID)
	if err != nil {
		ns = uuid.NameSpaceOID
	}
	taskNS := name
	if cfg.NS != "" {
		taskNS = cfg.NS + "|" + name
	}
	parts := []any{taskNS, strconv.Itoa(step + 1), name}
	if len(path) > 0 && path[0] == pullPath {
		parts = append(parts, pullPath, []string{triggerChannel(name)})
	} else {
		parts = append(parts, path...)
	}
	var key bytes.Buffer
	enc := json.NewEncoder(&key)
	enc.SetEscapeHTML(false) // JSON.stringify's form
	_ = enc.Encode(parts)
	return uuid.NewSHA1(ns, bytes.TrimSuffix(key.Bytes(), []byte("\n"))).String()
}

// copyNode is the as_node that forks a checkpoint without changing it
// (metadata source "fork"), as LangGraph's update_state(..., "__copy__").
const copyNode = "__copy__"

// newCheckpoint computes the checkpoint update_state writes on top of base
// (nil for a thread without checkpoints): updates applied through g's
// reducers as if asNode had written them, asNode's trigger consumed, and
// the nodes that follow asNode scheduled, every channel it writes at the
// new version. It returns the checkpoint, its metadata and the channels it
// changed (with their new version).
func newCheckpoint(g *graph.Graph, base *checkpoints.Tuple, updates []map[string]any, asNode, version string) (
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
	if asNode == copyNode {
		md["source"] = "fork"
		return cp, md, map[string]string{}, nil
	}

	changed := map[string]string{}

	values := stateValues(cp.ChannelValues, g)
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
	trig := triggerChannel(asNode)
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
		cp.ChannelValues[triggerChannel(n)] = nil
		changed[triggerChannel(n)] = version
	}
	for ch := range changed {
		cp.ChannelVersions[ch] = version
	}
	return cp, md, changed, nil
}

// nextVersion mints the version of every channel an update of base writes:
// above every version base has, as LangGraph's apply_writes mints them.
// On a thread in the JS saver's integer scheme (base's versions are all
// integers) it stays an integer, so the stock JS saver can continue the
// thread, and goes above every integer version of the thread (threadMax),
// so a fork never reuses a sibling branch's version; otherwise it is
// checkpoints.NextVersion's unique string.
func nextVersion(base *checkpoints.Tuple, threadMax int64) string {
	var maxVersion string
	if base != nil {
		for _, v := range base.Checkpoint.ChannelVersions {
			if checkpoints.CompareVersions(v, maxVersion) > 0 {
				maxVersion = v
			}
		}
	}
	if !usesIntVersions(base) {
		return checkpoints.NextVersion(maxVersion)
	}
	n, _ := strconv.ParseInt(maxVersion, 10, 64)
	return strconv.FormatInt(max(n, threadMax)+1, 10)
}

// usesIntVersions reports whether base is in the JS saver's integer scheme.
func usesIntVersions(base *checkpoints.Tuple) bool {
	if base == nil || len(base.Checkpoint.ChannelVersions) == 0 {
		return false
	}
	for _, v := range base.Checkpoint.ChannelVersions {
		if !checkpoints.IsIntVersion(v) {
			return false
		}
	}
	return true
}

// defaultAsNode picks the node an update without as_node is attributed to,
// as LangGraph does: the node that saw the newest channel version in base;
// START when nothing ran yet. Two nodes tied for newest make the update
// ambiguous (400).
func defaultAsNode(g *graph.Graph, base *checkpoints.Tuple) (string, error) {
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

// parseUpdates reads update_state's values: an object, a list of objects
// (applied in order), or null (no values: only as_node's routing).
func parseUpdates(raw json.RawMessage) ([]map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one map[string]any
	if err := decodeJSON(raw, &one); err == nil {
		return []map[string]any{one}, nil
	}
	var many []map[string]any
	if err := decodeJSON(raw, &many); err == nil {
		return many, nil
	}
	return nil, apperr.Errorf(apperr.Invalid, "Invalid values: must be an object, a list of objects or null")
}

// checkAsNode validates a client-given as_node against g.
func checkAsNode(g *graph.Graph, asNode string) error {
	if asNode == graph.START || asNode == copyNode {
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

func graphError(graphID string, known []string) error {
	if graphID == "" {
		return apperr.Errorf(apperr.BadRequest,
			"Thread has no graph: set metadata.graph_id (one of %v) or run it once before updating its state", known)
	}
	return apperr.Errorf(apperr.BadRequest, "Graph %q is not registered on this server (registered: %v)", graphID, known)
}
