package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/postgres"
)

// JSON-RPC and A2A error codes.
const (
	codeParseError              = -32700
	codeInvalidRequest          = -32600
	codeMethodNotFound          = -32601
	codeInvalidParams           = -32602
	codeInternal                = -32603
	codeTaskNotFound            = -32001
	codeTaskNotCancelable       = -32002
	codeUnsupportedOperation    = -32004
	codeContentTypeNotSupported = -32005
	codeVersionNotSupported     = -32009
)

// RPCError is a JSON-RPC error object: a JSON-RPC code (-32700 parse
// error, -32600 invalid request, -32601 method not found, -32602 invalid
// params, -32603 internal) or an A2A one (-32001 task not found, -32002
// task not cancelable, -32004 unsupported operation, -32005 content type
// not supported, -32009 version not supported).
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return e.Message }

func errInvalidParams(msg string) *RPCError { return &RPCError{Code: codeInvalidParams, Message: msg} }

// rpcErr maps an error of a method to its JSON-RPC error (nil: none): an
// RPCError as it is; a client's mistake the run services found (bad input,
// an unknown or foreign context, a busy thread) as InvalidParams with
// their message; anything else as InternalError, logged, its detail kept
// from the client.
func (h *Handlers) rpcErr(ctx context.Context, err error) *RPCError {
	if err == nil {
		return nil
	}
	var re *RPCError
	if errors.As(err, &re) {
		return re
	}
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code != apperr.Unavailable {
		return errInvalidParams(ae.Message)
	}
	if ctx.Err() == nil {
		if postgres.IsUnavailable(err) {
			return &RPCError{Code: codeInternal, Message: "Database unavailable: retry"}
		}
		h.log.ErrorContext(ctx, "a2a", "error", err)
	}
	return &RPCError{Code: codeInternal, Message: "Internal error"}
}

// writeRPC answers a JSON-RPC request: result, or e (HTTP 200 either way,
// as JSON-RPC over HTTP does).
func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, e *RPCError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := Response{JSONRPC: "2.0", ID: id}
	if e != nil {
		resp.Error = e
	} else {
		resp.Result = result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(resp)
}
