package workerapi

import (
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/wire"
)

// serializedValues replaces the values a worker serialized itself (channel
// values of its checkpoints and its pending writes, sent as
// {"lc": 2, "type": "serialized", "serde": "msgpack", "blob": "<base64>"})
// by serde.Typed, which the store keeps as they are, under their own type
// (LangGraph's Python PostgresSaver's rows exactly). Any type but msgpack,
// json, bytes, bytearray and null ("pickle") is refused, naming it and
// where it was, as is a blob that does not decode: nothing is committed.
func serializedValues(req *wire.CommitRequest) error {
	for i := range req.Checkpoints {
		c := &req.Checkpoints[i]
		for ch, v := range c.Checkpoint.ChannelValues {
			t, ok, err := serde.ParseSerialized(v)
			if err != nil {
				return apperr.Errorf(apperr.Invalid, "Checkpoint %s channel %q: %v", c.Checkpoint.ID, ch, err)
			}
			if ok {
				c.Checkpoint.ChannelValues[ch] = t
			}
		}
	}
	for i := range req.Writes {
		b := &req.Writes[i]
		for j := range b.Writes {
			w := &b.Writes[j]
			t, ok, err := serde.ParseSerialized(w.Value)
			if err != nil {
				return apperr.Errorf(apperr.Invalid, "Write of task %s to channel %q: %v", w.TaskID, w.Channel, err)
			}
			if ok {
				w.Value = t
			}
		}
	}
	return nil
}
