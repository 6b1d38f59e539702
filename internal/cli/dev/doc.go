// Package dev is `weft dev --config langgraph.json`: it reads a LangGraph
// project's langgraph.json as `langgraph dev` and `langgraphjs dev` do and
// serves the project with nothing but the weft binary and the project's own
// packages. Only the weft
// binary has it (cmd/server passes Run to cli.Main); a program serving its
// own Go graphs (weft.Main) does not.
//
// It is cli.Serve with the project loaded into the config before the
// server starts (dev.go) and the workers supervised while it serves:
//
//   - The JS graphs run in the JS worker (worker-js, embedded in the binary
//     by package workerjs and unpacked into the project's node_modules),
//     started with the system's node; the Python graphs in the Python
//     worker (worker-py, package workerpy), started with the project's
//     interpreter (python.go). A worker that dies is restarted with
//     backoff; SIGINT or SIGTERM stops the workers (their runs given back)
//     and then the server.
//   - langgraph.json's auth.path is served by the worker of its language on
//     a unix socket and asked per request (package projectauth); its
//     http.app and ui are put in front of the API (package projecthttp);
//     store.index and its embed function, checkpointer.ttl and store.ttl
//     (ttl.go) configure the server as LangGraph's do.
//
// The tests start the real binary on the projects in testdata, with
// worker-js's node_modules and the Python suites' virtualenv
// (WEFT_TEST_PYTHON).
package dev
