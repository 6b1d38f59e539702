package state

import (
	"encoding/json"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
)

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
	if asNode == graph.START || asNode == pregel.CopyNode {
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
