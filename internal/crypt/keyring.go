package crypt

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// CipherSuffix is appended to a serializer type by Seal, as LangGraph's
// EncryptedSerializer does ("json" → "json+aes").
const CipherSuffix = "+aes"

// EnvelopeKey is the single key of the JSON object that stands for an
// encrypted value in a jsonb column: {"__weft_aes__": "<base64>"}.
const EnvelopeKey = "__weft_aes__"

// ErrNoKey is returned when encrypted data is read without a keyring, or
// when no key of the keyring authenticates it (the wrong key, or tampered
// data).
var ErrNoKey = errors.New("crypt: encrypted value, and no configured key opens it (LANGGRAPH_AES_KEY / WEFT_AES_OLD_KEYS)")

// key is one AES key with its EAX instance.
type key struct {
	aead *eax
}

// Keyring is the current key, which seals, and older keys that are tried
// when opening, in order, during a rotation. A nil *Keyring means
// encryption is off: Seal and SealJSON return their input, and Open fails
// on encrypted data with ErrNoKey. A Keyring is safe for concurrent use.
type Keyring struct {
	keys    []key  // keys[0] seals
	hashKey []byte // HMAC key of Hash, derived from the current key
}

// NewKeyring builds a keyring from raw AES keys (16, 24 or 32 bytes each):
// current seals, old are only opened with.
func NewKeyring(current []byte, old ...[]byte) (*Keyring, error) {
	kr := &Keyring{}
	for i, k := range append([][]byte{current}, old...) {
		if n := len(k); n != 16 && n != 24 && n != 32 {
			what := "the current key"
			if i > 0 {
				what = fmt.Sprintf("old key %d", i)
			}
			return nil, fmt.Errorf("%s is %d bytes: an AES key must be 16, 24 or 32 bytes", what, n)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		e, err := newEAX(block)
		if err != nil {
			return nil, err
		}
		kr.keys = append(kr.keys, key{aead: e})
	}
	m := hmac.New(sha256.New, current)
	m.Write([]byte("weft/crypt element hash v1"))
	kr.hashKey = m.Sum(nil)
	return kr, nil
}

// ParseKeyring reads keys the way LangGraph's from_pycryptodome_aes reads
// LANGGRAPH_AES_KEY: the variable's text, as bytes, is the key (16, 24 or
// 32 characters of ASCII). old is a comma-separated list of such keys
// (WEFT_AES_OLD_KEYS; a key with a comma cannot be listed). current ""
// means encryption is off: the result is nil, and old must be empty too.
func ParseKeyring(current, old string) (*Keyring, error) {
	if current == "" {
		if strings.TrimSpace(old) != "" {
			return nil, errors.New("WEFT_AES_OLD_KEYS is set but LANGGRAPH_AES_KEY is not: old keys are only read alongside a current key")
		}
		return nil, nil
	}
	var olds [][]byte
	for o := range strings.SplitSeq(old, ",") {
		if o = strings.TrimSpace(o); o != "" {
			olds = append(olds, []byte(o))
		}
	}
	kr, err := NewKeyring([]byte(current), olds...)
	if err != nil {
		return nil, fmt.Errorf("LANGGRAPH_AES_KEY / WEFT_AES_OLD_KEYS: %w", err)
	}
	return kr, nil
}

// Keys is how many keys the keyring holds (the current one first).
func (kr *Keyring) Keys() int {
	if kr == nil {
		return 0
	}
	return len(kr.keys)
}

// sealBlob returns nonce‖tag‖ciphertext under the current key: LangGraph's
// blob layout (pycryptodome's EAX with its 16-byte nonce and tag, no
// header).
func (kr *Keyring) sealBlob(plaintext []byte) []byte {
	out := make([]byte, 2*blockSize, 2*blockSize+len(plaintext)+blockSize)
	nonce := out[:blockSize]
	if _, err := rand.Read(nonce); err != nil {
		panic("crypt: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	sealed := kr.keys[0].aead.Seal(nil, nonce, plaintext, nil) // ciphertext‖tag
	ct, tag := sealed[:len(plaintext)], sealed[len(plaintext):]
	copy(out[blockSize:], tag)
	return append(out, ct...)
}

// openBlob opens nonce‖tag‖ciphertext with the first key that
// authenticates it, and tells which key that was (0 = current).
func (kr *Keyring) openBlob(blob []byte) ([]byte, int, error) {
	if kr == nil {
		return nil, -1, ErrNoKey
	}
	if len(blob) < 2*blockSize {
		return nil, -1, errors.New("crypt: encrypted value shorter than its nonce and tag")
	}
	nonce, tag, ct := blob[:blockSize], blob[blockSize:2*blockSize], blob[2*blockSize:]
	sealed := make([]byte, 0, len(ct)+blockSize)
	sealed = append(append(sealed, ct...), tag...)
	for i, k := range kr.keys {
		if pt, err := k.aead.Open(nil, nonce, sealed, nil); err == nil {
			return pt, i, nil
		}
	}
	return nil, -1, ErrNoKey
}

// Encrypted reports whether a serializer type names encrypted data (it has
// a "+cipher" suffix).
func Encrypted(typ string) bool { return strings.Contains(typ, "+") }

// Seal encrypts a serialized value as LangGraph's EncryptedSerializer
// does: the type gets "+aes" and the blob is nonce‖tag‖ciphertext. With
// encryption off (nil keyring) it returns typ and data unchanged. A nil
// data (an "empty" value) stays nil and its type unchanged: there is
// nothing to hide.
func (kr *Keyring) Seal(typ string, data []byte) (string, []byte) {
	if kr == nil || data == nil || Encrypted(typ) {
		return typ, data
	}
	return typ + CipherSuffix, kr.sealBlob(data)
}

// Open decrypts what Seal (or LangGraph's EncryptedSerializer) wrote: a
// type without "+" is returned as it is (a row written with encryption
// off); "T+aes" gives back T and the plaintext, trying each key. Another
// cipher name is an error.
func (kr *Keyring) Open(typ string, data []byte) (string, []byte, error) {
	base, cipherName, ok := strings.Cut(typ, "+")
	if !ok {
		return typ, data, nil
	}
	if cipherName != "aes" {
		return "", nil, fmt.Errorf("crypt: unsupported cipher %q in type %q", cipherName, typ)
	}
	pt, _, err := kr.openBlob(data)
	if err != nil {
		return "", nil, err
	}
	return base, pt, nil
}

// Reseal re-encrypts a stored value under the current key: a plaintext
// value (written while encryption was off) is sealed, a value under an old
// key is opened and sealed again. changed is false when nothing needs
// writing (already under the current key, or nil data: an "empty" value).
func (kr *Keyring) Reseal(typ string, data []byte) (string, []byte, bool, error) {
	if kr == nil {
		return "", nil, false, ErrNoKey
	}
	if data == nil {
		return typ, data, false, nil
	}
	base, cipherName, ok := strings.Cut(typ, "+")
	if !ok {
		t, d := kr.Seal(typ, data)
		return t, d, true, nil
	}
	if cipherName != "aes" {
		return "", nil, false, fmt.Errorf("crypt: unsupported cipher %q in type %q", cipherName, typ)
	}
	pt, which, err := kr.openBlob(data)
	if err != nil {
		return "", nil, false, err
	}
	if which == 0 {
		return typ, data, false, nil
	}
	return base + CipherSuffix, kr.sealBlob(pt), true, nil
}

// Hash is HMAC-SHA256 of data under a key derived from the current key:
// a content hash for deduplication that, unlike a plain hash, tells
// nothing about the plaintext to someone reading the database (no
// dictionary check of a known message). With encryption off (nil keyring)
// it is plain SHA-256. A rotation changes every hash: a store that keeps
// them re-hashes in the re-encryption.
func (kr *Keyring) Hash(data []byte) []byte {
	if kr == nil {
		s := sha256.Sum256(data)
		return s[:]
	}
	m := hmac.New(sha256.New, kr.hashKey)
	m.Write(data)
	return m.Sum(nil)
}

// envelope is the jsonb form of an encrypted JSON value.
type envelope struct {
	Data string `json:"__weft_aes__"`
}

var envelopePrefix = []byte(`{"` + EnvelopeKey + `"`)

// SealJSON encrypts a JSON document for a jsonb column: the result is the
// JSON object {"__weft_aes__": base64(nonce‖tag‖ciphertext)}. With
// encryption off, or for a nil or JSON null document (nothing to hide, and
// SQL that tests for null keeps working), it returns doc unchanged.
func (kr *Keyring) SealJSON(doc []byte) []byte {
	if kr == nil || doc == nil || bytes.Equal(bytes.TrimSpace(doc), []byte("null")) || IsEnvelope(doc) {
		return doc
	}
	out, _ := json.Marshal(envelope{Data: base64.StdEncoding.EncodeToString(kr.sealBlob(doc))})
	return out
}

// IsEnvelope reports whether a stored JSON document is an encrypted
// envelope (as written by SealJSON, or as jsonb prints it back).
func IsEnvelope(doc []byte) bool {
	doc = bytes.TrimSpace(doc)
	if !bytes.HasPrefix(doc, envelopePrefix) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil || len(m) != 1 {
		return false
	}
	var s string
	return json.Unmarshal(m[EnvelopeKey], &s) == nil
}

// OpenJSON returns the plaintext of a stored JSON document: an envelope is
// decrypted (with any key of the ring); anything else is returned as it is
// (a row written while encryption was off).
func (kr *Keyring) OpenJSON(doc []byte) ([]byte, error) {
	pt, _, err := kr.openJSON(doc)
	return pt, err
}

func (kr *Keyring) openJSON(doc []byte) ([]byte, int, error) {
	if !IsEnvelope(doc) {
		return doc, 0, nil
	}
	var e envelope
	if err := json.Unmarshal(doc, &e); err != nil {
		return nil, -1, err
	}
	blob, err := base64.StdEncoding.DecodeString(e.Data)
	if err != nil {
		return nil, -1, fmt.Errorf("crypt: encrypted JSON value: %w", err)
	}
	return kr.openBlob(blob)
}

// ResealJSON re-encrypts a stored JSON document under the current key:
// plaintext documents are sealed (encryption was turned on after they
// were written), envelopes under an old key are opened and sealed again.
// changed is false when nothing needs writing.
func (kr *Keyring) ResealJSON(doc []byte) ([]byte, bool, error) {
	if kr == nil {
		return nil, false, ErrNoKey
	}
	if doc == nil {
		return doc, false, nil
	}
	pt, which, err := kr.openJSON(doc)
	if err != nil {
		return nil, false, err
	}
	if IsEnvelope(doc) && which == 0 {
		return doc, false, nil
	}
	out := kr.SealJSON(pt)
	return out, !bytes.Equal(out, doc), nil
}

type ctxKey struct{}

// WithKeyring returns ctx carrying kr. The server puts its keyring on the
// context of every request and background loop, so that the stores that
// write encrypted columns find it without a new parameter on every
// function; a context without one means encryption is off.
func WithKeyring(ctx context.Context, kr *Keyring) context.Context {
	if kr == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, kr)
}

// FromContext is the keyring ctx carries (nil: encryption off).
func FromContext(ctx context.Context) *Keyring {
	kr, _ := ctx.Value(ctxKey{}).(*Keyring)
	return kr
}
