package workerapi

import (
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/wire"
)

// normalizeWorkerEvents rewrites the LangChain serialization envelopes in
// the events and the result an external worker commits (a JS worker sends
// values as LangGraph's serializer writes them) into the plain message
// dicts state reads return, so streams, wait and join show one shape for
// messages whatever ran the graph.
func normalizeWorkerEvents(req *wire.CommitRequest) {
	for i := range req.Events {
		req.Events[i].Data = serde.NormalizeLC(req.Events[i].Data)
	}
	if req.End != nil {
		req.End.Result = serde.NormalizeLC(req.End.Result)
		if req.End.Error != nil {
			if m, ok := serde.NormalizeLC(req.End.Error).(map[string]any); ok {
				req.End.Error = m
			}
		}
	}
}
