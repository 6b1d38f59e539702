package serde_test

import (
	"errors"
	"fmt"

	"github.com/weftdev/weft/internal/checkpoints/serde"
)

func ExampleDecode() {
	// A checkpoint_blobs row written by Python: msgpack of the list [1, "a"].
	v, err := serde.Decode(serde.TypeMsgpack, []byte{0x92, 0x01, 0xa1, 'a'})
	fmt.Printf("%v %v\n", v, err)

	// A row written by the JS saver.
	v, err = serde.Decode(serde.TypeJSON, []byte(`{"foo":"a","n":3}`))
	fmt.Printf("%v %v\n", v, err)

	// An "empty" row: the channel has no value at this version.
	_, err = serde.Decode(serde.TypeEmpty, nil)
	fmt.Println(errors.Is(err, serde.ErrEmpty))

	// Output:
	// [1 a] <nil>
	// map[foo:a n:3] <nil>
	// true
}

func ExampleEncode() {
	typ, data, _ := serde.Encode(map[string]any{"bar": []any{"a", "b"}})
	fmt.Println(typ, string(data))
	typ, data, _ = serde.Encode([]byte{1, 2, 255})
	fmt.Printf("%s %x\n", typ, data)
	// Output:
	// json {"bar":["a","b"]}
	// bytes 0102ff
}
