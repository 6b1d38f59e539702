// Package mcp serves /mcp: Weft's assistants as the tools of a Model
// Context Protocol server, over the Streamable HTTP transport, so that an
// MCP client (Claude Desktop, Cursor, LangChain's MCP adapters, the
// official TypeScript and Python SDKs) can call them.
//
// # Protocol
//
// The transport and the protocol (initialize and version negotiation,
// ping, JSON-RPC framing and errors, JSON and SSE responses) are the
// official Go SDK's (github.com/modelcontextprotocol/go-sdk), run
// stateless: every POST carries one message and is answered on its own
// (its JSON-RPC envelope checked first, checkEnvelope: what api/openapi.yaml
// states), no Mcp-Session-Id is issued, and GET (a server-to-client
// stream) and DELETE (ending a session) are 405, as the specification lets
// a server without sessions answer (the router serves only POST /mcp, so
// they are its 405, with Allow: POST). Stateless is what Weft's replicas need (any replica
// answers any request; nothing lives in one process's memory) and what the
// official LangGraph server does; the SDK also serves the sessionless
// protocol revision (2026-07-28) only in this mode. A tools/call is
// answered as an SSE stream (so that progress notifications can flow while
// the run executes, and the connection is not idle), every other request
// as one JSON body.
//
// # Tools
//
// The tools are read per request from the caller's tenant (auth.Tenant of
// the request's context, set by the router's authenticate middleware, as
// for every REST route): its own assistants and the shared system ones.
// The SDK's receiving middleware answers tools/list and tools/call from
// them; nothing is registered on the SDK server, so a created, renamed or
// deleted assistant is seen by the next request on every replica.
//
//   - name: the assistant's name made a valid tool name
//     (^[A-Za-z0-9_.-]{1,128}$: whitespace runs to "_", other characters
//     dropped), as the official server makes it. Where an older assistant
//     of the tenant already holds the name, "-" and the first 8 hex digits
//     of the assistant id are appended (the official server lists only the
//     first); the oldest keeps the plain name, so names are stable.
//   - title: the assistant's name; description: its description, or a
//     sentence naming it and its graph.
//   - inputSchema: the graph's input schema (an object schema; {"type":
//     "object"} when the graph has none usable). A property that is a list
//     of chat messages becomes a string, the user's message, as on the
//     official server: the messages reducer reads a string as a human
//     message.
//   - _meta: weft.dev/assistant_id and weft.dev/graph_id.
//
// tools/list pages in tool-name order, DefaultPageSize a page; the cursor
// is the last name of the page (opaque to clients), so a page does not
// shift when tools are created or deleted before it. A bad cursor is a
// JSON-RPC invalid-params error.
//
// # Calls
//
// tools/call creates a stateless run (runs.Service.Create with a nil
// thread: a temporary thread, deleted after the result is read) of the
// tool's assistant, with the arguments as its input and metadata
// {"mcp_tool": name}, and waits for it (runs.Service.Join) as POST
// /runs/wait does: the same dispatch, workers, storage, streams and UI as
// every run; there is no second execution path. The result is the run's
// output (/runs/wait's body): an object is the structured content (any
// other value is put under "result") and its JSON the text content.
//
// Errors:
//
//   - a run that fails ({"__error__": …}), arguments that are not an object,
//     and input or a request the run creation refuses (a 4xx of the REST
//     API) are tool results with isError and the error's text, which a model
//     can read and correct;
//   - an unknown tool name or a bad cursor is a JSON-RPC invalid-params
//     error; a failure of the server a JSON-RPC internal error without
//     detail (the detail is logged);
//   - a malformed message, a wrong Content-Type or Accept, GET and DELETE
//     are the SDK's HTTP errors (400, 415, 405), their text put in Weft's
//     {"detail"} body (detailWriter), never a 5xx.
//
// The client going away (or cancelling the request) cancels the run
// (on_disconnect: cancel). A request carrying a progressToken hears a
// progress notification every 5 s while the run executes.
//
// # Auth and tenants
//
// The route sits behind the router's authenticate middleware and needs the
// assistants scope (listing is a search of assistants); a tools/call also
// needs the threads scope and is put to an embedding program's authorize
// hook as ("threads", "create_run"), as POST /runs/wait is. Without a
// credential, with auth on, the answer is the router's 401 before any MCP
// handling. A tenant sees and calls only its own assistants and the shared
// ones: another tenant's assistant is an unknown tool.
package mcp
