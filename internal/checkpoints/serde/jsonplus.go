package serde

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// Ext type codes written by Python's langgraph.checkpoint.serde.jsonplus.
// Codes 0-5 carry a msgpack array payload [module, class name, argument(s)]
// (code 3 and pydantic v2 add a method name as a fourth element).
const (
	// ExtConstructorSingleArg is Class(arg): payload [module, name, arg].
	ExtConstructorSingleArg = 0
	// ExtConstructorPosArgs is Class(*args): payload [module, name, args].
	ExtConstructorPosArgs = 1
	// ExtConstructorKwArgs is Class(**kwargs): payload [module, name, kwargs].
	ExtConstructorKwArgs = 2
	// ExtMethodSingleArg is Class.method(arg): payload [module, name, arg, method].
	ExtMethodSingleArg = 3
	// ExtPydanticV1 is a pydantic v1 model: payload [module, name, fields].
	ExtPydanticV1 = 4
	// ExtPydanticV2 is a pydantic v2 model: payload [module, name, fields, method].
	ExtPydanticV2 = 5
	// ExtNumpyArray is a numpy.ndarray: payload [dtype, shape, order, buffer].
	ExtNumpyArray = 6
	// ExtDeltaSnapshot is a DeltaChannel snapshot: payload is the value itself.
	ExtDeltaSnapshot = 7
	// ExtTimestamp is the msgpack spec's predefined timestamp extension.
	ExtTimestamp = -1
)

// ext converts one ext value by its type code; s decodes its payload.
func (d *decoder) ext(code int8, s *decoder) (any, error) {
	switch code {
	case ExtTimestamp:
		return timestamp(s)
	case ExtNumpyArray:
		return numpy(s)
	case ExtDeltaSnapshot:
		return s.whole()
	case ExtConstructorSingleArg, ExtConstructorPosArgs, ExtConstructorKwArgs,
		ExtMethodSingleArg, ExtPydanticV1, ExtPydanticV2:
		v, err := s.whole()
		if err != nil {
			return nil, err
		}
		tup, ok := v.([]any)
		if !ok || len(tup) < 3 {
			return nil, s.payloadErrorf(code, "not [module, name, arg, ...]")
		}
		module, ok1 := tup[0].(string)
		name, ok2 := tup[1].(string)
		if !ok1 || !ok2 {
			return nil, s.payloadErrorf(code, "module and name are not strings")
		}
		return pyObject(code, module, name, tup[2]), nil
	}
	return nil, s.payloadErrorf(code, "unknown ext type %d", code)
}

// pyObject maps a Python object, given as its class and the (already decoded)
// argument JsonPlusSerializer stored for it, to JSON. A class it does not know,
// or an argument of an unexpected shape, degrades to the argument itself.
func pyObject(code int8, module, name string, arg any) any {
	if fields, ok := arg.(map[string]any); ok && isMessageClass(module, name) {
		return message(name, fields)
	}
	var (
		v  any
		ok bool
	)
	switch code {
	case ExtConstructorSingleArg:
		switch {
		case module == "uuid" && name == "UUID":
			v, ok = uuidString(arg)
		case isSecretClass(module, name):
			v, ok = "**********", true
		}
	case ExtConstructorPosArgs:
		args, isArray := arg.([]any)
		if !isArray {
			break
		}
		switch {
		case module == "datetime" && name == "date":
			v, ok = dateString(args)
		case module == "datetime" && name == "timedelta":
			v, ok = timedeltaSeconds(args)
		case module == "datetime" && name == "timezone":
			v, ok = timezoneOffset(args)
		case module == "re" && name == "compile" && len(args) > 0:
			v, ok = args[0], true
		case (module == "langgraph.types" || module == "langgraph.constants") && name == "Send":
			v, ok = sendObject(args)
		case isPathClass(module, name):
			v, ok = pathString(name, args)
		}
	case ExtConstructorKwArgs:
		if module == "datetime" && name == "time" {
			if kw, isMap := arg.(map[string]any); isMap {
				v, ok = timeString(kw)
			}
		}
	}
	if ok {
		return v
	}
	return arg
}

// messageTypes maps LangChain message classes to their "type" field.
var messageTypes = map[string]string{
	"HumanMessage":    "human",
	"AIMessage":       "ai",
	"ToolMessage":     "tool",
	"SystemMessage":   "system",
	"FunctionMessage": "function",
	"ChatMessage":     "chat",
	"RemoveMessage":   "remove",
}

func isMessageClass(module, name string) bool {
	return (strings.HasPrefix(module, "langchain_core.messages") || strings.HasPrefix(module, "langchain.schema")) &&
		(strings.HasSuffix(name, "Message") || strings.HasSuffix(name, "MessageChunk"))
}

// messageType derives a message's "type" from its class name: the table
// above, the class name itself for chunks (LangChain's own convention), and
// otherwise the lower-cased name without "Message".
func messageType(name string) string {
	if t, ok := messageTypes[name]; ok {
		return t
	}
	if strings.HasSuffix(name, "Chunk") {
		return name
	}
	return strings.ToLower(strings.TrimSuffix(name, "Message"))
}

// message completes a LangChain message's fields into the dict form
// LangChain's model_dump produces.
func message(name string, m map[string]any) map[string]any {
	if t, _ := m["type"].(string); t == "" {
		m["type"] = messageType(name)
	}
	setDefault(m, "content", "")
	setDefault(m, "additional_kwargs", map[string]any{})
	setDefault(m, "response_metadata", map[string]any{})
	setDefault(m, "name", nil)
	setDefault(m, "id", nil)
	switch name {
	case "AIMessage", "AIMessageChunk":
		setDefault(m, "tool_calls", []any{})
		setDefault(m, "invalid_tool_calls", []any{})
		setDefault(m, "usage_metadata", nil)
		if name == "AIMessageChunk" {
			setDefault(m, "tool_call_chunks", []any{})
			setDefault(m, "chunk_position", nil)
		}
	case "ToolMessage", "ToolMessageChunk":
		setDefault(m, "artifact", nil)
		setDefault(m, "status", "success")
	}
	return m
}

func setDefault(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

func isSecretClass(module, name string) bool {
	return (module == "pydantic.types" || module == "pydantic.v1.types" || module == "pydantic") &&
		(name == "SecretStr" || name == "SecretBytes")
}

func isPathClass(module, name string) bool {
	return (module == "pathlib" || strings.HasPrefix(module, "pathlib.")) && strings.HasSuffix(name, "Path")
}

// uuidString renders the 32 hex digits of uuid.UUID.hex in canonical form.
func uuidString(arg any) (any, bool) {
	s, ok := arg.(string)
	if !ok || len(s) != 32 {
		return nil, false
	}
	if _, err := hex.DecodeString(s); err != nil {
		return nil, false
	}
	s = strings.ToLower(s)
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:], true
}

// ints reads every element of args as an int64.
func ints(args []any) ([]int64, bool) {
	out := make([]int64, len(args))
	for i, a := range args {
		n, ok := a.(json.Number)
		if !ok {
			return nil, false
		}
		v, err := n.Int64()
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// dateString renders date(year, month, day) as Python's date.isoformat does.
func dateString(args []any) (any, bool) {
	v, ok := ints(args)
	if !ok || len(v) != 3 {
		return nil, false
	}
	return fmt.Sprintf("%04d-%02d-%02d", v[0], v[1], v[2]), true
}

// timedeltaSeconds renders timedelta(days, seconds, microseconds) as its
// exact total seconds, a json.Number with up to six decimals.
func timedeltaSeconds(args []any) (any, bool) {
	v, ok := ints(args)
	if !ok || len(v) != 3 {
		return nil, false
	}
	// days*86_400_000_000 may overflow int64 for Python's extreme timedeltas.
	micros := new(big.Int).Mul(big.NewInt(v[0]), big.NewInt(86_400_000_000))
	micros.Add(micros, new(big.Int).Mul(big.NewInt(v[1]), big.NewInt(1_000_000)))
	micros.Add(micros, big.NewInt(v[2]))
	sign := ""
	if micros.Sign() < 0 {
		sign = "-"
		micros.Neg(micros)
	}
	sec, frac := new(big.Int).QuoRem(micros, big.NewInt(1_000_000), new(big.Int))
	s := sign + sec.String()
	if frac.Sign() != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac.Int64()), "0")
	}
	return json.Number(s), true
}

// timezoneOffset renders timezone(offset[, name]) as an ISO 8601 UTC offset;
// offset arrives already converted by timedeltaSeconds.
func timezoneOffset(args []any) (any, bool) {
	if len(args) < 1 {
		return nil, false
	}
	n, ok := args[0].(json.Number)
	if !ok {
		return nil, false
	}
	f, err := n.Float64()
	if err != nil || math.Abs(f) >= 86400 {
		return nil, false
	}
	return offsetString(int64(math.Round(f * 1e6))), true
}

// offsetString formats a UTC offset in microseconds the way Python's
// isoformat does: ±HH:MM, then :SS and .ffffff only when non-zero.
func offsetString(micros int64) string {
	sign := "+"
	if micros < 0 {
		sign = "-"
		micros = -micros
	}
	us := micros % 1_000_000
	secs := micros / 1_000_000
	s := fmt.Sprintf("%s%02d:%02d", sign, secs/3600, secs/60%60)
	if secs%60 != 0 || us != 0 {
		s += fmt.Sprintf(":%02d", secs%60)
	}
	if us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// timeString renders time(hour, minute, second, microsecond, tzinfo) as
// Python's time.isoformat does. A fixed-offset tzinfo (decoded to "±HH:MM")
// is appended; a named zone is dropped, as Python gives no offset for a bare
// time in a ZoneInfo zone.
func timeString(kw map[string]any) (any, bool) {
	var parts [4]int64
	for i, k := range [...]string{"hour", "minute", "second", "microsecond"} {
		n, ok := kw[k].(json.Number)
		if !ok {
			if kw[k] == nil && k == "microsecond" {
				continue
			}
			return nil, false
		}
		v, err := n.Int64()
		if err != nil {
			return nil, false
		}
		parts[i] = v
	}
	s := fmt.Sprintf("%02d:%02d:%02d", parts[0], parts[1], parts[2])
	if parts[3] != 0 {
		s += fmt.Sprintf(".%06d", parts[3])
	}
	if tz, ok := kw["tzinfo"].(string); ok && (strings.HasPrefix(tz, "+") || strings.HasPrefix(tz, "-")) {
		s += tz
	}
	return s, true
}

// sendObject renders langgraph.types.Send(node, arg[, timeout]) with its
// Python attribute names.
func sendObject(args []any) (any, bool) {
	if len(args) < 2 || len(args) > 3 {
		return nil, false
	}
	m := map[string]any{"node": args[0], "arg": args[1]}
	if len(args) == 3 {
		m["timeout"] = args[2]
	}
	return m, true
}

// pathString joins a pathlib path's parts as str(path) would: the anchor
// ("/" or a Windows drive) is followed directly by the next part.
func pathString(name string, args []any) (any, bool) {
	if len(args) == 0 {
		return ".", true
	}
	sep := "/"
	if strings.Contains(name, "Windows") {
		sep = `\`
	}
	var b strings.Builder
	for i, a := range args {
		p, ok := a.(string)
		if !ok {
			return nil, false
		}
		if i > 0 && !strings.HasSuffix(b.String(), sep) {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	return b.String(), true
}

// timeUTC renders a Unix time as an RFC 3339 UTC string with nanoseconds.
func timeUTC(sec int64, nsec uint32) string {
	return time.Unix(sec, int64(nsec)).UTC().Format(time.RFC3339Nano)
}
