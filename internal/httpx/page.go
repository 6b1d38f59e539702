package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// ArrayPage builds a JSON array response item by item in memory: a handler
// can end a page once it passes a size cap (Len), and an error half-way
// still gets a proper status because nothing is written before Write.
type ArrayPage struct {
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

// Add appends v to the array and returns the page's size in bytes after it
// (to compare with a cap: the item that passes the cap ends the page).
func (p *ArrayPage) Add(v any) (size int, err error) {
	if p.enc == nil {
		p.buf.WriteByte('[')
		p.enc = json.NewEncoder(&p.buf)
	} else {
		p.buf.WriteByte(',')
	}
	p.n++
	if a, ok := v.(Appender); ok {
		b, err := a.AppendJSON(p.buf.AvailableBuffer())
		if err != nil {
			return p.buf.Len(), err
		}
		p.buf.Write(b)
		p.buf.WriteByte('\n') // as the encoder ends each item
		return p.buf.Len(), nil
	}
	err = p.enc.Encode(v)
	return p.buf.Len(), err
}

// Len is the size of the encoded items so far, in bytes.
func (p *ArrayPage) Len() int { return p.buf.Len() }

// Count is how many items were added.
func (p *ArrayPage) Count() int { return p.n }

// Write sends the array with status 200 (headers such as pagination must
// be set before).
func (p *ArrayPage) Write(w http.ResponseWriter) {
	if p.enc == nil {
		p.buf.WriteByte('[')
	}
	p.buf.WriteString("]\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = p.buf.WriteTo(w)
}
