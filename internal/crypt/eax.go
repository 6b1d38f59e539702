package crypt

import (
	"crypto/cipher"
	"crypto/subtle"
	"errors"
)

// blockSize is the AES block size, which is also EAX's nonce and tag size
// here (pycryptodome's defaults, and what LangGraph's blobs carry).
const blockSize = 16

// errOpen is returned when a ciphertext does not authenticate under a key.
var errOpen = errors.New("crypt: message authentication failed")

// eax is the EAX mode of operation (Bellare, Rogaway and Wagner, 2004) over
// a 128-bit block cipher: CTR encryption keyed by an OMAC (CMAC) of the
// nonce, and a tag that is the XOR of the OMACs of nonce, header and
// ciphertext. It implements cipher.AEAD with 16-byte nonces and tags; Seal
// appends ciphertext then tag, as crypto/cipher's AEADs do (LangGraph's
// blob order, nonce‖tag‖ciphertext, is assembled by the Keyring).
type eax struct {
	block  cipher.Block
	k1, k2 [blockSize]byte // CMAC subkeys
}

// newEAX returns EAX over b, which must have a 16-byte block.
func newEAX(b cipher.Block) (*eax, error) {
	if b.BlockSize() != blockSize {
		return nil, errors.New("crypt: EAX needs a 128-bit block cipher")
	}
	e := &eax{block: b}
	var l [blockSize]byte
	b.Encrypt(l[:], l[:])
	e.k1 = double(l)
	e.k2 = double(e.k1)
	return e, nil
}

// double multiplies x by the generator in GF(2^128) (CMAC's subkey step).
func double(x [blockSize]byte) [blockSize]byte {
	var out [blockSize]byte
	carry := x[0] >> 7
	for i := 0; i < blockSize-1; i++ {
		out[i] = x[i]<<1 | x[i+1]>>7
	}
	out[blockSize-1] = x[blockSize-1] << 1
	out[blockSize-1] ^= 0x87 * carry // constant time: carry is 0 or 1
	return out
}

// omac is OMAC^t_K(m) = CMAC_K([t]_16 ‖ m): the message is never empty,
// since the tweak block always precedes it.
func (e *eax) omac(t byte, m []byte) [blockSize]byte {
	var x [blockSize]byte
	x[blockSize-1] = t // [t]_16 is the first block; CBC from a zero IV
	// Process the tweak block unless it is the last one (m empty).
	if len(m) == 0 {
		for i := range x {
			x[i] ^= e.k1[i]
		}
		e.block.Encrypt(x[:], x[:])
		return x
	}
	e.block.Encrypt(x[:], x[:])
	for len(m) > blockSize {
		subtle.XORBytes(x[:], x[:], m[:blockSize])
		e.block.Encrypt(x[:], x[:])
		m = m[blockSize:]
	}
	// Last block: complete → XOR K1; partial → pad 10* and XOR K2.
	var last [blockSize]byte
	copy(last[:], m)
	k := &e.k1
	if len(m) < blockSize {
		last[len(m)] = 0x80
		k = &e.k2
	}
	for i := range x {
		x[i] ^= last[i] ^ k[i]
	}
	e.block.Encrypt(x[:], x[:])
	return x
}

func (e *eax) NonceSize() int { return blockSize }
func (e *eax) Overhead() int  { return blockSize }

// Seal encrypts and authenticates plaintext with header ad, appending
// ciphertext‖tag to dst.
func (e *eax) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != blockSize {
		panic("crypt: EAX nonce must be 16 bytes")
	}
	n := e.omac(0, nonce)
	h := e.omac(1, ad)
	ret, out := sliceForAppend(dst, len(plaintext)+blockSize)
	ct := out[:len(plaintext)]
	cipher.NewCTR(e.block, n[:]).XORKeyStream(ct, plaintext)
	c := e.omac(2, ct)
	for i := range blockSize {
		out[len(plaintext)+i] = n[i] ^ h[i] ^ c[i]
	}
	return ret
}

// Open authenticates ciphertext‖tag with header ad and, when the tag
// matches, appends the plaintext to dst.
func (e *eax) Open(dst, nonce, sealed, ad []byte) ([]byte, error) {
	if len(nonce) != blockSize || len(sealed) < blockSize {
		return nil, errOpen
	}
	ct, tag := sealed[:len(sealed)-blockSize], sealed[len(sealed)-blockSize:]
	n := e.omac(0, nonce)
	h := e.omac(1, ad)
	c := e.omac(2, ct)
	var want [blockSize]byte
	for i := range want {
		want[i] = n[i] ^ h[i] ^ c[i]
	}
	if subtle.ConstantTimeCompare(want[:], tag) != 1 {
		return nil, errOpen
	}
	ret, out := sliceForAppend(dst, len(ct))
	cipher.NewCTR(e.block, n[:]).XORKeyStream(out, ct)
	return ret, nil
}

// sliceForAppend extends in by n bytes, returning the whole slice and the
// new tail.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	total := len(in) + n
	if cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}
