package crypt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

const (
	keyA = "0123456789abcdef"
	keyB = "fedcba9876543210fedcba9876543210"
)

func ring(t *testing.T, current string, old ...string) *Keyring {
	t.Helper()
	var olds [][]byte
	for _, o := range old {
		olds = append(olds, []byte(o))
	}
	kr, err := NewKeyring([]byte(current), olds...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestOpenLangGraphBlobs reads blobs in LangGraph's encrypted-serializer
// format made by an independent EAX (testdata/langgraph_blobs.py, built on
// the Python cryptography package's CMAC and CTR).
func TestOpenLangGraphBlobs(t *testing.T) {
	f, err := os.Open("testdata/langgraph_blobs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		k, typ, msgHex, blob := fields[0], fields[1], fields[2], unhex(t, fields[3])
		want := []byte{}
		if msgHex != "-" {
			want = unhex(t, msgHex)
		}
		kr := ring(t, k)
		base, pt, err := kr.Open(typ, blob)
		if err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if base != strings.TrimSuffix(typ, CipherSuffix) || !bytes.Equal(pt, want) {
			t.Errorf("line %d: open = %q %x, want %q %x", n+1, base, pt, strings.TrimSuffix(typ, CipherSuffix), want)
		}
		// Our own seal of the same plaintext opens with the same key, and
		// has LangGraph's layout: 16-byte nonce, 16-byte tag, ciphertext.
		st, sb := kr.Seal(base, want)
		if st != typ || len(sb) != 32+len(want) {
			t.Errorf("line %d: seal = %q, %d bytes", n+1, st, len(sb))
		}
		if _, back, err := kr.Open(st, sb); err != nil || !bytes.Equal(back, want) {
			t.Errorf("line %d: round trip: %v", n+1, err)
		}
		// Another key does not open it.
		if _, _, err := ring(t, keyB).Open(typ, blob); !errors.Is(err, ErrNoKey) {
			t.Errorf("line %d: wrong key: %v", n+1, err)
		}
	}
	if n != 3 {
		t.Fatalf("read %d fixture lines, want 3", n)
	}
}

func TestSealOpen(t *testing.T) {
	kr := ring(t, keyA)
	typ, blob := kr.Seal("json", []byte(`{"secret":"marker"}`))
	if typ != "json+aes" || bytes.Contains(blob, []byte("marker")) {
		t.Fatalf("seal = %q %q", typ, blob)
	}
	_, blob2 := kr.Seal("json", []byte(`{"secret":"marker"}`))
	if bytes.Equal(blob, blob2) {
		t.Fatal("two seals of one value are equal: nonce reused")
	}
	// Plain types pass through Open; nil data and "empty" through Seal.
	if typ, data, err := kr.Open("json", []byte("1")); typ != "json" || string(data) != "1" || err != nil {
		t.Fatalf("open plain = %q %q %v", typ, data, err)
	}
	if typ, data := kr.Seal("empty", nil); typ != "empty" || data != nil {
		t.Fatalf("seal empty = %q %q", typ, data)
	}
	var off *Keyring
	if typ, data := off.Seal("json", []byte("1")); typ != "json" || string(data) != "1" {
		t.Fatalf("nil keyring seal = %q %q", typ, data)
	}
	if _, _, err := off.Open(typ, blob); !errors.Is(err, ErrNoKey) {
		t.Fatalf("nil keyring open: %v", err)
	}
	if _, _, err := kr.Open("json+rot13", blob); err == nil {
		t.Fatal("unknown cipher opened")
	}
	if _, _, err := kr.Open("json+aes", blob[:20]); err == nil {
		t.Fatal("short blob opened")
	}
}

func TestRotation(t *testing.T) {
	oldRing := ring(t, keyA)
	typ, blob := oldRing.Seal("json", []byte(`"v"`))
	doc := oldRing.SealJSON([]byte(`{"a":1}`))

	rotated := ring(t, keyB, keyA)
	if _, pt, err := rotated.Open(typ, blob); err != nil || string(pt) != `"v"` {
		t.Fatalf("old blob after rotation: %q %v", pt, err)
	}
	if pt, err := rotated.OpenJSON(doc); err != nil || string(pt) != `{"a":1}` {
		t.Fatalf("old JSON after rotation: %q %v", pt, err)
	}
	nt, nb, changed, err := rotated.Reseal(typ, blob)
	if err != nil || !changed || nt != "json+aes" {
		t.Fatalf("reseal: %q %v %v", nt, changed, err)
	}
	newOnly := ring(t, keyB)
	if _, pt, err := newOnly.Open(nt, nb); err != nil || string(pt) != `"v"` {
		t.Fatalf("resealed blob under the new key alone: %q %v", pt, err)
	}
	if _, _, changed, _ := rotated.Reseal(nt, nb); changed {
		t.Fatal("reseal of a current-key blob changed it")
	}
	nd, changed, err := rotated.ResealJSON(doc)
	if err != nil || !changed {
		t.Fatalf("reseal JSON: %v %v", changed, err)
	}
	if pt, err := newOnly.OpenJSON(nd); err != nil || string(pt) != `{"a":1}` {
		t.Fatalf("resealed JSON: %q %v", pt, err)
	}
	if _, changed, _ := rotated.ResealJSON(nd); changed {
		t.Fatal("reseal of a current-key document changed it")
	}
	// Plaintext written before encryption was turned on gets sealed.
	pd, changed, err := newOnly.ResealJSON([]byte(`{"plain":true}`))
	if err != nil || !changed || !IsEnvelope(pd) {
		t.Fatalf("reseal plaintext JSON = %s %v %v", pd, changed, err)
	}
	pt2, pb2, changed, err := newOnly.Reseal("msgpack", []byte{0x80})
	if err != nil || !changed || pt2 != "msgpack+aes" {
		t.Fatalf("reseal plaintext blob = %q %x %v %v", pt2, pb2, changed, err)
	}
	if _, _, err := newOnly.Open(typ, blob); !errors.Is(err, ErrNoKey) {
		t.Fatalf("old blob without the old key: %v", err)
	}
}

func TestJSONEnvelope(t *testing.T) {
	kr := ring(t, keyA)
	doc := kr.SealJSON([]byte(`{"messages":["marker"]}`))
	if !IsEnvelope(doc) || bytes.Contains(doc, []byte("marker")) {
		t.Fatalf("sealed = %s", doc)
	}
	// jsonb prints the object back with a space after the colon.
	var m map[string]string
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	spaced := []byte(`{"` + EnvelopeKey + `": "` + m[EnvelopeKey] + `"}`)
	if pt, err := kr.OpenJSON(spaced); err != nil || string(pt) != `{"messages":["marker"]}` {
		t.Fatalf("open = %q %v", pt, err)
	}
	for _, plain := range []string{`null`, `{"a":1}`, `{"__weft_aes__": 1}`, `{"__weft_aes__": "x", "b": 2}`, `[]`} {
		if IsEnvelope([]byte(plain)) {
			t.Errorf("%s taken for an envelope", plain)
		}
		if pt, err := kr.OpenJSON([]byte(plain)); err != nil || string(pt) != plain {
			t.Errorf("open %s = %s %v", plain, pt, err)
		}
	}
	if got := kr.SealJSON([]byte("null")); string(got) != "null" {
		t.Errorf("null sealed to %s", got)
	}
	if got := kr.SealJSON(nil); got != nil {
		t.Errorf("nil sealed to %s", got)
	}
}

func TestHash(t *testing.T) {
	a, b := ring(t, keyA), ring(t, keyB)
	data := []byte("element")
	if !bytes.Equal(a.Hash(data), a.Hash(data)) {
		t.Fatal("hash not deterministic")
	}
	if bytes.Equal(a.Hash(data), b.Hash(data)) {
		t.Fatal("hash does not depend on the key")
	}
	var off *Keyring
	if hex.EncodeToString(off.Hash(nil)) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal("off: not SHA-256")
	}
	if bytes.Equal(a.Hash(data), off.Hash(data)) {
		t.Fatal("keyed hash equals the plain hash")
	}
}

func TestParseKeyring(t *testing.T) {
	if kr, err := ParseKeyring("", ""); kr != nil || err != nil {
		t.Fatalf("off = %v %v", kr, err)
	}
	if _, err := ParseKeyring("", keyA); err == nil {
		t.Fatal("old keys without a current key accepted")
	}
	if _, err := ParseKeyring("short", ""); err == nil || !strings.Contains(err.Error(), "16, 24 or 32") {
		t.Fatalf("short key: %v", err)
	}
	if _, err := ParseKeyring(keyA, keyB+",tooshort"); err == nil || !strings.Contains(err.Error(), "old key 2") {
		t.Fatalf("bad old key: %v", err)
	}
	kr, err := ParseKeyring(keyA, " "+keyB+" , ")
	if err != nil || kr.Keys() != 2 {
		t.Fatalf("ring = %v %v", kr, err)
	}
	ctx := WithKeyring(context.Background(), kr)
	if FromContext(ctx) != kr || FromContext(context.Background()) != nil {
		t.Fatal("context round trip")
	}
}
