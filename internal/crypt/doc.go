// Package crypt is Weft's encryption at rest, in the format of LangGraph's
// EncryptedSerializer.from_pycryptodome_aes, so that rows written by
// LangGraph with the same LANGGRAPH_AES_KEY are read by Weft and the
// reverse.
//
// # Format
//
// A serialized value (type, bytes) becomes (type+"+aes", nonce‖tag‖ciphertext):
// AES in EAX mode (Bellare, Rogaway, Wagner), a fresh random 16-byte nonce
// per value, a 16-byte tag, no header. The key is the text of
// LANGGRAPH_AES_KEY taken as bytes (16, 24 or 32 of them: AES-128, -192 or
// -256), exactly as LangGraph reads it. Reading splits the type at its
// first "+": the part after it names the cipher, and only "aes" is known.
// A type without "+" is plaintext and passes through, so a database can
// hold rows from before encryption was turned on.
//
// EAX is not in Go's standard library; eax.go builds it from crypto/aes,
// CTR and an OMAC (CMAC) of the nonce, header and ciphertext, and is
// tested against the vectors published with the mode.
//
// jsonb columns (run inputs, run events, store values, the thread's values
// projection) hold an encrypted JSON document as the object
// {"__weft_aes__": "<base64 of nonce‖tag‖ciphertext>"}: the column stays
// jsonb (no schema change, plaintext rows stay readable), and SQL that
// looks inside such a value sees only the envelope, which is why searches
// by those values are refused while encryption is on.
//
// # Keys and rotation
//
// A Keyring holds the current key, which seals, and older keys
// (WEFT_AES_OLD_KEYS), which are tried in order when opening: the EAX tag
// tells which key a value was sealed with. Reseal / ResealJSON rewrite a
// value under the current key; `weft reencrypt` applies them to a whole
// database.
//
// Hash is a keyed hash (HMAC-SHA256 under a key derived from the current
// key) for stores that deduplicate by content: with encryption on a plain
// hash of a value would let a reader of the database confirm a guessed
// plaintext.
//
// # Where the keyring travels
//
// The server puts its keyring on the context of every request and
// background loop (WithKeyring); the stores find it with FromContext.
// That keeps the many store functions' signatures as they are; a context
// without a keyring means encryption is off.
package crypt
