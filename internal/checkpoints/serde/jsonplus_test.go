package serde

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Builders for ext vectors, each a direct transcription of a msgpack spec
// rule, so the vectors below stay readable. They return hex.

// str encodes a UTF-8 string: fixstr (0xa0 | len) below 32 bytes, else str8
// (0xd9, len).
func str(s string) string {
	if len(s) < 32 {
		return fmt.Sprintf("%02x", 0xa0|len(s)) + hex.EncodeToString([]byte(s))
	}
	return fmt.Sprintf("d9 %02x", len(s)) + hex.EncodeToString([]byte(s))
}

// arr encodes a fixarray (0x90 | count) of already-encoded elements.
func arr(elems ...string) string {
	return fmt.Sprintf("%02x", 0x90|len(elems)) + strings.Join(elems, "")
}

// obj encodes a fixmap (0x80 | count) of alternating keys and values.
func obj(kvs ...string) string {
	return fmt.Sprintf("%02x", 0x80|len(kvs)/2) + strings.Join(kvs, "")
}

// ext wraps payload hex in the smallest ext format: fixext 1/2/4/8/16
// (0xd4..0xd8) when the length is one of those, else ext 8 (0xc7, len) or
// ext 16 (0xc8, 2-byte len); then the type byte and the payload.
func ext(code int8, payload string) string {
	p := strings.Join(strings.Fields(payload), "")
	size := len(p) / 2
	var head string
	switch size {
	case 1:
		head = "d4"
	case 2:
		head = "d5"
	case 4:
		head = "d6"
	case 8:
		head = "d7"
	case 16:
		head = "d8"
	default:
		if size < 256 {
			head = fmt.Sprintf("c7 %02x", size)
		} else {
			head = fmt.Sprintf("c8 %04x", size)
		}
	}
	return head + fmt.Sprintf("%02x", uint8(code)) + p
}

// The full vector of a HumanMessage as JsonPlusSerializer writes a pydantic
// v2 model: ext(5, [module, class, model_dump(), "model_validate_json"]).
const humanMessageHex = "" +
	"c7 5d 05" + // ext 8, payload length 93, type 5 (EXT_PYDANTIC_V2)
	"94" + // fixarray(4)
	"bd 6c616e67636861696e5f636f72652e6d657373616765732e68756d616e" + // fixstr(29) "langchain_core.messages.human"
	"ac 48756d616e4d657373616765" + // fixstr(12) "HumanMessage"
	"83" + // fixmap(3)
	"a7 636f6e74656e74 a2 6869" + // "content": "hi"
	"a4 74797065 a5 68756d616e" + // "type": "human"
	"a2 6964 a2 6d31" + // "id": "m1"
	"b3 6d6f64656c5f76616c69646174655f6a736f6e" // fixstr(19) "model_validate_json"

func TestHumanMessageLiteralMatchesBuilders(t *testing.T) {
	t.Parallel()
	built := ext(5, arr(str("langchain_core.messages.human"), str("HumanMessage"),
		obj(str("content"), str("hi"), str("type"), str("human"), str("id"), str("m1")),
		str("model_validate_json")))
	if a, b := hex.EncodeToString(hx(t, humanMessageHex)), hex.EncodeToString(hx(t, built)); a != b {
		t.Fatalf("literal and built vectors differ:\n%s\n%s", a, b)
	}
}

func TestDecodeJsonPlusMessages(t *testing.T) {
	t.Parallel()
	human := map[string]any{
		"content": "hi", "type": "human", "id": "m1",
		"name": nil, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
	}
	toolCall := obj(str("name"), str("search"), str("args"), obj(str("q"), str("go")),
		str("id"), str("call_1"), str("type"), str("tool_call"))
	runDecodeCases(t, []decodeCase{
		{"HumanMessage pydantic v2", humanMessageHex, human},
		{"AIMessage with tool_calls, type inferred", ext(5, arr(
			str("langchain_core.messages.ai"), str("AIMessage"),
			obj(str("content"), str(""), str("tool_calls"), arr(toolCall), str("id"), str("a1")),
			str("model_validate_json"))),
			map[string]any{
				"type": "ai", "content": "", "id": "a1", "name": nil,
				"tool_calls": []any{map[string]any{
					"name": "search", "args": map[string]any{"q": "go"}, "id": "call_1", "type": "tool_call",
				}},
				"invalid_tool_calls": []any{}, "usage_metadata": nil,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
			}},
		{"ToolMessage pydantic v1", ext(4, arr(
			str("langchain_core.messages.tool"), str("ToolMessage"),
			obj(str("content"), str("ok"), str("tool_call_id"), str("call_1")))),
			map[string]any{
				"type": "tool", "content": "ok", "tool_call_id": "call_1", "id": nil, "name": nil,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
				"artifact": nil, "status": "success",
			}},
		{"AIMessageChunk keeps class name as type", ext(5, arr(
			str("langchain_core.messages.ai"), str("AIMessageChunk"),
			obj(str("content"), str("par")), str("model_validate_json"))),
			map[string]any{
				"type": "AIMessageChunk", "content": "par", "id": nil, "name": nil,
				"tool_calls": []any{}, "invalid_tool_calls": []any{}, "usage_metadata": nil,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
				"tool_call_chunks": []any{}, "chunk_position": nil,
			}},
		{"RemoveMessage as kwargs", ext(2, arr(
			str("langchain_core.messages.modifier"), str("RemoveMessage"), obj(str("id"), str("m1")))),
			map[string]any{
				"type": "remove", "content": "", "id": "m1", "name": nil,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
			}},
		{"message list", arr(humanMessageHex, humanMessageHex), []any{human, human}},
	})
}

func TestDecodeJsonPlusStdlib(t *testing.T) {
	t.Parallel()
	timedelta := func(d, s, us string) string {
		return ext(1, arr(str("datetime"), str("timedelta"), arr(d, s, us)))
	}
	runDecodeCases(t, []decodeCase{
		// datetime: ext 3 [module, name, isoformat(), "fromisoformat"].
		{"datetime with tz", ext(3, arr(str("datetime"), str("datetime"),
			str("2024-05-06T07:08:09.123456+02:00"), str("fromisoformat"))),
			"2024-05-06T07:08:09.123456+02:00"},
		// uuid: ext 0 with UUID.hex (32 lower-case hex digits).
		{"uuid", ext(0, arr(str("uuid"), str("UUID"), str("12345678123456781234567812345678"))),
			"12345678-1234-5678-1234-567812345678"},
		// set/frozenset/deque: ext 0 with tuple(obj).
		{"set", ext(0, arr(str("builtins"), str("set"), arr("01", "02", "03"))),
			[]any{n("1"), n("2"), n("3")}},
		{"frozenset", ext(0, arr(str("builtins"), str("frozenset"), arr(str("a")))), []any{"a"}},
		{"deque", ext(0, arr(str("collections"), str("deque"), arr())), []any{}},
		// A plain tuple is a msgpack array, no ext.
		{"tuple", arr("01", str("b"), "c0"), []any{n("1"), "b", nil}},
		// namedtuple: ext 2 with _asdict().
		{"namedtuple", ext(2, arr(str("app.types"), str("Point"), obj(str("x"), "01", str("y"), "02"))),
			map[string]any{"x": n("1"), "y": n("2")}},
		{"decimal", ext(0, arr(str("decimal"), str("Decimal"), str("1.10"))), "1.10"},
		{"enum", ext(0, arr(str("app.enums"), str("Color"), str("red"))), "red"},
		{"ipv4", ext(0, arr(str("ipaddress"), str("IPv4Address"), str("10.0.0.1"))), "10.0.0.1"},
		{"zoneinfo", ext(0, arr(str("zoneinfo"), str("ZoneInfo"), str("Europe/Paris"))), "Europe/Paris"},
		{"secret", ext(0, arr(str("pydantic.types"), str("SecretStr"), str("hunter2"))), "**********"},
		{"date", ext(1, arr(str("datetime"), str("date"), arr("cd 07 e8", "05", "06"))), "2024-05-06"}, // 2024 = uint16 0x07e8
		{"timedelta", timedelta("01", "cd 0e 10", "ce 00 07 a1 20"), n("90000.5")},                     // 1 day, 3600 s, 500000 µs
		{"timedelta negative", timedelta("ff", "ce 00 01 51 7f", "ce 00 07 a1 20"), n("-0.5")},         // -1 day, 86399 s, 500000 µs
		// timezone(timedelta(days=-1, seconds=66600)) = UTC-05:30.
		{"timezone", ext(1, arr(str("datetime"), str("timezone"), arr(timedelta("ff", "ce 00 01 04 28", "00")))), "-05:30"},
		// time: ext 2 kwargs; tzinfo is itself timezone(timedelta(seconds=3600)).
		{"time with tz", ext(2, arr(str("datetime"), str("time"), obj(
			str("hour"), "0a", str("minute"), "1e", str("second"), "00", str("microsecond"), "cd 01 f4",
			str("tzinfo"), ext(1, arr(str("datetime"), str("timezone"), arr(timedelta("00", "cd 0e 10", "00")))),
			str("fold"), "00"))),
			"10:30:00.000500+01:00"},
		{"posix path", ext(1, arr(str("pathlib"), str("PosixPath"), arr(str("/"), str("usr"), str("lib")))), "/usr/lib"},
		{"windows path", ext(1, arr(str("pathlib._local"), str("WindowsPath"), arr(str(`c:\`), str("Users")))), `c:\Users`},
		{"relative path", ext(1, arr(str("pathlib"), str("Path"), arr(str("a"), str("b")))), "a/b"},
		{"regex", ext(1, arr(str("re"), str("compile"), arr(str("a+"), "20"))), "a+"},
		{"send", ext(1, arr(str("langgraph.types"), str("Send"), arr(str("work"), obj(str("x"), "01")))),
			map[string]any{"node": "work", "arg": map[string]any{"x": n("1")}}},
	})
}

func TestDecodeJsonPlusUnknownClassesDegrade(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		{"pydantic v2 model", ext(5, arr(str("app.models"), str("User"), obj(str("name"), str("ann")), str("model_validate_json"))),
			map[string]any{"name": "ann"}},
		{"pydantic v1 model", ext(4, arr(str("app.models"), str("User"), obj(str("name"), str("bob")))),
			map[string]any{"name": "bob"}},
		{"dataclass", ext(2, arr(str("app"), str("Thing"), obj(str("a"), "01"))), map[string]any{"a": n("1")}},
		{"pos args", ext(1, arr(str("app"), str("Thing"), arr("01", "02"))), []any{n("1"), n("2")}},
		{"method", ext(3, arr(str("app"), str("Thing"), str("x"), str("parse"))), "x"},
		{"odd uuid", ext(0, arr(str("uuid"), str("UUID"), str("nothex"))), "nothex"},
		{"odd date", ext(1, arr(str("datetime"), str("date"), str("x"))), "x"},
	})
}

func TestDecodeNumpy(t *testing.T) {
	t.Parallel()
	np := func(dtype, shape, order, bin string) string {
		return ext(6, arr(str(dtype), shape, str(order), bin))
	}
	runDecodeCases(t, []decodeCase{
		// int32 little-endian 0..5, shape (2, 3), C order; bin8 of 24 bytes.
		{"int32 2x3 C", np("<i4", arr("02", "03"), "C",
			"c4 18 00000000 01000000 02000000 03000000 04000000 05000000"),
			[]any{[]any{n("0"), n("1"), n("2")}, []any{n("3"), n("4"), n("5")}}},
		// Same logical array in Fortran order: memory holds columns 0,3,1,4,2,5.
		{"int16 2x3 F", np("<i2", arr("02", "03"), "F", "c4 0c 0000 0300 0100 0400 0200 0500"),
			[]any{[]any{n("0"), n("1"), n("2")}, []any{n("3"), n("4"), n("5")}}},
		{"float64", np("<f8", arr("02"), "C", "c4 10 000000000000f83f 00000000000000c0"), []any{1.5, -2.0}},
		{"float32 big-endian", np(">f4", arr("01"), "C", "c4 04 3fc00000"), []any{1.5}},
		{"float16", np("<f2", arr("02"), "C", "c4 04 003e 00fc"), []any{1.5, nil}}, // 1.5 and -Inf
		{"bool", np("|b1", arr("02"), "C", "c4 02 01 00"), []any{true, false}},
		{"uint64 max", np("<u8", arr("01"), "C", "c4 08 ffffffffffffffff"), []any{n("18446744073709551615")}},
		{"int8 negative", np("|i1", arr("01"), "C", "c4 01 ff"), []any{n("-1")}},
		{"zero-d", np("<i8", arr(), "C", "c4 08 2a00000000000000"), n("42")},
		{"empty 2x0", np("<i8", arr("02", "00"), "C", "c4 00"), []any{[]any{}, []any{}}},
		{"complex kept raw", np("<c8", arr("01"), "C", "c4 08 0000803f00000000"), map[string]any{
			"dtype": "<c8", "shape": []any{n("1")}, "order": "C", "data": "AACAPwAAAAA=",
		}},
	})

	for name, v := range map[string]string{
		"size mismatch":    np("<i4", arr("02"), "C", "c4 04 00000000"),
		"bad order":        np("<i4", arr("01"), "X", "c4 04 00000000"),
		"negative dim":     np("<i4", arr("ff"), "C", "c4 00"),
		"huge empty shape": np("<i4", arr("ce ff ff ff ff", "00"), "C", "c4 00"),
		"buffer not bin":   np("<i4", arr("01"), "C", str("abcd")),
		"not 4 elements":   ext(6, arr(str("<i4"))),
	} {
		if got, err := Decode(TypeMsgpack, hx(t, v)); err == nil {
			t.Errorf("%s: Decode = %#v, want error", name, got)
		}
	}
}

func TestDecodeDeltaSnapshotIsItsValue(t *testing.T) {
	t.Parallel()
	got, err := Decode(TypeMsgpack, hx(t, ext(7, arr(humanMessageHex))))
	if err != nil {
		t.Fatal(err)
	}
	if msgs, ok := got.([]any); !ok || len(msgs) != 1 || msgs[0].(map[string]any)["type"] != "human" {
		t.Fatalf("got %#v", got)
	}
	if !reflect.DeepEqual(got, []any{mustDecode(t, humanMessageHex)}) {
		t.Fatalf("snapshot differs from its value: %#v", got)
	}
}

func mustDecode(t *testing.T, h string) any {
	t.Helper()
	v, err := Decode(TypeMsgpack, hx(t, h))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
