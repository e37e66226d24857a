// Package planner is the bundled Planner, what `chopin planner` runs: an
// agent client of the chopin.agent.v1 connection that answers a document's
// turns with a model on an OpenAI-compatible server (Ollama, llama.cpp's
// server, LM Studio, vLLM or a hosted API).
//
// It is built on agentconn/client and knows nothing of the server's
// internals: it reads turns, streams parts and calls host tools exactly as
// any other client would, over the WebSocket. It must not import app, store,
// room, assets, echo or agentconn's server package; the import graph
// test holds it to agentconn/client, agentconn/wire (the protocol's message
// types and feature names), the standard library and a JSON Schema
// validator.
//
// The pieces:
//
//   - ModelServer speaks the small part of the OpenAI API a Planner needs:
//     GET /models, and POST /chat/completions with stream: true, read as
//     server-sent events.
//   - Planner.Handler runs each turn: the turn's instructions and prompt as
//     the system and user messages, its host tools as function tools, the
//     streamed completion as stream parts, the model's tool calls as host
//     tool calls whose results go back to the model, round after round until
//     the model answers without calling a tool (at most MaxRounds).
//   - A turn of an isolated session (a background job's, such as a
//     document's description) offers the model no tools and takes no
//     steers; a turn's responseFormat json becomes response_format
//     json_schema, or json_object with the answer checked against the
//     schema where the model server refuses a schema (jsonformat.go).
//   - Planner.Serve keeps one document's link attached: it reattaches with a
//     backoff when the link drops, resuming what the link kept (at once
//     after a restart, then every 250 ms inside its window), stops for good
//     on a refusal (except unavailable), and detaches when its context ends.
//   - The optional features it asks for (features.go): its catalog of the
//     model server's models, a turn's attachments as image and text parts,
//     and steers read at a turn's next round.
//
// The API key is sent only as the model server's bearer and never logged,
// nor is the agent token.
package planner
