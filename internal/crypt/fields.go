package crypt

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SealFields seals the named top-level fields of a JSON object (each
// becomes an envelope); absent and null fields are left alone, and so is
// the whole document with encryption off.
func (kr *Keyring) SealFields(doc []byte, fields ...string) ([]byte, error) {
	if kr == nil {
		return doc, nil
	}
	return mapFields(doc, fields, func(v []byte) ([]byte, error) { return kr.SealJSON(v), nil })
}

// OpenFields decrypts the named top-level fields of a JSON object that
// were sealed (SealFields); plaintext fields pass through.
func (kr *Keyring) OpenFields(doc []byte, fields ...string) ([]byte, error) {
	return mapFields(doc, fields, kr.OpenJSON)
}

// ResealFields rewrites the named fields under the current key (plaintext
// fields get sealed); changed is false when nothing needs writing.
func (kr *Keyring) ResealFields(doc []byte, fields ...string) (out []byte, changed bool, err error) {
	out, err = mapFields(doc, fields, func(v []byte) ([]byte, error) {
		r, c, err := kr.ResealJSON(v)
		changed = changed || c
		return r, err
	})
	if !changed {
		return doc, false, err
	}
	return out, changed, err
}

func mapFields(doc []byte, fields []string, f func([]byte) ([]byte, error)) ([]byte, error) {
	if len(doc) == 0 || string(doc) == "null" {
		return doc, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("crypt: fields of a JSON object: %w", err)
	}
	touched := false
	for _, k := range fields {
		v, ok := m[k]
		if !ok || v == nil || string(v) == "null" {
			continue
		}
		out, err := f(v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		if !bytes.Equal(out, v) {
			m[k], touched = out, true
		}
	}
	if !touched {
		return doc, nil
	}
	return json.Marshal(m)
}
