package serde

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays, maps and ext payloads, so hostile
// input cannot exhaust the stack. ormsgpack uses the same limit.
const maxDepth = 1024

// decoder reads msgpack (https://github.com/msgpack/msgpack/blob/master/spec.md)
// into JSON-compatible values. depth counts the containers and ext payloads
// enclosing the value being read; base is the offset of data within the whole
// blob (non-zero for ext payloads), so errors report absolute offsets.
type decoder struct {
	data  []byte
	pos   int
	base  int
	depth int
}

// decodeMsgpack decodes exactly one msgpack value spanning all of data.
func decodeMsgpack(data []byte) (any, error) {
	d := &decoder{data: data}
	return d.whole()
}

// whole reads one value and requires that it ends exactly at the end of data.
func (d *decoder) whole() (any, error) {
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return v, nil
}

// end fails if bytes are left after the value read so far.
func (d *decoder) end() error {
	if rest := len(d.data) - d.pos; rest != 0 {
		return d.errorf("%d trailing bytes after value", rest)
	}
	return nil
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: msgpack at offset %d: %s", ErrMalformed, d.base+d.pos, fmt.Sprintf(format, args...))
}

// payloadErrorf reports an ext payload (d being its decoder) that does not
// have the shape its type code requires.
func (d *decoder) payloadErrorf(code int8, format string, args ...any) error {
	return fmt.Errorf("%w: msgpack ext %d payload at offset %d: %s", ErrMalformed, code, d.base, fmt.Sprintf(format, args...))
}

// take consumes n bytes, failing (never panicking) when fewer are left.
func (d *decoder) take(n uint64) ([]byte, error) {
	if rest := uint64(len(d.data) - d.pos); n > rest {
		return nil, d.errorf("truncated: need %d bytes, have %d", n, rest)
	}
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// bigEndian reads an n-byte big-endian unsigned integer (n is 1, 2, 4 or 8).
func (d *decoder) bigEndian(n uint64) (uint64, error) {
	b, err := d.take(n)
	if err != nil {
		return 0, err
	}
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u, nil
}

// value reads one msgpack value of any format family.
func (d *decoder) value() (any, error) {
	tb, err := d.take(1)
	if err != nil {
		return nil, err
	}
	b := tb[0]
	switch {
	case b <= 0x7f: // positive fixint 0xxxxxxx
		return intNumber(int64(b)), nil
	case b >= 0xe0: // negative fixint 111xxxxx
		return intNumber(int64(int8(b))), nil
	case b&0xf0 == 0x80: // fixmap 1000xxxx
		return d.mapN(uint64(b & 0x0f))
	case b&0xf0 == 0x90: // fixarray 1001xxxx
		return d.arrayN(uint64(b & 0x0f))
	case b&0xe0 == 0xa0: // fixstr 101xxxxx
		return d.str(uint64(b & 0x1f))
	}
	switch b {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6: // bin 8/16/32
		raw, err := d.binBody(b)
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString(raw), nil
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32
		n, err := d.bigEndian(1 << (b - 0xc7))
		if err != nil {
			return nil, err
		}
		return d.extBody(n)
	case 0xca: // float 32
		u, err := d.bigEndian(4)
		if err != nil {
			return nil, err
		}
		return floatValue(float64(math.Float32frombits(uint32(u)))), nil
	case 0xcb: // float 64
		u, err := d.bigEndian(8)
		if err != nil {
			return nil, err
		}
		return floatValue(math.Float64frombits(u)), nil
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8/16/32/64
		u, err := d.bigEndian(1 << (b - 0xcc))
		if err != nil {
			return nil, err
		}
		return json.Number(strconv.FormatUint(u, 10)), nil
	case 0xd0, 0xd1, 0xd2, 0xd3: // int 8/16/32/64, two's complement
		n := uint64(1) << (b - 0xd0)
		u, err := d.bigEndian(n)
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*n
		return intNumber(int64(u<<shift) >> shift), nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16
		return d.extBody(1 << (b - 0xd4))
	case 0xd9, 0xda, 0xdb: // str 8/16/32
		n, err := d.bigEndian(1 << (b - 0xd9))
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case 0xdc, 0xdd: // array 16/32
		n, err := d.bigEndian(2 << (b - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.arrayN(n)
	case 0xde, 0xdf: // map 16/32
		n, err := d.bigEndian(2 << (b - 0xde))
		if err != nil {
			return nil, err
		}
		return d.mapN(n)
	}
	d.pos--
	return nil, d.errorf("invalid format byte 0x%02x", b) // 0xc1 is "never used"
}

// binBody reads the length and bytes of a bin 8/16/32 whose format byte b has
// been consumed. The result aliases d.data.
func (d *decoder) binBody(b byte) ([]byte, error) {
	n, err := d.bigEndian(1 << (b - 0xc4))
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

// bin reads a bin value and returns its bytes (aliasing d.data).
func (d *decoder) bin() ([]byte, error) {
	tb, err := d.take(1)
	if err != nil {
		return nil, err
	}
	if b := tb[0]; b >= 0xc4 && b <= 0xc6 {
		return d.binBody(b)
	}
	d.pos--
	return nil, d.errorf("expected bin, found format byte 0x%02x", tb[0])
}

func (d *decoder) str(n uint64) (any, error) {
	b, err := d.take(n)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		d.pos -= len(b)
		return nil, d.errorf("str is not valid UTF-8")
	}
	return string(b), nil
}

func (d *decoder) enter() error {
	if d.depth >= maxDepth {
		return d.errorf("nesting deeper than %d", maxDepth)
	}
	d.depth++
	return nil
}

func (d *decoder) arrayN(n uint64) (any, error) {
	// Every element takes at least one byte: refuse counts the data cannot
	// hold before allocating for them.
	if rest := uint64(len(d.data) - d.pos); n > rest {
		return nil, d.errorf("truncated: array of %d elements in %d bytes", n, rest)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	a := make([]any, n)
	for i := range a {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

func (d *decoder) mapN(n uint64) (any, error) {
	// Every entry takes at least two bytes (key and value).
	if rest := uint64(len(d.data) - d.pos); n > rest/2 {
		return nil, d.errorf("truncated: map of %d entries in %d bytes", n, rest)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	m := make(map[string]any, n)
	for range n {
		k, err := d.value()
		if err != nil {
			return nil, err
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		key, ok := keyString(k)
		if !ok {
			return nil, d.errorf("map key %s is not a scalar or a tuple of scalars", kindOf(k))
		}
		m[key] = v
	}
	return m, nil
}

// extBody reads the type byte and n data bytes of an ext value and converts it.
func (d *decoder) extBody(n uint64) (any, error) {
	tb, err := d.take(1)
	if err != nil {
		return nil, err
	}
	code := int8(tb[0])
	start := d.pos
	payload, err := d.take(n)
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	// Errors are not wrapped per ext level: with up to maxDepth nested
	// payloads that would make error text quadratic in the input.
	return d.ext(code, &decoder{data: payload, base: d.base + start, depth: d.depth})
}

// timestamp decodes the msgpack timestamp extension (type -1) in its three
// layouts into an RFC 3339 UTC string with nanoseconds.
func timestamp(s *decoder) (any, error) {
	p := s.data
	var sec int64
	var nsec uint32
	switch len(p) {
	case 4: // timestamp 32: uint32 seconds
		sec = int64(binary.BigEndian.Uint32(p))
	case 8: // timestamp 64: 30-bit nanoseconds, 34-bit seconds
		u := binary.BigEndian.Uint64(p)
		nsec = uint32(u >> 34)
		sec = int64(u & (1<<34 - 1))
	case 12: // timestamp 96: uint32 nanoseconds, int64 seconds
		nsec = binary.BigEndian.Uint32(p)
		sec = int64(binary.BigEndian.Uint64(p[4:]))
	default:
		return nil, s.payloadErrorf(ExtTimestamp, "timestamp of %d bytes", len(p))
	}
	if nsec > 999_999_999 {
		return nil, s.payloadErrorf(ExtTimestamp, "timestamp nanoseconds %d out of range", nsec)
	}
	return timeUTC(sec, nsec), nil
}

// intNumber renders a signed integer as a json.Number.
func intNumber(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// floatValue keeps finite floats and maps NaN and ±Inf, which JSON cannot
// represent, to nil.
func floatValue(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// keyString converts a decoded map key to the string a JSON object needs.
// Only keys Python can hash and ormsgpack can write are accepted: scalars and
// tuples (arrays) of scalars. Refusing nested containers also keeps key text
// linear in the input (JSON text of keys nested in keys would grow
// exponentially through repeated escaping).
func keyString(k any) (string, bool) {
	switch k := k.(type) {
	case string:
		return k, true
	case json.Number:
		return string(k), true
	case float64:
		return pyFloatRepr(k), true
	case bool:
		return strconv.FormatBool(k), true
	case nil:
		return "null", true
	case []any:
		for _, e := range k {
			switch e.(type) {
			case nil, bool, string, json.Number, float64:
			default:
				return "", false
			}
		}
		b, err := json.Marshal(k)
		return string(b), err == nil
	}
	return "", false
}

// kindOf names the JSON kind of a decoded value for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

// pyFloatRepr formats a finite float the way Python's repr does for common
// values: shortest round-trip digits, with ".0" on integral values.
func pyFloatRepr(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}
