package serde

import (
	"encoding/json"
	"testing"
)

// FuzzDecode checks that Decode never panics and that whatever it returns is
// JSON-compatible (encoding/json can marshal it).
func FuzzDecode(f *testing.F) {
	seeds := []string{
		"c0", "cf ffffffffffffffff", "d3 8000000000000000", "cb 7ff8000000000000",
		"d9 03 616263", "c4 03 0102ff", "dc 0002 c3 c2", "df 00000001 a1 63 c0",
		"84 01 a1 61 c3 a1 62 ff a1 63 c0 a1 64", "d7 ff 0000000400000001",
		"c7 0c ff 00000000 ffffffffffffffff", humanMessageHex,
		ext(6, arr(str("<i4"), arr("02", "03"), str("C"),
			"c4 18 00000000 01000000 02000000 03000000 04000000 05000000")),
		ext(2, arr(str("datetime"), str("time"), obj(str("hour"), "0a", str("minute"), "1e",
			str("second"), "00", str("tzinfo"), ext(1, arr(str("datetime"), str("timezone"),
				arr(ext(1, arr(str("datetime"), str("timedelta"), arr("00", "cd 0e 10", "00"))))))))),
	}
	for _, s := range seeds {
		f.Add(TypeMsgpack, hx(f, s))
	}
	f.Add(TypeJSON, []byte(`{"a":[1,2.5,"x",null]}`))
	f.Add(TypeBytes, []byte{0, 1})
	f.Add(TypeEmpty, []byte(nil))
	f.Add("pickle", []byte("x"))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		v, err := Decode(typ, data)
		if err != nil {
			if v != nil {
				t.Fatalf("Decode returned both %#v and error %v", v, err)
			}
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("Decode result %#v is not JSON-compatible: %v", v, err)
		}
	})
}
