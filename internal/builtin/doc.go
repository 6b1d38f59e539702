// Package builtin holds the example graphs every Weft server registers
// when it is given no graphs of its own, and which the test suites (Go
// and the official JS SDK's) run against. They are written against the
// public graph package only, like any user's graph, so every server test
// exercises that API; they live here rather than in graph/ so that the
// public package carries no test fixtures.
//
// Graphs returns a Registry with:
//
//	foo_bar    foo (last value), bar (append, default []);
//	           START → node_a → node_b → END; {foo:""} ends at {foo:"b", bar:["a","b"]}
//	echo_chat  messages; START → echo → END; echo appends an ai message
//	           "echo: <text of the last human message>", streamed word by word
//	hitl       input, answer, result; START → prepare → ask → finish → END;
//	           ask interrupts with {question:"approve?", input}; resumed with R
//	           the run ends with result = input + ":" + R (non-string R JSON-encoded)
//	hitl_chat  messages; START → review → END; review drafts "echo: <text>" and
//	           interrupts with {question: "Send the reply \"echo: <text>\"? (yes/no)", draft};
//	           resumed with yes/y it appends the draft as an ai message, else "Reply not sent."
//	slow       ms (default 1000), tag, log (append); START → first → second → END;
//	           each node sleeps ms (cancellable) and appends "first:<tag>" / "second:<tag>"
package builtin
