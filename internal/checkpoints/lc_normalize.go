package checkpoints

// NormalizeLC returns v with every LangChain serialization envelope the JS
// serializer writes ({"lc":1,"type":"constructor",...}, lc:2 values)
// rewritten the way state reads rewrite stored values (see normalizeLC):
// messages become LangChain's plain message dict ("AIMessageChunk" keeps
// its class name as type). The run commit path applies it to the events
// and results external workers send, so a streamed value has the shape a
// state read gives the same value. Maps and slices of v are rewritten in
// place.
func NormalizeLC(v any) any { return normalizeLC(v) }
