// Package assistants holds assistants: a named, configured use of a graph
// (reference API §3), their versions, and the catalog of graphs they may
// name.
//
// # Assistants and versions
//
// The assistants row is the current state of an assistant; every state it
// ever had is an immutable row of assistant_versions. Create writes version
// 1; PATCH writes max(version) + 1 and makes it current (metadata merged
// shallowly into the current one, the other given fields replacing theirs);
// POST /assistants/{id}/latest copies an existing version back into the
// assistants row. Writers lock the assistants row first, so version numbers
// never collide.
//
//	create ──► v1 (current) ──PATCH──► v2 (current) ──latest{1}──► v1 (current)
//	                                                  ──PATCH────► v3 (current)
//
// config.configurable and context are kept mirrored, as the Agent Server
// does: whichever of the two is given non-empty is copied to the other, and
// giving both non-empty and different is a 400.
//
// # System assistants and the graph-name alias
//
// Every registered graph has a system assistant, id uuid5(6ba7b821-9dad-
// 11d1-80b4-00c04fd430c8, graph_id) (reference §1.2), created at start.
// Every /assistants/{id} route and every run accepts a graph name instead
// of an assistant id and means that system assistant.
//
// # Runs
//
// A run uses its assistant's config, context and version as they are when
// the run is created: the run's INSERT reads the assistants row itself
// (package runs), merges the assistant's config under the run's config
// (configurable merged one level deep) and its context under the run's
// context, and records assistant_version in the run's kwargs, so later
// edits of the assistant do not change a queued run. ResolveRef caches an
// assistant's graph; that INSERT only succeeds while the assistant still
// exists with that graph, and a run that finds it changed drops the cache
// entry and resolves again (a deleted assistant is a 404).
//
// # Graph catalog
//
// The graphs table lists every graph an assistant may name, with its
// drawing (GET /assistants/{id}/graph), its JSON Schemas (…/schemas) and
// its subgraphs (…/subgraphs). The server upserts its built-in graphs at
// start (RegisterBuiltin); GraphUpsert is the one writer, for external
// workers registering their graphs later. SubgraphSchemas, which a worker
// registers and GET /assistants/{id}/subgraphs answers, is an alias of
// wire.SubgraphSchemas: the worker protocol is a leaf package, so the
// shape is declared there; its schema keeps the name
// assistants.SubgraphSchemas.
package assistants
