"""Writes langgraph_blobs.txt: values sealed the way LangGraph's
EncryptedSerializer.from_pycryptodome_aes seals them (type + "+aes",
blob = nonce(16) || tag(16) || ciphertext, AES-EAX, no header, key = the
LANGGRAPH_AES_KEY text as bytes), computed by an EAX built here from the
`cryptography` package's CMAC and AES-CTR: an implementation that shares
nothing with Weft's Go code. Run: python3 langgraph_blobs.py > langgraph_blobs.txt
Each line: key, type, plaintext (hex), sealed blob (hex)."""
from cryptography.hazmat.primitives.cmac import CMAC
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def omac(key, t, m):
    c = CMAC(algorithms.AES(key))
    c.update(bytes(15) + bytes([t]) + m)
    return c.finalize()


def seal(key, nonce, msg):
    n, h = omac(key, 0, nonce), omac(key, 1, b"")
    enc = Cipher(algorithms.AES(key), modes.CTR(n)).encryptor()
    ct = enc.update(msg) + enc.finalize()
    c = omac(key, 2, ct)
    tag = bytes(a ^ b ^ d for a, b, d in zip(n, h, c))
    return nonce + tag + ct


cases = [
    # A JSON blob as the JS/Weft savers write it.
    ("0123456789abcdef", "json", b'{"messages":[{"type":"human","content":"hello from langgraph"}]}', bytes(range(16))),
    # A msgpack blob as the Python saver writes it: {"marker": "plain-in-msgpack"}.
    ("0123456789abcdef0123456789abcdef", "msgpack", bytes.fromhex("81a66d61726b6572b0706c61696e2d696e2d6d73677061636b"), bytes(range(16, 32))),
    # A 24-byte key, an empty plaintext.
    ("abcdefghijklmnopqrstuvwx", "json", b"", bytes(16)),
]
for key, typ, msg, nonce in cases:
    print(key, typ + "+aes", msg.hex() or "-", seal(key.encode(), nonce, msg).hex())
