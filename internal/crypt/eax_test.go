package crypt

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"testing"
)

// eaxVectors are the AES-128 test vectors published with the EAX mode
// (Bellare, Rogaway, Wagner: "A Conventional Authenticated-Encryption Mode",
// appendix): the ciphertext column is ciphertext‖tag.
var eaxVectors = []struct{ msg, key, nonce, header, cipher string }{
	{"", "233952DEE4D5ED5F9B9C6D6FF80FF478", "62EC67F9C3A4A407FCB2A8C49031A8B3", "6BFB914FD07EAE6B",
		"E037830E8389F27B025A2D6527E79D01"},
	{"F7FB", "91945D3F4DCBEE0BF45EF52255F095A4", "BECAF043B0A23D843194BA972C66DEBD", "FA3BFD4806EB53FA",
		"19DD5C4C9331049D0BDAB0277408F67967E5"},
	{"1A47CB4933", "01F74AD64077F2E704C0F60ADA3DD523", "70C3DB4F0D26368400A10ED05D2BFF5E", "234A3463C1264AC6",
		"D851D5BAE03A59F238A23E39199DC9266626C40F80"},
	{"481C9E39B1", "D07CF6CBB7F313BDDE66B727AFD3C5E8", "8408DFFF3C1A2B1292DC199E46B7D617", "33CCE2EABFF5A79D",
		"632A9D131AD4C168A4225D8E1FF755939974A7BEDE"},
	{"40D0C07DA5E4", "35B6D0580005BBC12B0587124557D2C2", "FDB6B06676EEDC5C61D74276E1F8E816", "AEB96EAEBE2970E9",
		"071DFE16C675CB0677E536F73AFE6A14B74EE49844DD"},
	{"4DE3B35C3FC039245BD1FB7D", "BD8E6E11475E60B268784C38C62FEB22", "6EAC5C93072D8E8513F750935E46DA1B", "D4482D1CA78DCE0F",
		"835BB4F15D743E350E728414ABB8644FD6CCB86947C5E10590210A4F"},
	{"8B0A79306C9CE7ED99DAE4F87F8DD61636", "7C77D6E813BED5AC98BAA417477A2E7D", "1A8C98DCD73D38393B2BF1569DEEFC19", "65D2017990D62528",
		"02083E3979DA014812F59F11D52630DA30137327D10649B0AA6E1C181DB617D7F2"},
	{"1BDA122BCE8A8DBAF1877D962B8592DD2D56", "5FFF20CAFAB119CA2FC73549E20F5B0D", "DDE59B97D722156D4D9AFF2BC7559826", "54B9F04E6A09189A",
		"2EC47B2C4954A489AFC7BA4897EDCDAE8CC33B60450599BD02C96382902AEF7F832A"},
	{"6CF36720872B8513F6EAB1A8A44438D5EF11", "A4A4782BCFFD3EC5E7EF6D8C34A56123", "B781FCF2F75FA5A8DE97A9CA48E522EC", "899A175897561D7E",
		"0DE18FD0FDD91E7AF19F1D8EE8733938B1E8E7F6D2231618102FDB7FE55FF1991700"},
	{"CA40D7446E545FFAED3BD12A740A659FFBBB3CEAB7", "8395FCF1E95BEBD697BD010BC766AAC3", "22E7ADD93CFC6393C57EC0B3C17D6B44", "126735FCC320D25A",
		"CB8920F87A6C75CFF39627B56E3ED197C552D295A7CFC46AFC253B4652B1AF3795B124AB6E"},
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEAXVectors(t *testing.T) {
	for i, v := range eaxVectors {
		block, err := aes.NewCipher(unhex(t, v.key))
		if err != nil {
			t.Fatal(err)
		}
		e, err := newEAX(block)
		if err != nil {
			t.Fatal(err)
		}
		msg, nonce, header, want := unhex(t, v.msg), unhex(t, v.nonce), unhex(t, v.header), unhex(t, v.cipher)
		got := e.Seal(nil, nonce, msg, header)
		if !bytes.Equal(got, want) {
			t.Errorf("vector %d: seal = %X, want %X", i+1, got, want)
		}
		pt, err := e.Open(nil, nonce, want, header)
		if err != nil || !bytes.Equal(pt, msg) {
			t.Errorf("vector %d: open = %X, %v; want %X", i+1, pt, err, msg)
		}
		// Any flipped bit (ciphertext, tag, nonce or header) is refused.
		for j := range want {
			bad := bytes.Clone(want)
			bad[j] ^= 0x01
			if _, err := e.Open(nil, nonce, bad, header); err == nil {
				t.Errorf("vector %d: byte %d flipped still opens", i+1, j)
			}
		}
		badNonce := bytes.Clone(nonce)
		badNonce[0] ^= 0x80
		if _, err := e.Open(nil, badNonce, want, header); err == nil {
			t.Errorf("vector %d: wrong nonce opens", i+1)
		}
		if _, err := e.Open(nil, nonce, want, append(bytes.Clone(header), 0)); err == nil {
			t.Errorf("vector %d: wrong header opens", i+1)
		}
	}
}

// TestEAXLong covers messages over several blocks and block boundaries
// (the vectors stop at 21 bytes): open(seal(m)) = m, and the tag depends on
// every byte.
func TestEAXLong(t *testing.T) {
	block, _ := aes.NewCipher(bytes.Repeat([]byte{7}, 32))
	e, _ := newEAX(block)
	nonce := bytes.Repeat([]byte{9}, 16)
	for _, n := range []int{15, 16, 17, 31, 32, 33, 64, 1000} {
		m := make([]byte, n)
		for i := range m {
			m[i] = byte(i * 7)
		}
		s := e.Seal(nil, nonce, m, nil)
		if len(s) != n+16 {
			t.Fatalf("len %d: sealed %d bytes", n, len(s))
		}
		got, err := e.Open(nil, nonce, s, nil)
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("len %d: round trip failed: %v", n, err)
		}
		s[n-1] ^= 1
		if _, err := e.Open(nil, nonce, s, nil); err == nil {
			t.Fatalf("len %d: tampered last byte opens", n)
		}
	}
}
