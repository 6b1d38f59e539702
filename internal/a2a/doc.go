// Package a2a serves the A2A (Agent2Agent) protocol for assistants whose
// graph has a messages channel, as LangGraph's Agent Server does: the agent
// card at GET /.well-known/agent-card.json?assistant_id=… and a JSON-RPC
// 2.0 endpoint at POST /a2a/{assistant_id}. It is a view over runs and
// threads: it owns no table, starts runs through package runs (the same
// validation, dispatch, storage and UI as the REST API), waits for them
// with runs.Service.Join and streams them from the durable event log
// (package stream). No second execution path.
//
// # Versions
//
// A2A v1.0 clients send A2A-Version: 1.0 and the methods SendMessage,
// SendStreamingMessage, GetTask and CancelTask; v0.3 clients send
// message/send, message/stream, tasks/get and tasks/cancel (and no version
// header, or 0.3). The method's name decides the shapes of the answer:
// v1.0's protobuf JSON (TASK_STATE_COMPLETED, ROLE_AGENT, parts told apart
// by their field, {"task": …} / {"statusUpdate": …} / {"artifactUpdate":
// …} wrappers) or v0.3's (kind fields, "completed", "agent"). The agent
// card carries the fields of both (supportedInterfaces with a 1.0 and a
// 0.3 JSON-RPC interface; url, preferredTransport and protocolVersion), so
// either SDK finds the endpoint and picks its version.
//
// # Mapping
//
//	A2A context id  = thread id (a UUID; created on first use, a new thread when absent)
//	A2A task id     = run id (each message is a run; every A2A conversation is in the REST API and the UI)
//	text parts      → one human message {type: human, content: the texts joined by newlines, id: messageId}
//	data parts      → their JSON text in that message (or, alone, the resume value)
//	file parts      → ContentTypeNotSupported (-32005)
//	answer          = the AI message that ends the thread's messages, as the artifact "Assistant Response"
//	                  (its id = the message's id) and as the agent's message in the task's history
//
// Task states, from the run:
//
//	pending                          → submitted
//	running                          → working
//	success                          → completed
//	success, paused on an interrupt  → input-required (status message: the interrupt's question)
//	error, timeout                   → failed (status message: the error)
//	interrupted (cancelled)          → canceled
//
// A message on a context whose thread is interrupted resumes it: the run's
// command is {resume: the message's text} (or its one data part). The
// resumed work is a new run, so a new task id.
//
// # Methods
//
//	SendMessage      start the run, wait for its end (returnImmediately / blocking false: answer at once), the task
//	SendStreaming…   SSE, each event a JSON-RPC response: task, working, artifact chunks (append) as the run
//	                 streams AI message chunks, then the whole answer (lastChunk) and the final status
//	GetTask          the task of a run of this assistant (another assistant's, or tenant's: TaskNotFound)
//	CancelTask       cancel the run (action interrupt) and wait up to 10 s for it to stop; a finished task is
//	                 TaskNotCancelable
//	SubscribeToTask  SSE of a task that has not ended, as SendStreamingMessage's from the task on; an ended
//	                 task is UnsupportedOperation
//	others           UnsupportedOperation (push notifications, ListTasks, the extended card); unknown methods
//	                 MethodNotFound
//
// Errors of the JSON-RPC layer are HTTP 200 with an error object. What is
// not a JSON-RPC matter is a plain HTTP error with {"detail"}: an unknown
// assistant (404), an assistant without a messages channel (400), a body
// over the limit (413), and the auth middleware's 401 / 403.
//
// # Auth and tenants
//
// Both routes sit behind the same authentication as the REST API; the
// endpoint needs the tenant data scope. Assistants, runs and threads are
// read and created through the tenant-scoped stores, so a caller sees only
// its tenant's assistants (and the shared system ones), and another
// tenant's task is TaskNotFound.
package a2a
