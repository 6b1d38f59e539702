// Package serde reads and writes the serialized values that LangGraph
// checkpoint savers keep in checkpoint_blobs.blob and checkpoint_writes.blob,
// each tagged by the row's type column.
//
// # Type names
//
// The type column names the encoding of the blob:
//
//	json      UTF-8 JSON text. Written by the JS saver for every JSON value
//	          (LangChain objects appear as {"lc":1,"type":"constructor",...}).
//	bytes     Raw bytes (JS: a top-level Uint8Array; Python: bytes).
//	bytearray Raw bytes (Python: bytearray). Read like bytes.
//	empty     The channel got a new version but holds no value; blob is NULL.
//	msgpack   Python's default: msgpack as produced by ormsgpack through
//	          langgraph.checkpoint.serde.jsonplus.JsonPlusSerializer.
//	null      Python's encoding of None; blob is empty.
//
// Any other type name (for example Python's optional "pickle") is rejected
// with an error wrapping [ErrUnknownType] that names the type: a foreign
// encoding is never guessed at.
//
// # Decoded values
//
// [Decode] always produces a JSON-compatible Go value, the same shapes
// encoding/json produces with UseNumber:
//
//	nil, bool, string, []any, map[string]any,
//	json.Number  for every integer (msgpack ints of any width, JSON numbers),
//	             so that uint64 and int64 values survive exactly,
//	float64      for msgpack float32/float64 (NaN and ±Inf become nil, as
//	             JSON cannot hold them; orjson does the same),
//	json.Number  for JSON numbers in "json" blobs (integers and fractions alike).
//
// Byte strings (the whole blob of a "bytes" row, or msgpack bin values) become
// standard base64 strings (RFC 4648 §4, with padding), as encoding/json
// renders []byte. Non-string msgpack map keys become strings: integers in
// decimal, floats as Python's repr would print them ("1.0"), booleans as
// "true"/"false", nil as "null", arrays of scalars (Python tuples) as their
// JSON text ("[1,2]"). Keys holding maps or nested arrays, which Python cannot
// write, are an error. When keys collide after conversion the later entry
// wins, like a Python dict.
//
// # Empty values
//
// A row of type "empty" means "this channel version has no value", which is
// different from a value that is null. Decode returns (nil, [ErrEmpty]) for it;
// callers test errors.Is(err, ErrEmpty) and skip the channel, as the savers do.
//
// # Python extension types
//
// JsonPlusSerializer encodes values that msgpack cannot hold natively as ext
// values whose payload is itself msgpack, normally an array
// [module, class name, argument(s) (, method)]. Decode maps them to JSON:
//
//	code 0 constructor(arg)     uuid.UUID → canonical "8-4-4-4-12" string;
//	                            decimal.Decimal, ipaddress.*, zoneinfo.ZoneInfo
//	                            → string; set, frozenset, deque → array;
//	                            enum → its value; pydantic SecretStr/SecretBytes
//	                            → "**********" (as pydantic's JSON mode);
//	                            other classes → the argument.
//	code 1 constructor(*args)   datetime.date → "YYYY-MM-DD";
//	                            datetime.timedelta → total seconds (json.Number);
//	                            datetime.timezone → UTC offset "+HH:MM[:SS[.ffffff]]";
//	                            pathlib paths → the path string; re.compile →
//	                            the pattern string; langgraph.types.Send →
//	                            {"node", "arg"[, "timeout"]}; others → args array.
//	code 2 constructor(**kw)    datetime.time → ISO "HH:MM:SS[.ffffff][±HH:MM]";
//	                            namedtuples, dataclasses, store Items, other
//	                            classes → the kwargs object.
//	code 3 Class.method(arg)    datetime.datetime.fromisoformat → the ISO string
//	                            as Python wrote it; others → the argument.
//	code 4 pydantic v1 model    the field object (see messages below).
//	code 5 pydantic v2 model    the field object (see messages below).
//	code 6 numpy.ndarray        nested arrays for bool, int8..int64,
//	                            uint8..uint64, float16/32/64 in C or Fortran
//	                            order; other dtypes → {"dtype", "shape",
//	                            "order", "data" (base64)}.
//	code 7 DeltaSnapshot        the snapshot's value itself (a non-empty
//	                            blob is what ends a delta-channel walk).
//	code -1 msgpack timestamp   RFC 3339 string in UTC with nanoseconds.
//
// Classes from langchain_core.messages (HumanMessage, AIMessage, ToolMessage,
// SystemMessage, FunctionMessage, ChatMessage, RemoveMessage and the *Chunk
// variants) become LangChain's message dict: the model's fields with "type"
// set from the class name when missing ("human", "ai", "tool", "system",
// "function", "chat", "remove"; chunks keep the class name, e.g.
// "AIMessageChunk"), and the fields every message has (content,
// additional_kwargs, response_metadata, name, id; for AI messages also
// tool_calls, invalid_tool_calls, usage_metadata, and for their chunks
// tool_call_chunks and chunk_position; for tool messages artifact and
// status) filled with LangChain's defaults when absent: model_dump's fields.
//
// A class this package does not know degrades to its arguments or fields, as
// Python's own JSON conversion does; it is never an error. An unknown ext code,
// a payload that is not [module, name, ...], a numpy buffer that does not
// match its shape, truncated or trailing bytes, invalid UTF-8 in a msgpack
// string, or nesting deeper than 1024 levels (ext payloads included) is an
// error wrapping [ErrMalformed] that gives the byte offset. Decode never panics on any input (a fuzz
// target checks this).
//
// # Encoding
//
// [Encode] writes the way the JS saver does: []byte as "bytes" (raw), every
// other value — nil included, which gives the JSON text null — as "json".
// It never writes "msgpack": Weft does not produce Python's encoding.
package serde
